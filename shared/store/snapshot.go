package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"stampduty/shared/stampduty"
)

// CatalogueTTL is how long an instance trusts the catalogue version it
// read: a publish is seen everywhere within it, and an unchanged catalogue
// costs one small read per instance per CatalogueTTL.
const CatalogueTTL = time.Minute

// SnapshotCache serves the published catalogue (Catalogue) from memory, per
// Lambda instance. It reads the version item at most once per TTL; while
// the version stays the same, nothing else is read again. Pages are read as
// they are needed: a page of the list in id order costs one GetItem (two
// when it straddles two snapshot pages) the first time, the whole
// catalogue (for filters and other sorts) one BatchGetItem per 100 pages,
// once per version.
//
// A stack whose articles were imported before snapshots existed has no
// version item: then, and only then, the catalogue is the articles table
// read whole (legacy, a Scan cached for the TTL), until `stampctl articles
// publish` (or an import) publishes one.
type SnapshotCache struct {
	cat    *Catalogue
	legacy *ArticleCache // nil: no fallback (the quote's version reads)
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	cur     Snapshot
	has     bool      // cur is a published snapshot
	checked time.Time // when cur was read; zero: never
	pages   map[pageRef][]stampduty.Article
	all     []stampduty.Article // in id order, once read whole
	sorted  sortedCopies
}

// pageRef is a page of one order of the current snapshot.
type pageRef struct {
	order string
	i     int
}

// sortedCopies are a catalogue slice sorted in each order asked for.
type sortedCopies struct {
	from    []stampduty.Article
	byOrder map[string][]stampduty.Article
}

// NewSnapshotCache returns the cache of cat's snapshots. legacy, when not
// nil, is read whole when no snapshot was ever published.
func NewSnapshotCache(cat *Catalogue, legacy *Articles, ttl time.Duration) *SnapshotCache {
	c := &SnapshotCache{cat: cat, ttl: ttl, now: time.Now, pages: map[pageRef][]stampduty.Article{}}
	if legacy != nil {
		c.legacy = NewArticleCache(legacy, ttl)
	}
	return c
}

// Current returns the current snapshot, and false when none is published.
// It reads the version item when the one it holds is older than the TTL
// (or force), and forgets the pages it holds when the version changed.
func (c *SnapshotCache) Current(ctx context.Context) (Snapshot, bool, error) {
	return c.current(ctx, false)
}

func (c *SnapshotCache) current(ctx context.Context, force bool) (Snapshot, bool, error) {
	now := c.now()
	c.mu.Lock()
	s, has, checked := c.cur, c.has, c.checked
	c.mu.Unlock()
	if !force && !checked.IsZero() && now.Sub(checked) < c.ttl {
		return s, has, nil
	}
	s, has, err := c.cat.Current(ctx, force)
	if err != nil {
		return Snapshot{}, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.Version != c.cur.Version || has != c.has {
		c.pages, c.all = map[pageRef][]stampduty.Article{}, nil
	}
	c.cur, c.has, c.checked = s, has, now
	return s, has, nil
}

// Window returns the articles at positions [start, start+limit) of the
// catalogue in order (one of stampduty.ArticleOrders), and how many
// articles it has. The slice is shared: callers must not change it.
func (c *SnapshotCache) Window(ctx context.Context, order string, start, limit int) ([]stampduty.Article, int, error) {
	if !slices.Contains(stampduty.ArticleOrders(), order) {
		return nil, 0, stampduty.Internal(fmt.Errorf("catalogue: no order %q", order))
	}
	for try := 0; ; try++ {
		s, has, err := c.current(ctx, try > 0)
		if err != nil {
			return nil, 0, err
		}
		if !has {
			return c.legacyWindow(ctx, order, start, limit)
		}
		if s.Articles == 0 {
			return []stampduty.Article{}, 0, nil
		}
		if s.Pages == 1 {
			// A catalogue of one page is read whole once, in id order,
			// and sorted here: no read per order.
			all, ok, err := c.pagesOf(ctx, s.Version, idOrder, 0, 0, false)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				return window(c.sortedOf(all, order), start, limit), s.Articles, nil
			}
			if try == 0 {
				continue // replaced while this instance read it: read the version again
			}
			return nil, 0, stampduty.Internal(fmt.Errorf("catalogue %s: page missing", s.Version))
		}
		start := min(max(start, 0), s.Articles)
		end := start + min(max(limit, 0), s.Articles-start)
		if start == end {
			return []stampduty.Article{}, s.Articles, nil
		}
		first, last := start/PageArticles, (end-1)/PageArticles
		got, ok, err := c.pagesOf(ctx, s.Version, order, first, last, false)
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			if try == 0 {
				continue // replaced while this instance read it: read the version again
			}
			return nil, 0, stampduty.Internal(fmt.Errorf("catalogue %s: pages %d-%d missing", s.Version, first, last))
		}
		return got[start-first*PageArticles : end-first*PageArticles], s.Articles, nil
	}
}

