package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/jsonobj"
	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// handler answers the caller's webhook routes.
type handler struct {
	auth  *auth.Authenticator
	hooks interface {
		Register(ctx context.Context, owner string, reg webhooks.Registration) (webhooks.Registered, error)
		List(ctx context.Context, owner string) ([]webhooks.Webhook, error)
		Delete(ctx context.Context, owner, doc string) (webhooks.Webhook, error)
		Deliveries(ctx context.Context, owner, doc string) ([]webhooks.Attempt, error)
		Redeliver(ctx context.Context, owner, eventID string) (webhooks.Redelivered, error)
	}
}

// response is {"data": …, "meta": {}}.
type response[T any] struct {
	Data T        `json:"data"`
	Meta struct{} `json:"meta"`
}

// routes answers the five webhook routes, each for the token's owner.
func (h *handler) routes() http.Handler {
	return function.Routes(
		function.Path{Method: http.MethodPost, Pattern: "/api/webhooks", Serve: function.AsCaller(h.auth, h.register)},
		function.Path{Method: http.MethodGet, Pattern: "/api/webhooks", Serve: function.AsCaller(h.auth, h.list)},
		function.Path{Method: http.MethodDelete, Pattern: "/api/webhooks/{documentId}", Serve: function.AsCaller(h.auth, h.delete)},
		function.Path{Method: http.MethodGet, Pattern: "/api/webhooks/{documentId}/deliveries", Serve: function.AsCaller(h.auth, h.deliveries)},
		function.Path{Method: http.MethodPost, Pattern: "/api/webhook-events/{eventId}/redeliver", Serve: function.AsCaller(h.auth, h.redeliver)},
	)
}

// register reads {"url": "…", "events": ["…", …], "format": "…"} (format
// optional; no other member) and registers it; the answer shows the
// secret, once.
func (h *handler) register(r *http.Request, owner string) (any, error) {
	body, err := function.ReadJSONBody(r)
	var members []jsonobj.Member
	if err == nil {
		members, err = function.DecodeObject(body)
	}
	if err != nil {
		return nil, err
	}
	var (
		reg      webhooks.Registration
		bad      []stampduty.FieldError
		has      = map[string]bool{}
		rawFirst struct {
			Events []json.RawMessage `json:"events"`
		}
	)
	for _, m := range members {
		has[m.Key] = true
		switch {
		case m.Key == "url" && m.Value.Kind == jsonobj.String:
			reg.URL = m.Value.Text
		case m.Key == "url":
			bad = append(bad, stampduty.FieldError{Path: "url", Message: "url must be a string"})
		case m.Key == "format" && m.Value.Kind == jsonobj.String && m.Value.Text != "":
			reg.Format = m.Value.Text // the registry checks the value
		case m.Key == "format": // not a string, or "" (which is not the default's absence)
			bad = append(bad, stampduty.FieldError{Path: "format", Message: webhooks.FormatRule})
		case m.Key == "events" && m.Value.Kind != jsonobj.Array:
			bad = append(bad, stampduty.FieldError{Path: "events", Message: "events must be an array of event types"})
		case m.Key != "events":
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of a webhook"})
		}
	}
	if err := stampduty.Required(bad, has, "url", "events"); err != nil {
		return nil, err
	}
	// DecodeObject found one events member, an array: read its elements.
	if err := json.Unmarshal(body, &rawFirst); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("read events: %w", err))
	}
	for i, e := range rawFirst.Events {
		var s string
		if err := json.Unmarshal(e, &s); err != nil {
			bad = append(bad, stampduty.FieldError{Path: "events", Message: fmt.Sprintf("events[%d] must be a string", i)})
		}
		reg.Events = append(reg.Events, s)
	}
	if bad != nil {
		return nil, stampduty.Invalid(bad)
	}
	return answer(h.hooks.Register(r.Context(), owner, reg))
}

// answer is v in the envelope, or err.
func answer[T any](v T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return response[T]{Data: v}, nil
}

// list answers with the caller's webhooks, without their secrets; a
// mode other than the token's is refused first (function.CheckMode): a
// caller's test and live webhooks are two worlds, as its orders are.
func (h *handler) list(r *http.Request, owner string) (any, error) {
	if err := function.CheckMode(r, owner); err != nil {
		return nil, err
	}
	return answer(h.hooks.List(r.Context(), owner))
}

// delete deletes one of the caller's webhooks and answers with it.
func (h *handler) delete(r *http.Request, owner string) (any, error) {
	return answer(h.hooks.Delete(r.Context(), owner, r.PathValue("documentId")))
}

// deliveries answers with the newest attempts of one of the caller's
// webhooks; a mode other than the token's is refused first, as by list.
func (h *handler) deliveries(r *http.Request, owner string) (any, error) {
	if err := function.CheckMode(r, owner); err != nil {
		return nil, err
	}
	return answer(h.hooks.Deliveries(r.Context(), owner, r.PathValue("documentId")))
}

// redeliver makes an event of the caller's due again: 202.
func (h *handler) redeliver(r *http.Request, owner string) (any, error) {
	out, err := answer(h.hooks.Redeliver(r.Context(), owner, r.PathValue("eventId")))
	if err != nil {
		return nil, err
	}
	return function.Status{Code: http.StatusAccepted, Body: out}, nil
}
