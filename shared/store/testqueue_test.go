package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
)

// TestTestOrdersQueueApart: test orders (an owner key ending ~test) wait in
// queues of their own (test#<status>#<nn>), so the live queue, its pages
// and counts never read them, and the test queue reads only them; their
// moves, their papers, the stale-entry cleanup and the backfill keep them
// there (test-mode.md: "Test orders never appear in the operators' queue
// ... unless asked for, and never count in live figures").
func TestTestOrdersQueueApart(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 200)
	proxy.SetMode(storetest.Account)
	ords := db.Orders(env.Table("OrdersTable"))
	const caller = "acme"
	test := stampduty.TestOwnerOf(caller)

	create := func(t *testing.T, owner string, o stampduty.Order) orders.Stored {
		t.Helper()
		seq, err := ords.Reserve(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		o.DocumentID = stampduty.WithSeq(o.DocumentID, seq)
		if _, err := ords.Put(ctx, owner, seq, o); err != nil {
			t.Fatal(err)
		}
		s, err := ords.Owned(ctx, owner, o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// docs lists the documentIds of status's queue (live or test), every
	// page of size, and checks each page's calls.
	docs := func(t *testing.T, status string, testMode bool, size int) []string {
		t.Helper()
		queries := 17 // the 16 shards and the bare status
		if testMode {
			queries = 16 // test orders came after the shards
		}
		var got []string
		for cursor := ""; ; {
			proxy.Take()
			page, next, err := ords.Queue(ctx, status, testMode, cursor, size)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("Query:OrdersTable/index/queue-shards=%d", queries)
			if calls := env.Operations(proxy.Take()); !strings.Contains(calls+" ", want+" ") {
				t.Errorf("a %s page (test %v): calls %s, want %s", status, testMode, calls, want)
			}
			for _, o := range page {
				got = append(got, o.DocumentID)
			}
			if cursor = next; cursor == "" {
				return got
			}
		}
	}
	// inQueue is the documentIds of stored, in queue order.
	inQueue := func(stored ...orders.Stored) []string {
		slices.SortFunc(stored, func(a, b orders.Stored) int {
			return strings.Compare(a.CreatedAt+"#"+a.DocumentID, b.CreatedAt+"#"+b.DocumentID)
		})
		var out []string
		for _, s := range stored {
			out = append(out, s.DocumentID)
		}
		return out
	}
	qsOf := func(t *testing.T, owner, seq string) string {
		t.Helper()
		item := getItem(t, env, "OrdersTable", map[string]types.AttributeValue{"owner": avS(owner), "seq": avN(seq)})
		if v, ok := item["qs"].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}

	var lives, tests []orders.Stored
	for i := range 3 {
		lives = append(lives, create(t, caller, newOrder(t, ids, i)))
	}
	for i := range 25 {
		tests = append(tests, create(t, test, newOrder(t, ids, 10+i)))
	}
	papers := create(t, test, newPapers(t, ids, 2)) // a test order of two papers
	tests = append(tests, papers)

	t.Run("a test order's entry is in the test queue's shard, a live order's in the live queue's", func(t *testing.T) {
		for _, s := range lives {
			if got, want := qsOf(t, s.Owner, fmt.Sprint(s.Seq)), "Pending#"+shardOf(s.DocumentID); got != want {
				t.Errorf("live order %s: qs = %s, want %s", s.DocumentID, got, want)
			}
		}
		for _, s := range tests {
			if got, want := qsOf(t, s.Owner, fmt.Sprint(s.Seq)), "test#Pending#"+shardOf(s.DocumentID); got != want {
				t.Errorf("test order %s: qs = %s, want %s", s.DocumentID, got, want)
			}
		}
	})
	t.Run("the live queue lists the live orders only, the test queue the test orders only", func(t *testing.T) {
		if got, want := docs(t, stampduty.StatusPending, false, 25), inQueue(lives...); !slices.Equal(got, want) {
			t.Errorf("live Pending = %v\nwant %v", got, want)
		}
		if got, want := docs(t, stampduty.StatusPending, true, 10), inQueue(tests...); !slices.Equal(got, want) {
			t.Errorf("test Pending = %v\nwant %v", got, want)
		}
	})
	t.Run("a test queue page of 25 costs 17 calls", func(t *testing.T) {
		proxy.Take()
		page, _, err := ords.Queue(ctx, stampduty.StatusPending, true, "", 25)
		if err != nil {
			t.Fatal(err)
		}
		calls := proxy.Take()
		var rcu float64
		for _, c := range calls {
			rcu += c.Billed.Read
		}
		if got, want := len(calls), 17; got != want || len(page) != 25 {
			t.Errorf("a test page of %d orders: %d calls (%s), want %d", len(page), got, env.Operations(calls), want)
		}
		t.Logf("a mode=test page of 25: %s, %.1f RCU", env.Operations(calls), rcu)
	})
	t.Run("a cursor of one queue is refused by the other", func(t *testing.T) {
		_, next, err := ords.Queue(ctx, stampduty.StatusPending, true, "", 2)
		if err != nil || next == "" {
			t.Fatalf("test page: %q, %v", next, err)
		}
		if _, _, err := ords.Queue(ctx, stampduty.StatusPending, false, next, 2); stampduty.ErrorCode(err) != stampduty.EINVALID {
			t.Errorf("a test cursor on the live queue: %v, want EINVALID", err)
		}
		_, next, err = ords.Queue(ctx, stampduty.StatusPending, false, "", 1)
		if err != nil || next == "" {
			t.Fatalf("live page: %q, %v", next, err)
		}
		if _, _, err := ords.Queue(ctx, stampduty.StatusPending, true, next, 2); stampduty.ErrorCode(err) != stampduty.EINVALID {
			t.Errorf("a live cursor on the test queue: %v, want EINVALID", err)
		}
	})
	t.Run("live counts leave test orders out", func(t *testing.T) {
		for _, c := range []struct {
			test bool
			want int
		}{{false, len(lives)}, {true, len(tests)}} {
			if got, err := ords.QueueCount(ctx, stampduty.StatusPending, c.test); err != nil || got != c.want {
				t.Errorf("QueueCount(Pending, test %v) = %d, %v; want %d", c.test, got, err, c.want)
			}
		}
	})
	t.Run("a test order's moves and papers stay in the test queue", func(t *testing.T) {
		one := tests[0]
		if err := ords.Replace(ctx, one, moved(t, one.Order, "REF-T")); err != nil {
			t.Fatal(err)
		}
		// Paper 1 of the order of two: its own item, in the test queue.
		s, err := ords.Owned(ctx, test, papers.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		if err := ords.Replace(ctx, s, movePaper(t, s.Order, 0, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-P1"})); err != nil {
			t.Fatal(err)
		}
		if got, want := qsOf(t, test, fmt.Sprintf("%d.01", papers.Seq)), "test#Created#"+shardOf(papers.DocumentID); got != want {
			t.Errorf("the moved paper's item: qs = %s, want %s", got, want)
		}
		if got := docs(t, stampduty.StatusCreated, false, 25); len(got) != 0 {
			t.Errorf("live Created = %v, want none", got)
		}
		if got, want := docs(t, stampduty.StatusCreated, true, 25), inQueue(one, papers); !slices.Equal(got, want) {
			t.Errorf("test Created = %v, want %v", got, want)
		}
		if got, want := docs(t, stampduty.StatusPending, true, 100), inQueue(tests[1:]...); !slices.Equal(got, want) {
			t.Errorf("test Pending = %v\nwant %v (the order of two waits while its paper 2 does)", got, want)
		}
		// Paper 2 moves too: the order's own Pending entry is stale, and the
		// next page of the test queue drops it.
		if s, err = ords.Owned(ctx, test, papers.DocumentID); err != nil {
			t.Fatal(err)
		}
		if err := ords.Replace(ctx, s, movePaper(t, s.Order, 1, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-P2"})); err != nil {
			t.Fatal(err)
		}
		if got, want := docs(t, stampduty.StatusPending, true, 100), inQueue(tests[1:len(tests)-1]...); !slices.Equal(got, want) {
			t.Errorf("test Pending after both papers moved = %v\nwant %v", got, want)
		}
		if got := qsOf(t, test, fmt.Sprint(papers.Seq)); got != "" {
			t.Errorf("the order's own item after the page: qs = %s, want the stale entry dropped", got)
		}
		if got, err := ords.QueueCount(ctx, stampduty.StatusCreated, false); err != nil || got != 0 {
			t.Errorf("live Created count = %d, %v; want 0", got, err)
		}
		if got, err := ords.QueueCount(ctx, stampduty.StatusCreated, true); err != nil || got != 2 {
			t.Errorf("test Created count = %d, %v; want 2", got, err)
		}
	})
	t.Run("the backfill moves test entries stored in the live queue to the test queue", func(t *testing.T) {
		// As the release before stored them: a test order's item and a test
		// paper's item with live queue keys.
		moveTo := func(owner, seq, qs string) {
			item := getItem(t, env, "OrdersTable", map[string]types.AttributeValue{"owner": avS(owner), "seq": avN(seq)})
			item["qs"] = avS(qs)
			putItem(t, env, "OrdersTable", item)
		}
		two := tests[1]
		moveTo(test, fmt.Sprint(two.Seq), "Pending#"+shardOf(two.DocumentID))
		moveTo(test, fmt.Sprintf("%d.02", papers.Seq), "Created#"+shardOf(papers.DocumentID))
		if got := docs(t, stampduty.StatusPending, false, 25); !slices.Contains(got, two.DocumentID) {
			t.Fatalf("live Pending = %v: the test order stored the old way is not in it (the fixture is wrong)", got)
		}
		n, err := ords.Backfill(ctx)
		if err != nil || n != 2 {
			t.Fatalf("Backfill = %d, %v; want 2 (the test order's and the test paper's entries)", n, err)
		}
		if got, want := qsOf(t, test, fmt.Sprint(two.Seq)), "test#Pending#"+shardOf(two.DocumentID); got != want {
			t.Errorf("after Backfill: qs = %s, want %s", got, want)
		}
		if got, want := qsOf(t, test, fmt.Sprintf("%d.02", papers.Seq)), "test#Created#"+shardOf(papers.DocumentID); got != want {
			t.Errorf("the paper after Backfill: qs = %s, want %s", got, want)
		}
		if got, want := docs(t, stampduty.StatusPending, false, 25), inQueue(lives...); !slices.Equal(got, want) {
			t.Errorf("live Pending after Backfill = %v, want %v", got, want)
		}
		if got, want := qsOf(t, caller, fmt.Sprint(lives[0].Seq)), "Pending#"+shardOf(lives[0].DocumentID); got != want {
			t.Errorf("a live order after Backfill: qs = %s, want %s (unchanged)", got, want)
		}
		if n, err := ords.Backfill(ctx); err != nil || n != 0 {
			t.Errorf("second Backfill = %d, %v; want 0", n, err)
		}
	})
}