// pagesOf returns pages first to last of version, joined, reading the ones
// not held yet (GetItem for one unless batch, else BatchGetItem); false
// when one is gone.
func (c *SnapshotCache) pagesOf(ctx context.Context, version, order string, first, last int, batch bool) ([]stampduty.Article, bool, error) {
	c.mu.Lock()
	var need []int
	for i := first; i <= last; i++ {
		if _, ok := c.pages[pageRef{order, i}]; !ok {
			need = append(need, i)
		}
	}
	c.mu.Unlock()
	got := map[int][]stampduty.Article{}
	switch {
	case len(need) == 1 && !batch:
		arts, ok, err := c.cat.Page(ctx, version, order, need[0])
		if err != nil || !ok {
			return nil, false, err
		}
		got[need[0]] = arts
	case len(need) > 0:
		var err error
		if got, err = c.cat.Pages(ctx, version, order, need); err != nil {
			return nil, false, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []stampduty.Article
	for i := first; i <= last; i++ {
		p, ok := got[i]
		if !ok {
			if p, ok = c.pages[pageRef{order, i}]; !ok {
				return nil, false, nil
			}
		}
		if c.cur.Version == version {
			c.pages[pageRef{order, i}] = p
		}
		out = append(out, p...)
	}
	return out, true, nil
}

// All returns the whole catalogue in id order. The slice is shared: callers
// must not change it. The same slice is returned while the version stays
// the same, so callers may keep what they derive from it.
func (c *SnapshotCache) All(ctx context.Context) ([]stampduty.Article, error) {
	for try := 0; ; try++ {
		s, has, err := c.current(ctx, try > 0)
		if err != nil {
			return nil, err
		}
		if !has {
			return c.legacyAll(ctx)
		}
		c.mu.Lock()
		all, same := c.all, c.cur.Version == s.Version
		c.mu.Unlock()
		if all != nil && same {
			return all, nil
		}
		all, ok, err := c.pagesOf(ctx, s.Version, idOrder, 0, s.Pages-1, true)
		if err != nil {
			return nil, err
		}
		if !ok {
			if try == 0 {
				continue
			}
			return nil, stampduty.Internal(fmt.Errorf("catalogue %s: pages missing", s.Version))
		}
		if all == nil {
			all = []stampduty.Article{}
		}
		c.mu.Lock()
		if c.cur.Version == s.Version {
			c.all = all
		}
		c.mu.Unlock()
		return all, nil
	}
}

// legacyAll is the articles table read whole and sorted by id, cached for
// the TTL: the catalogue of a stack with no snapshot.
func (c *SnapshotCache) legacyAll(ctx context.Context) ([]stampduty.Article, error) {
	if c.legacy == nil {
		return nil, stampduty.Internal(fmt.Errorf("no catalogue snapshot is published"))
	}
	from, err := c.legacy.All(ctx)
	if err != nil {
		return nil, err
	}
	return c.sortedOf(from, idOrder), nil
}

// sortedOf returns from sorted in order, sorted once for as long as from
// is the slice given (the legacy Scan's, or a one-page snapshot's).
func (c *SnapshotCache) sortedOf(from []stampduty.Article, order string) []stampduty.Article {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(from) == 0 || len(c.sorted.from) != len(from) || &c.sorted.from[0] != &from[0] {
		c.sorted = sortedCopies{from: from, byOrder: map[string][]stampduty.Article{}}
	}
	sorted, ok := c.sorted.byOrder[order]
	if !ok {
		sorted = slices.Clone(from)
		stampduty.SortArticlesBy(sorted, order)
		c.sorted.byOrder[order] = sorted
	}
	return sorted
}

func (c *SnapshotCache) legacyWindow(ctx context.Context, order string, start, limit int) ([]stampduty.Article, int, error) {
	if c.legacy == nil {
		return nil, 0, stampduty.Internal(fmt.Errorf("no catalogue snapshot is published"))
	}
	from, err := c.legacy.All(ctx)
	if err != nil {
		return nil, 0, err
	}
	return window(c.sortedOf(from, order), start, limit), len(from), nil
}

// window returns arts[start:start+limit], within arts.
func window(arts []stampduty.Article, start, limit int) []stampduty.Article {
	start = min(max(start, 0), len(arts))
	return arts[start : start+min(max(limit, 0), len(arts)-start)]
}
