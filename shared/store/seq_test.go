package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// failedConditions counts the calls that DynamoDB answered with a failed
// condition: each one is billed, and under contention they are the cost.
func failedConditions(calls []storetest.ProxyCall) int {
	n := 0
	for _, c := range calls {
		if c.ErrType == "ConditionalCheckFailedException" {
			n++
		}
	}
	return n
}

// createSeqd creates o as the workflow does: a seq reserved, the seq put
// in the documentId, the order put at it. It returns the order as stored.
func createSeqd(t testing.TB, s *store.Orders, owner string, o stampduty.Order) (stampduty.Order, int64) {
	t.Helper()
	ctx := context.Background()
	seq, err := s.Reserve(ctx, owner)
	if err == nil {
		o.DocumentID = stampduty.WithSeq(o.DocumentID, seq)
		seq, err = s.Put(ctx, owner, seq, o)
	}
	if err != nil {
		t.Errorf("create: %v", err) // not Fatal: tests call it from goroutines
	}
	return o, seq
}

// TestConcurrentCreatesOfOneCaller: 32 creates at a time of one caller,
// 320 in all, take 320 distinct seqs 1..320 without one failed condition
// at the wire, and the list holds each order once, newest first.
func TestConcurrentCreatesOfOneCaller(t *testing.T) {
	env, db, proxy, ids := proxiedStore(t, 400)
	s := db.Orders(env.Table("OrdersTable"))
	const workers, each = 32, 10
	seqs := make([]int64, 0, workers*each)
	var mu sync.Mutex
	var wg sync.WaitGroup
	proxy.Take()
	for range workers {
		wg.Go(func() {
			for range each {
				_, seq := createSeqd(t, s, "busy", newOrder(t, ids, 0))
				mu.Lock()
				seqs = append(seqs, seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if got := failedConditions(proxy.Take()); got != 0 {
		t.Errorf("%d failed conditional writes, want 0: concurrent creates of one caller must not race", got)
	}
	slices.Sort(seqs)
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("seqs %v..., want 1..%d each once", seqs[max(0, i-2):i+1], workers*each)
		}
	}
	assertList(t, s, "busy", workers*each)
}

// assertList checks that owner's list holds n orders, each once, with the
// total n and every page of 7 costing two Queries.
func assertList(t *testing.T, s *store.Orders, owner string, n int) {
	t.Helper()
	page, total, err := s.Page(context.Background(), owner, 1, n+10)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, o := range page {
		seen[o.DocumentID] = true
	}
	if total != n || len(page) != n || len(seen) != n {
		t.Errorf("total %d, %d orders listed, %d distinct; want %d each", total, len(page), len(seen), n)
	}
}

// TestVoids: a seq that holds no order — its create failed, or vanished —
// is voided, and the list skips it: newest first, the total exact, and
// page N read with the same two Queries as page 1.
func TestVoids(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 100)
	s := db.Orders(env.Table("OrdersTable"))
	table := env.Table("OrdersTable")

	t.Run("FailedCreateVoidsItsSeq", func(t *testing.T) {
		createSeqd(t, s, "fail", newOrder(t, ids, 1))
		proxy.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
			if c.Operation == "PutItem" && c.Table == table {
				return &storetest.Fault{Status: 400, Type: "ValidationException"}
			}
			return nil
		})
		o := newOrder(t, ids, 2)
		_, err := s.Create(ctx, "fail", o)
		proxy.SetFault(nil)
		if err == nil || errors.Is(err, orders.ErrOutcomeUnknown) {
			t.Fatalf("Create = %v, want a certain failure: its seq was voided", err)
		}
		third, _ := createSeqd(t, s, "fail", newOrder(t, ids, 3))
		proxy.Take()
		page, total, err := s.Page(ctx, "fail", 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if total != 2 || len(page) != 2 || page[0].DocumentID != third.DocumentID {
			t.Errorf("total %d, %d orders, want 2 and the third first", total, len(page))
		}
		if got, want := env.Operations(proxy.Take()), "Query:OrdersTable=2"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
	})
	t.Run("VanishedCreateIsVoidedByAReader", func(t *testing.T) {
		createSeqd(t, s, "gone", newOrder(t, ids, 1))
		if _, err := s.Reserve(ctx, "gone"); err != nil { // and never stored
			t.Fatal(err)
		}
		old := newOrder(t, ids, 3)
		old.CreatedAt = stampduty.FormatTime(time.Now().Add(-2 * store.DeadAfter))
		createSeqd(t, s, "gone", old)
		for i, want := range []string{"Query:OrdersTable=5 UpdateItem:OrdersTable=2", "Query:OrdersTable=2"} {
			proxy.Take()
			page, total, err := s.Page(ctx, "gone", 1, 10)
			if err != nil {
				t.Fatal(err)
			}
			if total != 2 || len(page) != 2 {
				t.Errorf("read %d: total %d, %d orders, want 2", i+1, total, len(page))
			}
			// The first read meets the hole (the range, again consistently),
			// voids it (marker, set), and reads again; the next is a read.
			if got := env.Operations(proxy.Take()); got != want {
				t.Errorf("read %d: calls = %s, want %s", i+1, got, want)
			}
		}
	})
	t.Run("ALatePutAfterItsVoidTakesAnotherSeq", func(t *testing.T) {
		seq, err := s.Reserve(ctx, "late")
		if err != nil {
			t.Fatal(err)
		}
		if voided, err := s.Void(ctx, "late", seq); err != nil || !voided {
			t.Fatalf("Void = %v, %v", voided, err)
		}
		got, err := s.Put(ctx, "late", seq, newOrder(t, ids, 1))
		if err != nil || got == seq {
			t.Fatalf("Put = %d, %v; want a seq other than the void %d", got, err, seq)
		}
		assertList(t, s, "late", 1)
	})
	t.Run("PagesSkipVoidsAtOneCost", func(t *testing.T) {
		var want []string // newest last
		for i := 1; i <= 30; i++ {
			if i%4 == 0 || i == 29 {
				seq, err := s.Reserve(ctx, "pages")
				if err == nil {
					_, err = s.Void(ctx, "pages", seq)
				}
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			o, _ := createSeqd(t, s, "pages", newOrder(t, ids, i))
			want = append(want, o.DocumentID)
		}
		slices.Reverse(want)
		for page := 1; page <= 4; page++ {
			proxy.Take()
			got, total, err := s.Page(ctx, "pages", page, 7)
			if err != nil {
				t.Fatal(err)
			}
			if calls := env.Operations(proxy.Take()); calls != "Query:OrdersTable=2" {
				t.Errorf("page %d: calls = %s, want two Queries", page, calls)
			}
			w := want[min(len(want), (page-1)*7):min(len(want), page*7)]
			if total != len(want) || fmt.Sprint(docs(got)) != fmt.Sprint(w) {
				t.Errorf("page %d: total %d, orders %v; want %d, %v", page, total, docs(got), len(want), w)
			}
		}
	})
}

func docs(os []stampduty.Order) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.DocumentID
	}
	return out
}

