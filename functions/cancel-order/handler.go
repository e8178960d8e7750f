package main

import (
	"context"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// handler cancels one of the caller's orders.
type handler struct {
	auth   *auth.Authenticator
	orders interface {
		Cancel(ctx context.Context, owner, doc string) (stampduty.Order, error)
	}
}

// routes answers DELETE /api/live-orders/{documentId}.
func (h *handler) routes() http.Handler {
	return function.Routes(function.Path{Method: http.MethodDelete, Pattern: "/api/live-orders/{documentId}", Serve: function.AsCaller(h.auth, h.cancel)})
}

// cancel cancels the order for the owner of the token (another caller's
// order is not found, as for the one-order read) and answers as Strapi
// v5's delete does: 204 No Content, no body (function.NoContent), which
// @strapi/client's collection(...).delete(id) resolves with. A second
// cancel answers the same; a refusal is an error in the envelope (409 once
// a paper moved).
func (h *handler) cancel(r *http.Request, owner string) (any, error) {
	if _, err := h.orders.Cancel(r.Context(), owner, r.PathValue("documentId")); err != nil {
		return nil, err
	}
	return function.NoContent{}, nil
}
