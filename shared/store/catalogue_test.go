package store_test

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// catalogueFixture is a catalogue of n articles in a test's tables, read
// through a proxy that records the calls.
type catalogueFixture struct {
	ctx      context.Context
	env      *storetest.Env
	proxy    *storetest.Proxy
	db       *store.DB
	articles *store.Articles
	cat      *store.Catalogue
}

// newCatalogue stores n articles (every third fixed, every third following
// the consideration price) and publishes them, straight to the tables.
func newCatalogue(t *testing.T, n int) *catalogueFixture {
	t.Helper()
	ctx := context.Background()
	env, db, proxy, _ := proxiedStore(t, 100)
	direct := env.DB()
	factor, err := stampduty.ParseDecimal("0.06")
	if err != nil {
		t.Fatal(err)
	}
	var arts []stampduty.Article
	for i := range n {
		a := article(fmt.Sprintf("Deed %04d", (i*37)%n), "Karnataka")
		switch i % 3 {
		case 0:
			a.Fixed = ptr(int64(20 + i))
		case 1:
			a.FollowsConsideration, a.Factor = true, &factor
		}
		arts = append(arts, a)
	}
	if _, _, err := direct.Articles(env.Table("ArticlesTable")).Upsert(ctx, direct.IDs(env.Table("CountersTable"), 100), arts); err != nil {
		t.Fatal(err)
	}
	f := &catalogueFixture{ctx: ctx, env: env, proxy: proxy, db: direct,
		articles: db.Articles(env.Table("ArticlesTable")), cat: db.Catalogue(env.Table("CatalogueTable"))}
	f.publish(t)
	proxy.Take()
	return f
}

