package main

import (
	"context"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// handler answers with one of the caller's orders.
type handler struct {
	auth   *auth.Authenticator
	orders interface {
		Get(ctx context.Context, owner, doc string) (stampduty.Order, error)
	}
}

// orderResponse is one order: {"data": <Order>, "meta": {}}.
type orderResponse struct {
	Data stampduty.Order `json:"data"`
	Meta struct{}        `json:"meta"`
}

// routes answers GET /api/live-orders/{documentId}.
func (h *handler) routes() http.Handler {
	return function.Routes(function.Path{Method: http.MethodGet, Pattern: "/api/live-orders/{documentId}", Serve: function.AsCaller(h.auth, h.get)})
}

// get answers with the order: the caller's only (another caller's order is
// not found), whatever the query says but mode (function.CheckMode, before
// any read); the owner comes from the token.
func (h *handler) get(r *http.Request, owner string) (any, error) {
	if err := function.CheckMode(r, owner); err != nil {
		return nil, err
	}
	o, err := h.orders.Get(r.Context(), owner, r.PathValue("documentId"))
	if err != nil {
		return nil, err
	}
	return orderResponse{Data: o}, nil
}
