package main

import (
	"context"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/rules"
	"stampduty/shared/strapi"
)

// handler lists the caller's orders.
type handler struct {
	auth   *auth.Authenticator
	orders interface {
		Page(ctx context.Context, owner string, page, size int) ([]rules.Order, int, error)
	}
	files orders.Files
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
	list, total, err := h.orders.Page(r.Context(), owner, page, size)
	if err != nil {
		return listResponse{}, err
	}
	for i := range list {
		if list[i], err = orders.ForCaller(r.Context(), h.files, list[i]); err != nil {
			return listResponse{}, err
		}
	}
	return listResponse{Data: list, Pagination: strapi.NewPagination(page, size, total)}, nil
}