// publish publishes the articles table, straight to the tables.
func (f *catalogueFixture) publish(t *testing.T) store.Snapshot {
	t.Helper()
	s, err := f.db.Catalogue(f.env.Table("CatalogueTable")).Publish(f.ctx, f.db.Articles(f.env.Table("ArticlesTable")), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// byID is the articles table read whole, in id order.
func (f *catalogueFixture) byID(t *testing.T) []stampduty.Article {
	t.Helper()
	all, err := f.db.Articles(f.env.Table("ArticlesTable")).All(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(all, func(a, b stampduty.Article) int { return cmp.Compare(a.ID, b.ID) })
	return all
}

// calls returns the calls since the last, as "Op:Table=n …".
func (f *catalogueFixture) calls() string { return f.env.Operations(f.proxy.Take()) }

// TestCatalogueSnapshot publishes 250 articles (3 pages) and reads them
// through an instance's cache: a page in id order costs the version and
// its page, the whole catalogue one BatchGetItem, never a Scan; a warm
// instance reads nothing, and once the TTL has passed one small GetItem of
// the version; a publish is picked up after the TTL; publishing the same
// catalogue again writes nothing.
func TestCatalogueSnapshot(t *testing.T) {
	const ttl = 400 * time.Millisecond
	f := newCatalogue(t, 250)
	want := f.byID(t)
	c := store.NewSnapshotCache(f.cat, f.articles, ttl)
	clock := newClock()
	c.SetClock(clock.now)

	window := func(t *testing.T, start, limit int, want []stampduty.Article) {
		t.Helper()
		got, total, err := c.Window(f.ctx, "id", start, limit)
		if err != nil {
			t.Fatal(err)
		}
		if total != 250 || !reflect.DeepEqual(got, want) {
			t.Errorf("Window(%d, %d) = %d articles of %d, want %d of 250", start, limit, len(got), total, len(want))
		}
	}
	window(t, 0, 25, want[:25])
	if got, want := f.calls(), "GetItem:CatalogueTable=2"; got != want {
		t.Errorf("a cold first page read %s, want %s", got, want)
	}
	window(t, 90, 20, want[90:110])
	window(t, 240, 100, want[240:])
	window(t, 300, 25, []stampduty.Article{})
	if got, want := f.calls(), "GetItem:CatalogueTable=2"; got != want {
		t.Errorf("the other pages read %s, want %s", got, want)
	}
	whole := store.NewSnapshotCache(f.cat, f.articles, ttl)
	whole.SetClock(clock.now)
	for _, c := range []*store.SnapshotCache{c, whole} {
		all, err := c.All(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(all, want) {
			t.Errorf("All differs from the articles table in id order")
		}
	}
	if got, want := f.calls(), "BatchGetItem:CatalogueTable=1 GetItem:CatalogueTable=1"; got != want {
		t.Errorf("the whole catalogue, cold, read %s, want %s", got, want)
	}
	for _, order := range []string{"purpose_name", "fixed:desc", "min"} {
		sorted := slices.Clone(want)
		stampduty.SortArticlesBy(sorted, order)
		got, total, err := c.Window(f.ctx, order, 95, 10)
		if err != nil || total != 250 || !reflect.DeepEqual(got, sorted[95:105]) {
			t.Errorf("Window(%s, 95, 10) = %v of %d, %v; want %v", order, got, total, err, sorted[95:105])
		}
	}
	if got, want := f.calls(), "BatchGetItem:CatalogueTable=3"; got != want {
		t.Errorf("pages of 3 sorts read %s, want %s", got, want)
	}
	window(t, 0, 100, want[:100])
	if _, err := c.All(f.ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.calls(); got != "" {
		t.Errorf("a warm instance read %s", got)
	}

	clock.advance(ttl)
	f.proxy.SetMode(storetest.Meter)
	window(t, 0, 25, want[:25])
	calls := f.proxy.Take()
	f.proxy.SetMode(storetest.Record)
	if got, want := f.env.Operations(calls), "GetItem:CatalogueTable=1"; got != want {
		t.Fatalf("an unchanged catalogue after the TTL read %s, want %s", got, want)
	}
	if got, want := calls[0].Consumed.Read, 0.5; got != want {
		t.Errorf("the version read cost %v RCU, want %v", got, want)
	}

	for _, call := range f.proxy.All() {
		if call.Operation == "Scan" {
			t.Fatalf("the catalogue's reads scanned %s", call.Table)
		}
	}
	f.proxy.Take()
	before, err := f.cat.Publish(f.ctx, f.articles, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.calls(), "GetItem:CatalogueTable=1 Scan:ArticlesTable=1"; got != want {
		t.Errorf("republishing an unchanged catalogue made %s, want %s (nothing written)", got, want)
	}
	changed := want[0]
	changed.Max = 999
	if _, _, err := f.db.Articles(f.env.Table("ArticlesTable")).Upsert(f.ctx, f.db.IDs(f.env.Table("CountersTable"), 1), []stampduty.Article{changed}); err != nil {
		t.Fatal(err)
	}
	changed = f.byID(t)[0] // as stored: its version and rules follow the change
	if s := f.publish(t); s.Version == before.Version || s.Prev != before.Version {
		t.Errorf("a change published %+v after %+v", s, before)
	}
	f.proxy.Take()
	window(t, 0, 1, want[:1]) // the old version until the TTL has passed
	clock.advance(ttl)
	window(t, 0, 1, []stampduty.Article{changed})
	if got, want := f.calls(), "GetItem:CatalogueTable=2"; got != want {
		t.Errorf("picking up a new version read %s, want %s", got, want)
	}
}

// TestCatalogueReplacedWhileRead: an instance that read a version whose
// pages two later publishes removed reads the version again, consistently,
// and serves the newest snapshot instead of failing.
func TestCatalogueReplacedWhileRead(t *testing.T) {
	f := newCatalogue(t, 120)
	c := store.NewSnapshotCache(f.cat, f.articles, time.Hour)
	if _, _, err := c.Window(f.ctx, "id", 0, 10); err != nil {
		t.Fatal(err)
	}
	arts := f.byID(t)
	for _, max := range []int64{700, 800} {
		a := arts[119]
		a.Max = max
		if _, _, err := f.db.Articles(f.env.Table("ArticlesTable")).Upsert(f.ctx, f.db.IDs(f.env.Table("CountersTable"), 1), []stampduty.Article{a}); err != nil {
			t.Fatal(err)
		}
		f.publish(t)
	}
	got, total, err := c.Window(f.ctx, "id", 110, 10)
	if err != nil {
		t.Fatal(err)
	}
	if total != 120 || len(got) != 10 || got[9].Max != 800 {
		t.Errorf("after two publishes: %d of %d, last %+v", len(got), total, got[len(got)-1])
	}
}

// TestVersionedArticleCache: the quote's lookups, found or not, cost one
// GetItem each per instance while the catalogue's version is unchanged; an
// unchanged catalogue costs one small read per TTL whatever the number of
// keys cached; a new version makes each key read again.
func TestVersionedArticleCache(t *testing.T) {
	const ttl = 400 * time.Millisecond
	f := newCatalogue(t, 12)
	versions := store.NewSnapshotCache(f.cat, nil, ttl)
	c := store.NewVersionedArticleCache(f.articles, versions)
	clock := newClock()
	versions.SetClock(clock.now)
	c.SetClock(clock.now)
	arts := f.byID(t)
	ask := func(t *testing.T) {
		t.Helper()
		for _, a := range arts[:5] {
			got, err := c.Get(f.ctx, a.PurposeName, a.State)
			if err != nil || got.ID != a.ID || got.Max != a.Max {
				t.Errorf("Get(%s) = %+v, %v", a.PurposeName, got, err)
			}
		}
		for i := range 5 {
			if _, err := c.Get(f.ctx, fmt.Sprintf("Made Up %d", i), "Goa"); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
				t.Errorf("made-up purpose: %v", err)
			}
		}
	}
	ask(t)
	if got, want := f.calls(), "GetItem:ArticlesTable=10 GetItem:CatalogueTable=1"; got != want {
		t.Errorf("cold lookups read %s, want %s", got, want)
	}
	ask(t)
	if got := f.calls(); got != "" {
		t.Errorf("warm lookups read %s", got)
	}
	clock.advance(ttl)
	ask(t)
	if got, want := f.calls(), "GetItem:CatalogueTable=1"; got != want {
		t.Errorf("an unchanged catalogue after the TTL read %s, want %s", got, want)
	}
	arts[0].Max = 777
	if _, _, err := f.db.Articles(f.env.Table("ArticlesTable")).Upsert(f.ctx, f.db.IDs(f.env.Table("CountersTable"), 1), arts[:1]); err != nil {
		t.Fatal(err)
	}
	f.publish(t)
	clock.advance(ttl)
	ask(t)
	if got, want := f.calls(), "GetItem:ArticlesTable=10 GetItem:CatalogueTable=1"; got != want {
		t.Errorf("after a new version, lookups read %s, want %s", got, want)
	}
}

// TestCatalogueEmpty: a published empty catalogue is an empty list, read
// from the version alone (no page, no Scan of the articles table).
func TestCatalogueEmpty(t *testing.T) {
	f := newCatalogue(t, 0)
	c := store.NewSnapshotCache(f.cat, f.articles, time.Hour)
	for _, order := range []string{"id", "purpose_name:desc"} {
		got, total, err := c.Window(f.ctx, order, 0, 25)
		if err != nil || total != 0 || got == nil || len(got) != 0 {
			t.Errorf("Window(%s) of an empty catalogue = %v, %d, %v", order, got, total, err)
		}
	}
	if all, err := c.All(f.ctx); err != nil || all == nil || len(all) != 0 {
		t.Errorf("All of an empty catalogue = %v, %v", all, err)
	}
	if got, want := f.calls(), "GetItem:CatalogueTable=1"; got != want {
		t.Errorf("an empty catalogue read %s, want %s", got, want)
	}
}

// TestVersionedArticleCacheBeforeSnapshots: on a stack with no snapshot
// published, the quote's lookups still answer, by key, and are read again
// once the TTL has passed, as before snapshots.
func TestVersionedArticleCacheBeforeSnapshots(t *testing.T) {
	const ttl = 300 * time.Millisecond
	env, db, proxy, _ := proxiedStore(t, 100)
	ctx := context.Background()
	direct := env.DB()
	a := article("Affidavit", "Karnataka")
	if _, _, err := direct.Articles(env.Table("ArticlesTable")).Upsert(ctx, direct.IDs(env.Table("CountersTable"), 10), []stampduty.Article{a}); err != nil {
		t.Fatal(err)
	}
	versions := store.NewSnapshotCache(db.Catalogue(env.Table("CatalogueTable")), nil, ttl)
	c := store.NewVersionedArticleCache(db.Articles(env.Table("ArticlesTable")), versions)
	clock := newClock()
	versions.SetClock(clock.now)
	c.SetClock(clock.now)
	for range 2 {
		if got, err := c.Get(ctx, a.PurposeName, a.State); err != nil || got.Max != a.Max {
			t.Fatalf("Get = %+v, %v", got, err)
		}
	}
	if got, want := env.Operations(proxy.Take()), "GetItem:ArticlesTable=1 GetItem:CatalogueTable=1"; got != want {
		t.Errorf("lookups without a snapshot read %s, want %s", got, want)
	}
	clock.advance(ttl)
	if _, err := c.Get(ctx, a.PurposeName, a.State); err != nil {
		t.Fatal(err)
	}
	if got, want := env.Operations(proxy.Take()), "GetItem:ArticlesTable=1 GetItem:CatalogueTable=1"; got != want {
		t.Errorf("after the TTL without a snapshot, read %s, want %s", got, want)
	}
}

// clock is a test's time, which only advance moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// advance moves the clock on by d.
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
