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

// routes answers DELETE /api/live-orders/{documentId}, and anything else
// as function.Routes does (404 in the envelope; 405 with Allow for another
// method). function.Route answers every success with a JSON body, and a
// 204 has none: so this one route is served by hand, with the same
// pieces (Method, Budget, the caller's token, WriteError).
func (h *handler) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/api/live-orders/{documentId}", function.Method(http.MethodDelete, function.Budget(http.HandlerFunc(h.cancel))))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		function.WriteError(w, r, stampduty.Errorf(stampduty.ENOTFOUND, "Not Found"))
	}))
	return mux
}

// cancel cancels the order for the owner of the token (another caller's
// order is not found, as for the one-order read) and answers as Strapi
// v5's delete does: 204 No Content, no body, which @strapi/client's
// collection(...).delete(id) resolves with. A second cancel answers the
// same; a refusal is an error in the envelope (409 once a paper moved).
func (h *handler) cancel(w http.ResponseWriter, r *http.Request) {
	_, err := function.AsCaller(h.auth, func(r *http.Request, owner string) (stampduty.Order, error) {
		return h.orders.Cancel(r.Context(), owner, r.PathValue("documentId"))
	})(r)
	if err != nil {
		function.WriteError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
