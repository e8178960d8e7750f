package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func ptr[T any](v T) *T { return &v }

func article(purpose, state string) stampduty.Article {
	return stampduty.Article{PurposeName: purpose, State: state, Min: 10, Max: 500}
}

// newOrder builds a valid order for tests, numbered n.
func newOrder(t testing.TB, ids *store.IDs, n int) stampduty.Order {
	t.Helper()
	first, err := ids.Reserve(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	req := stampduty.OrderRequest{Amount: 100, Purpose: "Affidavit", State: "Karnataka", PaidBy: stampduty.FirstParty,
		FirstPartyMobileNumber: "9876543210", FirstPartyName: fmt.Sprintf("Party %d", n), SecondPartyName: "Second",
		Description: "N/A"}
	o, err := stampduty.NewOrder(req, stampduty.Article{ID: 7, DocumentID: "artdoc", PurposeName: "Affidavit"}, 100,
		stampduty.NewOrderIDs(first, 1), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o.Livemode = true // as a live owner's order reads back (never stored)
	return o
}

// proxiedStore starts a test's tables and opens them through a proxy, with
// IDs from the counters table reserved block at a time.
func proxiedStore(t *testing.T, block int64) (*storetest.Env, *store.DB, *storetest.Proxy, *store.IDs) {
	env := storetest.New(t)
	db, proxy := env.ProxiedDB()
	return env, db, proxy, db.IDs(env.Table("CountersTable"), block)
}

// articlesFixture is two articles, an affidavit at a fixed amount and a
// rent agreement that follows the consideration, stored in a test's tables
// read through a proxy that records the calls.
type articlesFixture struct {
	ctx       context.Context
	env       *storetest.Env
	proxy     *storetest.Proxy
	ids       *store.IDs
	arts      *store.Articles
	affidavit stampduty.Article
}

// newArticlesFixture stores the two articles and takes the calls made.
func newArticlesFixture(t *testing.T) *articlesFixture {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 10)
	arts := db.Articles(env.Table("ArticlesTable"))

	a := article("Affidavit", "Karnataka")
	a.Fixed = ptr(int64(20))
	b := article("Rent Agreement", "Delhi")
	b.FollowsConsideration = true
	f, _ := stampduty.ParseDecimal("0.07")
	b.Factor = &f
	created, updated, err := arts.Upsert(ctx, ids, []stampduty.Article{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if created != 2 || updated != 0 {
		t.Fatalf("created, updated = %d, %d; want 2, 0", created, updated)
	}
	proxy.Take()
	return &articlesFixture{ctx: ctx, env: env, proxy: proxy, ids: ids, arts: arts, affidavit: a}
}

// TestArticles: an article is one GetItem away, impossible keys ask
// nothing, an upsert keeps ids, and the cache serves without calls within
// a bound of bytes.
func TestArticles(t *testing.T) {
	f := newArticlesFixture(t)
	testkit.Steps(t, f.getIsOneGetItem, f.fixedRoundTrips, f.notFound, f.impossibleKeysAskNothing,
		f.upsertKeepsIDs, f.all, f.cacheServesWithoutCalls, f.cacheAnswersImpossibleKeysWithoutCallsOrMemory,
		f.cacheIsBoundedByBytes)
}

func (f *articlesFixture) getIsOneGetItem(t *testing.T) {
	got, err := f.arts.Get(f.ctx, "Rent Agreement", "Delhi")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.env.Operations(f.proxy.Take()), "GetItem:ArticlesTable=1"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
	if got.ID == 0 || len(got.DocumentID) != 24 || !got.FollowsConsideration || got.Factor == nil || got.Factor.String() != "0.07" {
		t.Errorf("article = %+v", got)
	}
}

func (f *articlesFixture) fixedRoundTrips(t *testing.T) {
	got, err := f.arts.Get(f.ctx, "Affidavit", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	if got.Fixed == nil || *got.Fixed != 20 || got.Factor != nil || got.Min != 10 || got.Max != 500 {
		t.Errorf("article = %+v", got)
	}
}

func (f *articlesFixture) notFound(t *testing.T) {
	_, err := f.arts.Get(f.ctx, "Affidavit", "Delhi")
	if got, want := stampduty.ErrorCode(err), stampduty.ENOTFOUND; got != want {
		t.Fatalf("code = %q, want %q", got, want)
	}
	if got, want := stampduty.ErrorMessage(err), "Purpose with the name: Affidavit cannot be found."; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}

func (f *articlesFixture) impossibleKeysAskNothing(t *testing.T) {
	f.proxy.Take()
	long := make([]byte, 3000)
	for i := range long {
		long[i] = 'a'
	}
	for _, k := range [][2]string{{"", "Delhi"}, {string(long), "Delhi"}, {"Affidavit", "Atlantis"}} {
		if _, err := f.arts.Get(f.ctx, k[0], k[1]); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Errorf("Get(%.10q, %q) = %v, want ENOTFOUND", k[0], k[1], err)
		}
	}
	if got := f.proxy.Take(); len(got) != 0 {
		t.Errorf("calls = %s, want none", f.env.Operations(got))
	}
}

func (f *articlesFixture) upsertKeepsIDs(t *testing.T) {
	before, _ := f.arts.Get(f.ctx, "Affidavit", "Karnataka")
	a2 := f.affidavit
	a2.Max = 900
	created, updated, err := f.arts.Upsert(f.ctx, f.ids, []stampduty.Article{a2})
	if err != nil || created != 0 || updated != 1 {
		t.Fatalf("Upsert = %d, %d, %v; want 0, 1, nil", created, updated, err)
	}
	after, _ := f.arts.Get(f.ctx, "Affidavit", "Karnataka")
	if after.ID != before.ID || after.DocumentID != before.DocumentID || after.Max != 900 {
		t.Errorf("before %+v, after %+v", before, after)
	}
}

func (f *articlesFixture) all(t *testing.T) {
	all, err := f.arts.All(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(all), 2; got != want {
		t.Fatalf("len = %d, want %d", got, want)
	}
	if all[0].ID == all[1].ID {
		t.Errorf("ids not unique: %d", all[0].ID)
	}
}

func (f *articlesFixture) cacheServesWithoutCalls(t *testing.T) {
	cache := store.NewArticleCache(f.arts, time.Minute)
	f.proxy.Take()
	for i := 0; i < 3; i++ {
		if _, err := cache.All(f.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := cache.Get(f.ctx, "Affidavit", "Karnataka"); err != nil {
			t.Fatal(err)
		}
		if _, err := cache.Get(f.ctx, "Nope", "Delhi"); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Fatalf("Get(Nope) = %v", err)
		}
	}
	if got, want := f.env.Operations(f.proxy.Take()), "GetItem:ArticlesTable=2 Scan:ArticlesTable=1"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
}

func (f *articlesFixture) cacheAnswersImpossibleKeysWithoutCallsOrMemory(t *testing.T) {
	cache := store.NewArticleCache(f.arts, time.Minute)
	f.proxy.Take()
	for _, k := range [][2]string{
		{"", "Delhi"}, {strings.Repeat("x", 201), "Delhi"}, {strings.Repeat("x", 64<<10), "Delhi"},
		{"Rent\u202e", "Delhi"}, {"Re\u200bnt", "Delhi"}, {"Rent", "Atlantis"}, {"Rent", strings.Repeat("s", 64<<10)},
		{" Rent", "Delhi"}, {"Rent\xff", "Delhi"},
	} {
		_, err := cache.Get(f.ctx, k[0], k[1])
		if got, want := stampduty.ErrorCode(err), stampduty.ENOTFOUND; got != want {
			t.Errorf("Get(%.20q, %.20q) = %v, want %s", k[0], k[1], err, want)
		}
	}
	if got := f.env.Operations(f.proxy.Take()); got != "" {
		t.Errorf("calls = %s, want none", got)
	}
	if got := cache.Bytes(); got != 0 {
		t.Errorf("cache holds %d bytes, want 0", got)
	}
}

func (f *articlesFixture) cacheIsBoundedByBytes(t *testing.T) {
	cache := store.NewArticleCache(f.arts, time.Minute)
	long := strings.Repeat("y", 190)
	most := 0
	for i := range 1500 {
		if _, err := cache.Get(f.ctx, fmt.Sprintf("%s %06d", long, i), "Delhi"); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Fatal(err)
		}
		most = max(most, cache.Bytes())
	}
	if most > store.MaxCacheBytes {
		t.Errorf("cache held %d bytes, want at most %d", most, store.MaxCacheBytes)
	}
	if most < store.MaxCacheBytes/2 {
		t.Errorf("cache held at most %d bytes: the flood never filled it, so the bound was not tested", most)
	}
	// A real article is still served, and cached, after the flood.
	if _, err := cache.Get(f.ctx, "Affidavit", "Karnataka"); err != nil {
		t.Fatal(err)
	}
	f.proxy.Take()
	if _, err := cache.Get(f.ctx, "Affidavit", "Karnataka"); err != nil {
		t.Fatal(err)
	}
	if got := f.env.Operations(f.proxy.Take()); got != "" {
		t.Errorf("calls = %s, want none (cached)", got)
	}
}

func TestOrders(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 30)
	orders := db.Orders(env.Table("OrdersTable"))

	const n = 60
	for i := 1; i <= n; i++ {
		if _, err := orders.Create(ctx, "alice", newOrder(t, ids, i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := orders.Create(ctx, "bob", newOrder(t, ids, 0)); err != nil {
		t.Fatal(err)
	}

	t.Run("CreateIsOneCounterUpdateAndOnePut", func(t *testing.T) {
		// A caller's first create also seeds its counter: the newest
		// stored seq, then the counter's base.
		for i, want := range []string{"PutItem:OrdersTable=1 Query:OrdersTable=1 UpdateItem:OrdersTable=2", "PutItem:OrdersTable=1 UpdateItem:OrdersTable=1"} {
			o := newOrder(t, ids, 99+i)
			proxy.Take()
			if _, err := orders.Create(ctx, "carol", o); err != nil {
				t.Fatal(err)
			}
			if got := env.Operations(proxy.Take()); got != want {
				t.Errorf("create %d: calls = %s, want %s", i+1, got, want)
			}
		}
	})
	t.Run("PagesNewestFirst", func(t *testing.T) {
		for _, tc := range []struct{ page, size, first, count int }{
			{1, 25, 60, 25}, {2, 25, 35, 25}, {3, 25, 10, 10}, {4, 25, 0, 0}, {1, 100, 60, 60}, {60, 1, 1, 1}, {61, 1, 0, 0},
		} {
			got, total, err := orders.Page(ctx, "alice", tc.page, tc.size)
			if err != nil {
				t.Fatal(err)
			}
			if total != n {
				t.Errorf("page %d/%d: total = %d, want %d", tc.page, tc.size, total, n)
			}
			if len(got) != tc.count {
				t.Fatalf("page %d/%d: %d orders, want %d", tc.page, tc.size, len(got), tc.count)
			}
			for i, o := range got {
				if want := fmt.Sprintf("Party %d", tc.first-i); o.StampDuty.FirstPartyName != want {
					t.Errorf("page %d/%d item %d = %s, want %s", tc.page, tc.size, i, o.StampDuty.FirstPartyName, want)
				}
			}
		}
	})
	t.Run("SlicesAtAnyOffset", func(t *testing.T) {
		for _, tc := range []struct{ start, limit, first, count int }{
			{0, 3, 60, 3}, {7, 5, 53, 5}, {58, 5, 2, 2}, {59, 1, 1, 1}, {60, 5, 0, 0}, {1000, 5, 0, 0},
		} {
			proxy.Take()
			got, total, err := orders.Slice(ctx, "alice", tc.start, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if total != n || len(got) != tc.count {
				t.Fatalf("slice %d+%d: total %d, %d orders; want %d, %d", tc.start, tc.limit, total, len(got), n, tc.count)
			}
			for i, o := range got {
				if want := fmt.Sprintf("Party %d", tc.first-i); o.StampDuty.FirstPartyName != want {
					t.Errorf("slice %d+%d item %d = %s, want %s", tc.start, tc.limit, i, o.StampDuty.FirstPartyName, want)
				}
			}
			if calls, want := env.Operations(proxy.Take()), "Query:OrdersTable=2"; tc.count > 0 && calls != want {
				t.Errorf("slice %d+%d: calls = %s, want %s", tc.start, tc.limit, calls, want)
			}
		}
	})
	t.Run("ByDocuments", func(t *testing.T) {
		alice, _, err := orders.Page(ctx, "alice", 1, 60)
		if err != nil {
			t.Fatal(err)
		}
		bob, _, err := orders.Page(ctx, "bob", 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		// alice's 60 is alice[0], her 1 is alice[59].
		docs := []string{alice[59].DocumentID, bob[0].DocumentID, "no-such-order", alice[0].DocumentID, alice[30].DocumentID, ""}
		proxy.Take()
		got, err := orders.ByDocuments(ctx, "alice", docs)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range got {
			names = append(names, o.StampDuty.FirstPartyName)
		}
		if got, want := strings.Join(names, ","), "Party 60,Party 30,Party 1"; got != want {
			t.Errorf("orders = %s, want %s (alice's only, newest first)", got, want)
		}
		// One index Query per non-empty id, and a Query of its range per id found: never
		// a Scan, never alice's 60 orders.
		if got, want := env.Operations(proxy.Take()), "Query:OrdersTable/index/by-document-keys=5 Query:OrdersTable=4"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		if got, err := orders.ByDocuments(ctx, "bob", nil); err != nil || len(got) != 0 {
			t.Errorf("no ids: %v, %v; want none", got, err)
		}
	})
	t.Run("OwnersAreSeparate", func(t *testing.T) {
		got, total, err := orders.Page(ctx, "bob", 1, 25)
		if err != nil {
			t.Fatal(err)
		}
		if total != 1 || len(got) != 1 || got[0].StampDuty.FirstPartyName != "Party 0" {
			t.Errorf("bob: total %d, %+v", total, got)
		}
	})
	t.Run("PageNCostsWhatPage1Costs", func(t *testing.T) {
		cost := func(page int) (string, float64) {
			proxy.SetMode(storetest.Meter)
			defer proxy.SetMode(storetest.Record)
			if _, _, err := orders.Page(ctx, "alice", page, 10); err != nil {
				t.Fatal(err)
			}
			cs := proxy.Take()
			var rcu float64
			for _, c := range cs {
				rcu += c.Consumed.Read
			}
			return env.Operations(cs), rcu
		}
		s1, r1 := cost(1)
		s6, r6 := cost(6)
		if want := "Query:OrdersTable=2"; s1 != want || s6 != want {
			t.Errorf("calls: page 1 %s, page 6 %s; want %s", s1, s6, want)
		}
		// A Query's units are ceil(bytes read / 4 KB) × 0.5, and a number's
		// size is its significant digits (ids, times), so two pages of
		// orders of the same shape may straddle a 4 KB step by a few bytes:
		// half a unit apart at most (seen once: 1.5 and 2). Growing with
		// the page number would be far more.
		if math.Abs(r1-r6) > 0.5 || r1 == 0 {
			t.Errorf("read units: page 1 %v, page 6 %v; want within half a unit of each other, and > 0", r1, r6)
		}
	})
}

// TestOrderRoundTrip: an order reads back as it was stored, certificate
// file included.
func TestOrderRoundTrip(t *testing.T) {
	ctx := context.Background()
	env, db, _, ids := proxiedStore(t, 30)
	orders := db.Orders(env.Table("OrdersTable"))
	o := newOrder(t, ids, 1000)
	o.Fulfillments[0].CertificateFile = &stampduty.File{ID: 5, DocumentID: "f", Name: "c.pdf", Mime: "application/pdf", Size: 9, SHA256: "ff", Key: "certificates/x/f", CreatedAt: o.CreatedAt}
	if _, err := orders.Create(ctx, "dave", o); err != nil {
		t.Fatal(err)
	}
	got, _, err := orders.Page(ctx, "dave", 1, 1)
	if err != nil || len(got) != 1 {
		t.Fatal(len(got), err)
	}
	want, _ := json.Marshal(o)
	if got, _ := json.Marshal(got[0]); string(got) != string(want) {
		t.Errorf("stored\n%s\nread back\n%s", want, got)
	}
}

// TestConcurrentCreates: many creates at once by one owner, each through its
// own store (as separate Lambda instances would be), never lose, duplicate or
// misnumber an order.
func TestConcurrentCreates(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	const n = 60
	var wg sync.WaitGroup
	errs := make(chan error, n)
	seqs := make(chan int64, n)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := env.DB()
			ids := db.IDs(env.Table("CountersTable"), 30)
			seq, err := db.Orders(env.Table("OrdersTable")).Create(ctx, "alice", newOrder(t, ids, i))
			errs <- err
			seqs <- seq
		}()
	}
	wg.Wait()
	close(errs)
	close(seqs)
	for err := range errs {
		if err != nil {
			t.Errorf("create: %v", err)
		}
	}
	seen := map[int64]bool{}
	for s := range seqs {
		if seen[s] {
			t.Errorf("seq %d given twice", s)
		}
		seen[s] = true
	}
	got, total, err := env.DB().Orders(env.Table("OrdersTable")).Page(ctx, "alice", 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	if total != n || len(got) != n {
		t.Fatalf("total %d, listed %d; want %d", total, len(got), n)
	}
	names, orderIDs, docs := map[string]bool{}, map[int64]bool{}, map[string]bool{}
	for _, o := range got {
		names[o.StampDuty.FirstPartyName] = true
		for _, id := range []int64{o.ID, o.Fulfillments[0].ID, o.StampDuty.ID} {
			if orderIDs[id] {
				t.Errorf("id %d used twice", id)
			}
			orderIDs[id] = true
		}
		docs[o.DocumentID] = true
	}
	if len(names) != n || len(docs) != n {
		t.Errorf("%d distinct orders and %d documentIds listed, want %d", len(names), len(docs), n)
	}
}

func TestIDsUniqueAcrossInstances(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := env.DB().IDs(env.Table("CountersTable"), 7)
			for j := 0; j < 25; j++ {
				first, err := ids.Reserve(ctx, 3)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for k := first; k < first+3; k++ {
					if k <= 0 || seen[k] {
						t.Errorf("id %d reused or not positive", k)
					}
					seen[k] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got, want := len(seen), 8*25*3; got != want {
		t.Errorf("%d ids, want %d", got, want)
	}
}

func TestTestTokens(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	tokens := env.DB().Tokens(env.Table("TokensTable"))
	_, testHash, _ := localdb.Hasher().NewTestToken()
	_, liveHash, _ := localdb.Hasher().NewToken()
	for _, tok := range []auth.Token{{Hash: testHash, Owner: "alice", Test: true}, {Hash: liveHash, Owner: "alice"}} {
		tok.CreatedAt = time.Now()
		if err := tokens.Create(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("LookupKeepsTheMode", func(t *testing.T) {
		for hash, want := range map[string]bool{testHash: true, liveHash: false} {
			got, err := tokens.Token(ctx, hash)
			if err != nil {
				t.Fatal(err)
			}
			if got.Test != want {
				t.Errorf("token %s: Test = %v, want %v", hash[:12], got.Test, want)
			}
		}
	})
	t.Run("ListAndRevokeKeepTheMode", func(t *testing.T) {
		tok, err := tokens.Revoke(ctx, testHash[:12], time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !tok.Test || !tok.Revoked() {
			t.Errorf("revoked = %+v, want a revoked test token", tok)
		}
		list, err := tokens.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		modes := map[string]bool{}
		for _, l := range list {
			modes[l.Hash] = l.Test
		}
		if !modes[testHash] || modes[liveHash] || len(list) != 2 {
			t.Errorf("list = %+v", list)
		}
	})
}

func TestTokens(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	tokens := env.DB().Tokens(env.Table("TokensTable"))
	secret, hash, err := localdb.Hasher().NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := tokens.Create(ctx, auth.Token{Hash: hash, Owner: "alice", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	t.Run("Lookup", func(t *testing.T) {
		got, err := tokens.Token(ctx, localdb.Hasher().Hash(secret))
		if err != nil {
			t.Fatal(err)
		}
		if got.Owner != "alice" || got.Revoked() {
			t.Errorf("token = %+v", got)
		}
	})
	t.Run("Unknown", func(t *testing.T) {
		_, err := tokens.Token(ctx, localdb.Hasher().Hash("sdt_other"))
		if got, want := stampduty.ErrorCode(err), stampduty.ENOTFOUND; got != want {
			t.Errorf("code = %q, want %q", got, want)
		}
	})
	t.Run("DuplicateRefused", func(t *testing.T) {
		err := tokens.Create(ctx, auth.Token{Hash: hash, Owner: "mallory", CreatedAt: time.Now()})
		if got, want := stampduty.ErrorCode(err), stampduty.ECONFLICT; got != want {
			t.Errorf("code = %q, want %q", got, want)
		}
	})
	t.Run("Revoke", func(t *testing.T) {
		tok, err := tokens.Revoke(ctx, hash[:12], time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !tok.Revoked() {
			t.Error("returned token not revoked")
		}
		got, _ := tokens.Token(ctx, hash)
		if !got.Revoked() {
			t.Error("stored token not revoked")
		}
		list, _ := tokens.List(ctx)
		if len(list) != 1 || !list[0].Revoked() {
			t.Errorf("list = %+v", list)
		}
	})
	t.Run("RevokeNeedsAFullID", func(t *testing.T) {
		_, err := tokens.Revoke(ctx, hash[:4], time.Now())
		if got, want := stampduty.ErrorCode(err), stampduty.EINVALID; got != want {
			t.Errorf("code = %q, want %q", got, want)
		}
	})
	t.Run("RevokeKeepsTheFirstTime", func(t *testing.T) {
		first, _ := tokens.Token(ctx, hash)
		again, err := tokens.Revoke(ctx, hash[:12], time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !again.RevokedAt.Equal(first.RevokedAt) {
			t.Errorf("revoked at %v, then %v; want the first time kept", first.RevokedAt, again.RevokedAt)
		}
	})
	t.Run("RevokeUnknown", func(t *testing.T) {
		_, err := tokens.Revoke(ctx, "ffffffffffff", time.Now())
		if got, want := stampduty.ErrorCode(err), stampduty.ENOTFOUND; got != want {
			t.Errorf("code = %q, want %q", got, want)
		}
	})
}

// TestEngineDownIsUnavailable: a DynamoDB that cannot be reached is a 503
// kind of error, not a 500, and carries no address in its message.
func TestEngineDownIsUnavailable(t *testing.T) {
	db := store.New(localdb.Client("http://127.0.0.1:1"))
	_, err := db.Articles("ArticlesTable").Get(context.Background(), "Affidavit", "Delhi")
	if got, want := stampduty.ErrorCode(err), stampduty.EUNAVAILABLE; got != want {
		t.Fatalf("code = %q, want %q (%v)", got, want, err)
	}
	if got, want := stampduty.ErrorMessage(err), "Service Unavailable"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	// What the logs get: the operation and the kind of failure, no address or SDK text.
	if got, want := err.Error(), "Service Unavailable: dynamodb GetItem: connection refused"; got != want {
		t.Errorf("error text = %q, want %q", got, want)
	}
}
