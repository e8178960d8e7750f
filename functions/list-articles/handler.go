package main

import (
	"context"
	"net/http"

	"stampduty/shared/catalogue"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// lister is the public list workflow (catalogue.Lister), as the handler
// calls it.
type lister interface {
	List(ctx context.Context, l strapiquery.List) ([]stampduty.Article, int, error)
}

// handler translates GET /api/stamp-duty-datas to the list workflow and
// its page back to HTTP.
type handler struct {
	articles lister
}

// listResponse is the article list: data and meta.pagination.
type listResponse struct {
	Data any  `json:"data"`
	Meta meta `json:"meta"`
}

type meta struct {
	Pagination strapiquery.PageBlock `json:"pagination"`
}

// routes answers GET with the requested page.
func (h *handler) routes() http.Handler { return function.Route(http.MethodGet, h.list) }

// list answers with the page the query asks for (catalogue.ListSpec), each
// article with the fields it names.
func (h *handler) list(r *http.Request) (listResponse, error) {
	l, err := strapiquery.ParseList(r.URL.RawQuery, catalogue.ListSpec)
	if err != nil {
		return listResponse{}, err
	}
	page, total, err := h.articles.List(r.Context(), l)
	if err != nil {
		return listResponse{}, err
	}
	data, err := strapiquery.Select(page, l.Fields)
	if err != nil {
		return listResponse{}, err
	}
	return listResponse{Data: data, Meta: meta{Pagination: l.Paging.Block(total)}}, nil
}