// TestOrdersStoredBeforeTheCounter: a caller whose orders were numbered by
// the newest seq (no counter item) goes on after its newest order, also
// when its first creates under the counter come all at once.
func TestOrdersStoredBeforeTheCounter(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 100)
	s := db.Orders(env.Table("OrdersTable"))
	for seq := int64(1); seq <= 5; seq++ { // as the old create stored them: Put at newest+1
		if _, err := s.Put(ctx, "old", seq, newOrder(t, ids, int(seq))); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.Count(ctx, "old"); err != nil || n != 5 {
		t.Fatalf("Count = %d, %v before the counter, want 5", n, err)
	}
	proxy.Take()
	var wg sync.WaitGroup
	seqs := make([]int64, 16)
	for i := range seqs {
		wg.Go(func() { _, seqs[i] = createSeqd(t, s, "old", newOrder(t, ids, 10+i)) })
	}
	wg.Wait()
	if got := failedConditions(proxy.Take()); got != 0 {
		t.Errorf("%d failed conditional writes, want 0", got)
	}
	slices.Sort(seqs)
	if seqs[0] != 6 || seqs[len(seqs)-1] != 21 {
		t.Errorf("seqs %v, want 6..21", seqs)
	}
	assertList(t, s, "old", 21)
}

// aliceAndBob stores n orders of alice's, then 10 of bob's, through a
// proxy, and returns their documentIds in order.
func aliceAndBob(t *testing.T, n int) (env *storetest.Env, proxy *storetest.Proxy, s *store.Orders, mine, theirs []string) {
	env, db, proxy, ids := proxiedStore(t, int64(3*(n+10)))
	s = db.Orders(env.Table("OrdersTable"))
	for i := range n {
		o, _ := createSeqd(t, s, "alice", newOrder(t, ids, i))
		mine = append(mine, o.DocumentID)
	}
	for i := range 10 {
		o, _ := createSeqd(t, s, "bob", newOrder(t, ids, i))
		theirs = append(theirs, o.DocumentID)
	}
	return env, proxy, s, mine, theirs
}

