package main

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// handler lists the articles.
type handler struct {
	articles snapshot
	sorts    sortCache
}

// snapshot is the published catalogue (store.SnapshotCache).
type snapshot interface {
	// Window returns the articles at positions [start, start+limit) in
	// the order of one sort field (stampduty.ArticleOrder), and how many there are,
	// without reading the others.
	Window(ctx context.Context, order string, start, limit int) ([]stampduty.Article, int, error)
	// All returns every article, the same slice while the catalogue is
	// unchanged; callers must not change it.
	All(ctx context.Context) ([]stampduty.Article, error)
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
// articles. A page with no filter in the order of one field (no sort: id),
// which the snapshot holds pre-sorted, is read on its own (Window); any
// other query filters the whole catalogue, sorted once per catalogue
// version and sort (sortCache).
func (h *handler) list(r *http.Request) (listResponse, error) {
	l, err := strapiquery.ParseList(r.URL.RawQuery, spec)
	if err != nil {
		return listResponse{}, err
	}
	f, err := strapiquery.Compile(l.Filters, strapiquery.ArticleFields)
	if err != nil {
		return listResponse{}, err
	}
	var (
		page  = []stampduty.Article{}
		total int
	)
	noFilter := len(l.Filters.Args) == 0 && (l.Filters.Op == "$and" || l.Filters.Op == "")
	order, presorted := presortedOrder(l.Sort)
	switch {
	case l.Draft:
		// there are no drafts: an empty list
	case noFilter && presorted:
		start, limit := l.Paging.Window()
		var arts []stampduty.Article
		if arts, total, err = h.articles.Window(r.Context(), order, start, limit); err != nil {
			return listResponse{}, err
		}
		page = append(page, arts...)
	default:
		all, err := h.articles.All(r.Context())
		if err != nil {
			return listResponse{}, err
		}
		sorted := h.sorts.sorted(all, l.Sort)
		if !noFilter {
			sorted = f.Articles(sorted) // a new slice, in the same order
		}
		page, total = strapiquery.PageOf(l.Paging, sorted), len(sorted)
	}
	data, err := strapiquery.Select(page, l.Fields)
	if err != nil {
		return listResponse{}, err
	}
	return listResponse{Data: data, Meta: meta{Pagination: l.Paging.Block(total)}}, nil
}

// presortedOrder returns the snapshot order (stampduty.ArticleOrder) that sorts the
// list as keys say, when there is one: no key (id), one key, or id first
// (ids are unique, so the keys after it change nothing).
func presortedOrder(keys []strapiquery.SortKey) (string, bool) {
	switch {
	case len(keys) == 0:
		return stampduty.ArticleOrder("id", false), true
	case len(keys) == 1 || keys[0].Field == "id":
		return stampduty.ArticleOrder(keys[0].Field, keys[0].Desc), true
	}
	return "", false
}

// sortCache keeps the catalogue sorted by the sorts asked for, for the
// catalogue slice they were sorted from (the same while it is unchanged):
// a warm request filters and pages, and never sorts again. It holds at most
// maxSorts orders (then it starts again), so any query costs at most one
// sort of the catalogue.
type sortCache struct {
	mu     sync.Mutex
	from   []stampduty.Article
	byKeys map[string][]stampduty.Article
}

// maxSorts bounds the sorted copies a sortCache holds.
const maxSorts = 8

// sorted returns all sorted by keys, ties by id; the slice is shared.
func (c *sortCache) sorted(all []stampduty.Article, keys []strapiquery.SortKey) []stampduty.Article {
	var name strings.Builder
	for _, k := range keys {
		name.WriteString(k.Field)
		if k.Desc {
			name.WriteString(":desc")
		}
		name.WriteByte(',')
	}
	c.mu.Lock()
	if len(c.from) != len(all) || (len(all) > 0 && &c.from[0] != &all[0]) || len(c.byKeys) >= maxSorts {
		c.from, c.byKeys = all, map[string][]stampduty.Article{}
	}
	s, ok := c.byKeys[name.String()]
	c.mu.Unlock()
	if ok {
		return s
	}
	s = slices.Clone(all) // the catalogue's slice keeps its order
	slices.SortStableFunc(s, func(a, b stampduty.Article) int {
		for _, k := range keys {
			d := stampduty.CompareArticles(a, b, k.Field)
			if k.Desc {
				d = -d
			}
			if d != 0 {
				return d
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	c.mu.Lock()
	if len(c.from) == len(all) && (len(all) == 0 || &c.from[0] == &all[0]) {
		c.byKeys[name.String()] = s
	}
	c.mu.Unlock()
	return s
}
