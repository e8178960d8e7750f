package catalogue

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// Snapshot is the published catalogue as the public list reads it
// (store.SnapshotCache).
type Snapshot interface {
	// Window returns the articles at positions [start, start+limit) in
	// the order of one sort field (stampduty.ArticleOrder), and how many
	// there are, without reading the others.
	Window(ctx context.Context, order string, start, limit int) ([]stampduty.Article, int, error)
	// All returns every article, the same slice while the catalogue is
	// unchanged; callers must not change it.
	All(ctx context.Context) ([]stampduty.Article, error)
}

// ListSpec is what the public article list accepts: the sort fields
// (stampduty.ArticleSortFields, the orders the snapshot holds), and every
// catalogue field for fields.
var ListSpec = strapiquery.ListSpec{
	Sortable: stampduty.ArticleSortFields,
	Fields: []string{"purpose_name", "state", "min", "max", "fixed",
		"toFollowConsiderationPrice", "amountPercentConsideration", "duty_rules"},
}

// dayOrders are the snapshot orders by an amount field: for an article
// whose rules are not legacy, the amount fields are a projection computed
// for the day of the request (duty-rules.md §9), which the snapshot's
// order, made when it was published, may not follow. A list in one of
// them is sorted from the projected catalogue instead (once a day and
// catalogue version: sortCache).
var dayOrders = map[string]bool{"min": true, "max": true, "fixed": true}

// Lister is the public article list (GET /api/stamp-duty-datas) over the
// published catalogue. Its zero value but for Articles is ready to use; it
// is safe for concurrent use.
type Lister struct {
	Articles Snapshot
	// Now is the clock of the day the projection is computed for
	// (time.Now when nil).
	Now   func() time.Time
	sorts sortCache
}

// today is the day of a request in India.
func (c *Lister) today() string {
	if c.Now != nil {
		return duty.TodayInIndia(c.Now())
	}
	return duty.TodayInIndia(time.Now())
}

// List returns the page of the published catalogue that l (parsed under
// ListSpec) asks for, as Strapi would: filtered, then sorted, then paged;
// total counts the articles the filters select. A page with no filter in
// the order of one field (no sort: id), which the snapshot holds
// pre-sorted, is read on its own (Window); any other query filters the
// whole catalogue, sorted once per catalogue version and sort. status=draft
// is empty: there are no drafts. The page is never nil, and is the
// caller's to keep but not to change.
func (c *Lister) List(ctx context.Context, l strapiquery.List) (page []stampduty.Article, total int, err error) {
	f, err := strapiquery.Compile(l.Filters, strapiquery.ArticleFields)
	if err != nil {
		return nil, 0, err
	}
	page = []stampduty.Article{}
	noFilter := len(l.Filters.Args) == 0 && (l.Filters.Op == "$and" || l.Filters.Op == "")
	order, presorted := presortedOrder(l.Sort)
	today := c.today()
	switch {
	case l.Draft:
		return page, 0, nil
	case noFilter && presorted && !dayOrders[strings.TrimSuffix(order, ":desc")]:
		start, limit := l.Paging.Window()
		arts, total, err := c.Articles.Window(ctx, order, start, limit)
		if err != nil {
			return nil, 0, err
		}
		for _, a := range arts {
			a, err := a.WithRules(today)
			if err != nil {
				return nil, 0, err
			}
			page = append(page, a)
		}
		return page, total, nil
	}
	all, err := c.Articles.All(ctx)
	if err != nil {
		return nil, 0, err
	}
	sorted, err := c.sorts.sorted(all, today, l.Sort)
	if err != nil {
		return nil, 0, err
	}
	if !noFilter {
		sorted = f.Articles(sorted) // a new slice, in the same order
	}
	return strapiquery.PageOf(l.Paging, sorted), len(sorted), nil
}

// presortedOrder returns the snapshot order (stampduty.ArticleOrder) that
// sorts the list as keys say, when there is one: no key (id), one key, or
// id first (ids are unique, so the keys after it change nothing).
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
	mu        sync.Mutex
	from      []stampduty.Article
	day       string              // the day projected is for
	projected []stampduty.Article // from, each WithRules(day)
	byKeys    map[string][]stampduty.Article
}

// maxSorts bounds the sorted copies a sortCache holds.
const maxSorts = 8

// sorted returns all, with its rules and projected for day, sorted by
// keys, ties by id; the slice is shared.
func (c *sortCache) sorted(all []stampduty.Article, day string, keys []strapiquery.SortKey) ([]stampduty.Article, error) {
	var name strings.Builder
	for _, k := range keys {
		name.WriteString(k.Field)
		if k.Desc {
			name.WriteString(":desc")
		}
		name.WriteByte(',')
	}
	c.mu.Lock()
	if len(c.from) != len(all) || (len(all) > 0 && &c.from[0] != &all[0]) || c.day != day || len(c.byKeys) >= maxSorts {
		c.from, c.day, c.projected, c.byKeys = all, day, nil, map[string][]stampduty.Article{}
	}
	s, ok := c.byKeys[name.String()]
	projected := c.projected
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	if projected == nil {
		projected = make([]stampduty.Article, len(all))
		for i, a := range all {
			var err error
			if projected[i], err = a.WithRules(day); err != nil {
				return nil, err
			}
		}
	}
	s = slices.Clone(projected) // the catalogue's slice keeps its order
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
	if len(c.from) == len(all) && (len(all) == 0 || &c.from[0] == &all[0]) && c.day == day {
		c.projected = projected
		c.byKeys[name.String()] = s
	}
	c.mu.Unlock()
	return s, nil
}
