package main

import (
	"context"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/rules"
	"stampduty/shared/strapi"
)

// handler lists the caller's orders.
type handler struct {
	auth   *auth.Authenticator
	orders interface {
		Page(ctx context.Context, owner string, page, size int) ([]rules.Order, int, error)
	}
	files interface {
		Sign(ctx context.Context, o *rules.Order) error
	}
}

// listResponse is the order list: data and, at the top level, pagination.
type listResponse struct {
	Data       []rules.Order     `json:"data"`
	Pagination strapi.Pagination `json:"pagination"`
}

// routes answers GET with the requested page.
func (h *handler) routes() http.Handler {
	return function.Route(http.MethodGet, function.AsCaller(h.auth, h.list))
}

// knownParam reports the query parameters of the order list.
func knownParam(k string) bool { return k == "page" || k == "pageSize" }

// list answers with the requested page of the caller's orders: only the
// caller's, whatever the query says, since the owner comes from the token.
func (h *handler) list(r *http.Request, owner string) (listResponse, error) {
	_, page, size, err := function.ListQuery(r, knownParam, "page", "pageSize")
	if err != nil {
		return listResponse{}, err
	}
	orders, total, err := h.orders.Page(r.Context(), owner, page, size)
	if err != nil {
		return listResponse{}, err
	}
	// As the caller sees them: no operator identities, fresh file addresses.
	for i := range orders {
		orders[i] = orders[i].ForCaller()
		if err := h.files.Sign(r.Context(), &orders[i]); err != nil {
			return listResponse{}, err
		}
	}
	return listResponse{Data: orders, Pagination: strapi.NewPagination(page, size, total)}, nil
}
