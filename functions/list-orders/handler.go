package main

import (
	"context"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// handler lists the caller's orders.
type handler struct {
	auth   *auth.Authenticator
	orders interface {
		Slice(ctx context.Context, owner string, start, limit int) ([]stampduty.Order, int, error)
		ByDocuments(ctx context.Context, owner string, docs []string) ([]stampduty.Order, error)
	}
	files orders.Files
}

// listResponse is the order list: data and, at the top level, pagination.
type listResponse struct {
	Data       any                   `json:"data"`
	Pagination strapiquery.PageBlock `json:"pagination"`
}

// spec is what the list accepts: its one order (createdAt:desc), its
// scalar fields (fulfillments, stamp duty and the cancellation always
// come), and page and pageSize at the top level.
var spec = strapiquery.ListSpec{Sortable: []string{"createdAt"}, Fields: []string{"createdAt", "updatedAt", "cancelledAt", "livemode"}, TopLevelPage: true}

// always are the fields an order keeps whatever fields says: a cancelled
// order is known as one in every answer (papers.md: it "carries
// cancelledAt and cancellation" in lists and reads), and every order says
// its mode (test-mode.md: livemode "on every order"), so naming livemode
// in fields is accepted and changes nothing.
var always = []string{"live_order_fulfillments", "stamp_duty", "cancelledAt", "cancellation", "livemode"}

// routes answers GET with the requested page.
func (h *handler) routes() http.Handler {
	return function.Route(http.MethodGet, function.AsCaller(h.auth, h.list))
}

// list answers with the requested page of the caller's orders: only the
// caller's, whatever the query says, since the owner comes from the token.
// With a documentId filter it reads only the orders named. mode is
// checked first (function.CheckMode): the other mode's list is refused,
// not answered empty.
func (h *handler) list(r *http.Request, owner string) (listResponse, error) {
	if err := function.CheckMode(r, owner); err != nil {
		return listResponse{}, err
	}
	l, err := strapiquery.ParseList(r.URL.RawQuery, spec)
	if err != nil {
		return listResponse{}, err
	}
	for _, k := range l.Sort {
		if !k.Desc {
			const msg = "The order list is sorted newest first only: sort=createdAt:desc"
			return listResponse{}, &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "sort", Message: msg}}}
		}
	}
	docs, filtered, err := strapiquery.DocumentIDs(l.Filters)
	if err != nil {
		return listResponse{}, err
	}
	var list []stampduty.Order
	var total int
	switch {
	case l.Draft:
		list = []stampduty.Order{}
	case filtered:
		found, err := h.orders.ByDocuments(r.Context(), owner, docs)
		if err != nil {
			return listResponse{}, err
		}
		list, total = strapiquery.PageOf(l.Paging, found), len(found)
	default:
		start, limit := l.Paging.Window()
		if list, total, err = h.orders.Slice(r.Context(), owner, start, limit); err != nil {
			return listResponse{}, err
		}
	}
	for i := range list {
		if list[i], err = orders.ForCaller(r.Context(), h.files, list[i]); err != nil {
			return listResponse{}, err
		}
	}
	data, err := strapiquery.Select(list, l.Fields, always...)
	if err != nil {
		return listResponse{}, err
	}
	return listResponse{Data: data, Pagination: l.Paging.Block(total)}, nil
}