// TestInByBatch: filters[documentId][$in] of 100 ids spread thinner than
// denseRange's (one in three of the caller's orders) is one BatchGetItem
// (two at most, with the retry of unprocessed keys) and returns exactly
// the caller's orders among them, newest first: never another caller's,
// whose ids name slots of this caller's that hold other orders.
func TestInByBatch(t *testing.T) {
	ctx := context.Background()
	env, proxy, s, mine, theirs := aliceAndBob(t, 300)
	var asked []string
	for i := 0; i < len(mine); i += 3 {
		asked = append(asked, mine[i])
	}
	proxy.Take()
	got, err := s.ByDocuments(ctx, "alice", asked)
	if err != nil {
		t.Fatal(err)
	}
	calls := proxy.Take()
	if len(calls) > 2 || env.Operations(calls) != "BatchGetItem:OrdersTable=1" {
		t.Errorf("calls = %s, want one BatchGetItem", env.Operations(calls))
	}
	want := slices.Clone(asked)
	slices.Reverse(want)
	if fmt.Sprint(docs(got)) != fmt.Sprint(want) {
		t.Errorf("found %d orders, want the 100 asked, newest first", len(got))
	}
	got, err = s.ByDocuments(ctx, "alice", append(slices.Clone(theirs), mine[3], mine[3]))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(docs(got)) != fmt.Sprint([]string{mine[3]}) {
		t.Errorf("with another caller's ids: found %v, want only %s", docs(got), mine[3])
	}
}

// TestInByRange: filters[documentId][$in] of 100 ids that are a run of the
// caller's orders (a page of its list) is one Query of their seqs' range,
// and returns exactly the caller's orders among them, newest first: never
// another caller's, whose ids name slots of this caller's in the range,
// nor an order of the range that was not asked for.
func TestInByRange(t *testing.T) {
	ctx := context.Background()
	env, proxy, s, mine, theirs := aliceAndBob(t, 120)
	for _, tc := range []struct {
		name       string
		asked      []string
		want       []string // oldest first
		operations string   // "": not checked (ids not found are looked up in the index)
	}{
		{"AHundredInARow", mine[10:110], mine[10:110], "Query:OrdersTable=1"},
		{"EveryOther", []string{mine[2], mine[4], mine[6], mine[8]}, []string{mine[2], mine[4], mine[6], mine[8]}, "Query:OrdersTable=1"},
		{"AnotherCallersIds", append(slices.Clone(theirs), mine[3], mine[3]), []string{mine[3]}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy.Take()
			got, err := s.ByDocuments(ctx, "alice", tc.asked)
			if err != nil {
				t.Fatal(err)
			}
			if calls := proxy.Take(); tc.operations != "" && env.Operations(calls) != tc.operations {
				t.Errorf("calls = %s, want %s", env.Operations(calls), tc.operations)
			}
			want := slices.Clone(tc.want)
			slices.Reverse(want)
			if fmt.Sprint(docs(got)) != fmt.Sprint(want) {
				t.Errorf("found %v, want %v", docs(got), want)
			}
		})
	}
}
