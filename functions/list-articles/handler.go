package main

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// handler lists the articles.
type handler struct {
	articles interface {
		All(ctx context.Context) ([]stampduty.Article, error)
	}
}

// listResponse is the article list: data and meta.pagination.
type listResponse struct {
	Data any  `json:"data"`
	Meta meta `json:"meta"`
}

type meta struct {
	Pagination strapiquery.PageBlock `json:"pagination"`
}

// spec is what the list accepts: sort fields, and every catalogue field
// for fields.
var spec = strapiquery.ListSpec{
	Sortable: []string{"id", "purpose_name", "state", "min", "max", "fixed"},
	Fields: []string{"purpose_name", "state", "min", "max", "fixed",
		"toFollowConsiderationPrice", "amountPercentConsideration"},
}

// routes answers GET with the requested page.
func (h *handler) routes() http.Handler { return function.Route(http.MethodGet, h.list) }

// list answers with the requested page of the catalogue as Strapi
// would: filtered, then sorted, then paged, total counting the filtered
// articles. The catalogue is small and cached whole, so all of it happens
// here.
func (h *handler) list(r *http.Request) (listResponse, error) {
	l, err := strapiquery.ParseList(r.URL.RawQuery, spec)
	if err != nil {
		return listResponse{}, err
	}
	f, err := strapiquery.Compile(l.Filters, strapiquery.ArticleFields)
	if err != nil {
		return listResponse{}, err
	}
	all, err := h.articles.All(r.Context())
	if err != nil {
		return listResponse{}, err
	}
	sorted := f.Articles(all) // a new slice: the cached one keeps its order
	if l.Draft {
		sorted = sorted[:0]
	}
	slices.SortStableFunc(sorted, func(a, b stampduty.Article) int {
		for _, k := range l.Sort {
			c := compare(a, b, k.Field)
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	data, err := strapiquery.Select(strapiquery.PageOf(l.Paging, sorted), l.Fields)
	if err != nil {
		return listResponse{}, err
	}
	return listResponse{Data: data, Meta: meta{Pagination: l.Paging.Block(len(sorted))}}, nil
}

// compare orders two articles by one field. A missing fixed amount sorts
// after every amount, as NULL does in PostgreSQL.
func compare(a, b stampduty.Article, field string) int {
	switch field {
	case "id":
		return cmp.Compare(a.ID, b.ID)
	case "purpose_name":
		return strings.Compare(a.PurposeName, b.PurposeName)
	case "state":
		return strings.Compare(a.State, b.State)
	case "min":
		return cmp.Compare(a.Min, b.Min)
	case "max":
		return cmp.Compare(a.Max, b.Max)
	case "fixed":
		switch {
		case a.Fixed == nil && b.Fixed == nil:
			return 0
		case a.Fixed == nil:
			return 1
		case b.Fixed == nil:
			return -1
		}
		return cmp.Compare(*a.Fixed, *b.Fixed)
	}
	return 0
}
