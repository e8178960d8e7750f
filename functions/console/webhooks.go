package main

import (
	"context"
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/webhooks"
)

// failingWebhooks lists the webhooks whose deliveries keep failing
// (webhooks.Failures over the deliveries and webhooks tables).
type failingWebhooks func(ctx context.Context) ([]webhooks.Failing, error)

// failingMinAttempts is how many failed attempts put a waiting event in
// the list: one, as `stampctl webhooks failing` by default.
const failingMinAttempts = 1

// failingResponse is the body of GET /api/console/webhooks/failing: the
// list `stampctl webhooks failing --json` prints, in its fields.
type failingResponse struct {
	Data []webhooks.Failing `json:"data"`
	Meta struct{}           `json:"meta"`
}

// webhookRoutes are the failing webhooks' route, for an operator or an
// admin.
func (h *handler) webhookRoutes() []function.Path {
	return []function.Path{
		{Method: http.MethodGet, Pattern: "/api/console/webhooks/failing", Serve: staffauth.AsOperator(h.failingWebhooks)},
	}
}

// failingWebhooks answers what `stampctl webhooks failing` shows: each
// webhook with events waiting after a failed attempt, and each a
// receiver's 410 disabled, with its newest attempt; an empty list when
// none is failing.
func (h *handler) failingWebhooks(r *http.Request, _ string) (any, error) {
	list, err := h.failing(r.Context())
	if err != nil {
		return nil, err
	}
	return failingResponse{Data: list}, nil
}

// failures returns Failures over the deliveries and webhooks tables the
// environment names.
func failures(d function.Deps) failingWebhooks {
	jobs, hooks := d.Deliveries(d.Require("DELIVERIES_TABLE")), d.Webhooks(d.Require("WEBHOOKS_TABLE"))
	return func(ctx context.Context) ([]webhooks.Failing, error) {
		return webhooks.Failures(ctx, jobs, hooks, failingMinAttempts)
	}
}
