package main

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"

	"stampduty/shared/function"
	"stampduty/shared/rules"
	"stampduty/shared/strapi"
)

// handler lists the articles.
type handler struct {
	articles interface {
		All(ctx context.Context) ([]rules.Article, error)
	}
}

// listResponse is the article list: data and meta.pagination.
type listResponse struct {
	Data []rules.Article `json:"data"`
	Meta meta            `json:"meta"`
}

type meta struct {
	Pagination strapi.Pagination `json:"pagination"`
}

// sortable are the fields the list can be sorted by.
var sortable = []string{"id", "purpose_name", "state", "min", "max", "fixed"}

// routes answers GET with the requested page.
func (h *handler) routes() http.Handler { return function.Route(http.MethodGet, h.list) }

// knownParam reports the query parameters of the article list.
func knownParam(k string) bool {
	return k == "pagination[page]" || k == "pagination[pageSize]" || strapi.IsSortKey(k)
}

// list answers with the requested page of the sorted catalogue. The
// catalogue is small and cached whole, so sorting and slicing happen here.
func (h *handler) list(r *http.Request) (listResponse, error) {
	q, page, size, err := function.ListQuery(r, knownParam, "pagination[page]", "pagination[pageSize]")
	if err != nil {
		return listResponse{}, err
	}
	keys, err := q.Sort(sortable)
	if err != nil {
		return listResponse{}, err
	}
	all, err := h.articles.All(r.Context())
	if err != nil {
		return listResponse{}, err
	}
	sorted := slices.Clone(all)
	slices.SortStableFunc(sorted, func(a, b rules.Article) int {
		for _, k := range keys {
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
	data := []rules.Article{}
	if start := (page - 1) * size; start < len(sorted) {
		data = sorted[start:min(start+size, len(sorted))]
	}
	return listResponse{Data: data, Meta: meta{Pagination: strapi.NewPagination(page, size, len(sorted))}}, nil
}

// compare orders two articles by one field. A missing fixed amount sorts
// after every amount, as NULL does in PostgreSQL.
func compare(a, b rules.Article, field string) int {
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
