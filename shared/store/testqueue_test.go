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
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// testQueueFixture is three live orders of caller acme and 25 test orders
// of its test principal, with a test order of two papers last, in a
// test's tables read through a proxy that accounts for the units;
// TestTestOrdersQueueApart's steps move them in turn, each leaving them as
// the next expects.
type testQueueFixture struct {
	ctx          context.Context
	env          *storetest.Env
	proxy        *storetest.Proxy
	ords         *store.Orders
	caller, test string // the live owner and its test principal

	lives, tests []orders.Stored
	papers       orders.Stored // the test order of two papers, tests' last
}

// newTestQueueFixture stores the live and the test orders.
func newTestQueueFixture(t *testing.T) *testQueueFixture {
	env, db, proxy, ids := proxiedStore(t, 200)
	proxy.SetMode(storetest.Account)
	f := &testQueueFixture{ctx: context.Background(), env: env, proxy: proxy, ords: db.Orders(env.Table("OrdersTable")), caller: "acme"}
	f.test = stampduty.TestOwnerOf(f.caller)
	for i := range 3 {
		f.lives = append(f.lives, f.create(t, f.caller, newOrder(t, ids, i)))
	}
	for i := range 25 {
		f.tests = append(f.tests, f.create(t, f.test, newOrder(t, ids, 10+i)))
	}
	f.papers = f.create(t, f.test, newPapers(t, ids, 2)) // a test order of two papers
	f.tests = append(f.tests, f.papers)
	return f
}

// create stores o as owner's next order and returns it as read.
func (f *testQueueFixture) create(t *testing.T, owner string, o stampduty.Order) orders.Stored {
	t.Helper()
	return read(t, f.ords, owner, storetest.PutOrder(t, f.ords, owner, o).DocumentID)
}

// docs lists the documentIds of status's queue (live or test), every
// page of size, and checks each page's calls.
func (f *testQueueFixture) docs(t *testing.T, status string, testMode bool, size int) []string {
	t.Helper()
	queries := 17 // the 16 shards and the bare status
	if testMode {
		queries = 16 // test orders came after the shards
	}
	var got []string
	for cursor := ""; ; {
		f.proxy.Take()
		page, next, err := f.ords.Queue(f.ctx, status, testMode, cursor, size)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("Query:OrdersTable/index/queue-shards=%d", queries)
		if calls := f.env.Operations(f.proxy.Take()); !strings.Contains(calls+" ", want+" ") {
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

// queueOrder is the documentIds of stored, in queue order (it sorts stored).
func queueOrder(stored ...orders.Stored) []string {
	slices.SortFunc(stored, func(a, b orders.Stored) int {
		return strings.Compare(a.CreatedAt+"#"+a.DocumentID, b.CreatedAt+"#"+b.DocumentID)
	})
	var out []string
	for _, s := range stored {
		out = append(out, s.DocumentID)
	}
	return out
}

// qsOf is the queue partition key (qs) of owner's item at seq, "" when it
// has none.
func (f *testQueueFixture) qsOf(t *testing.T, owner, seq string) string {
	t.Helper()
	item := getItem(t, f.env, "OrdersTable", map[string]types.AttributeValue{"owner": avS(owner), "seq": avN(seq)})
	if v, ok := item["qs"].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// TestTestOrdersQueueApart: test orders (an owner key ending ~test) wait in
// queues of their own (test#<status>#<nn>), so the live queue, its pages
// and counts never read them, and the test queue reads only them; their
// moves, their papers, the stale-entry cleanup and the backfill keep them
// there (test-mode.md: "Test orders never appear in the operators' queue
// ... unless asked for, and never count in live figures").
func TestTestOrdersQueueApart(t *testing.T) {
	f := newTestQueueFixture(t)
	t.Run("a test order's entry is in the test queue's shard, a live order's in the live queue's", f.entriesInTheirModesShards)
	t.Run("the live queue lists the live orders only, the test queue the test orders only", f.eachQueueListsItsMode)
	t.Run("a test queue page of 25 costs 17 calls", f.testPageCalls)
	t.Run("a cursor of one queue is refused by the other", f.cursorsStayInTheirQueue)
	t.Run("live counts leave test orders out", f.countsLeaveTheOtherModeOut)
	t.Run("a test order's moves and papers stay in the test queue", f.movesStayInTheTestQueue)
	t.Run("the backfill moves test entries stored in the live queue to the test queue", f.backfillMovesTestEntries)
}

func (f *testQueueFixture) entriesInTheirModesShards(t *testing.T) {
	for _, s := range f.lives {
		if got, want := f.qsOf(t, s.Owner, fmt.Sprint(s.Seq)), "Pending#"+shardOf(s.DocumentID); got != want {
			t.Errorf("live order %s: qs = %s, want %s", s.DocumentID, got, want)
		}
	}
	for _, s := range f.tests {
		if got, want := f.qsOf(t, s.Owner, fmt.Sprint(s.Seq)), "test#Pending#"+shardOf(s.DocumentID); got != want {
			t.Errorf("test order %s: qs = %s, want %s", s.DocumentID, got, want)
		}
	}
}

func (f *testQueueFixture) eachQueueListsItsMode(t *testing.T) {
	if got, want := f.docs(t, stampduty.StatusPending, false, 25), queueOrder(f.lives...); !slices.Equal(got, want) {
		t.Errorf("live Pending = %v\nwant %v", got, want)
	}
	if got, want := f.docs(t, stampduty.StatusPending, true, 10), queueOrder(f.tests...); !slices.Equal(got, want) {
		t.Errorf("test Pending = %v\nwant %v", got, want)
	}
}

func (f *testQueueFixture) testPageCalls(t *testing.T) {
	f.proxy.Take()
	page, _, err := f.ords.Queue(f.ctx, stampduty.StatusPending, true, "", 25)
	if err != nil {
		t.Fatal(err)
	}
	calls := f.proxy.Take()
	var rcu float64
	for _, c := range calls {
		rcu += c.Billed.Read
	}
	if got, want := len(calls), 17; got != want || len(page) != 25 {
		t.Errorf("a test page of %d orders: %d calls (%s), want %d", len(page), got, f.env.Operations(calls), want)
	}
	t.Logf("a mode=test page of 25: %s, %.1f RCU", f.env.Operations(calls), rcu)
}

func (f *testQueueFixture) cursorsStayInTheirQueue(t *testing.T) {
	_, next, err := f.ords.Queue(f.ctx, stampduty.StatusPending, true, "", 2)
	if err != nil || next == "" {
		t.Fatalf("test page: %q, %v", next, err)
	}
	if _, _, err := f.ords.Queue(f.ctx, stampduty.StatusPending, false, next, 2); stampduty.ErrorCode(err) != stampduty.EINVALID {
		t.Errorf("a test cursor on the live queue: %v, want EINVALID", err)
	}
	_, next, err = f.ords.Queue(f.ctx, stampduty.StatusPending, false, "", 1)
	if err != nil || next == "" {
		t.Fatalf("live page: %q, %v", next, err)
	}
	if _, _, err := f.ords.Queue(f.ctx, stampduty.StatusPending, true, next, 2); stampduty.ErrorCode(err) != stampduty.EINVALID {
		t.Errorf("a live cursor on the test queue: %v, want EINVALID", err)
	}
}

func (f *testQueueFixture) countsLeaveTheOtherModeOut(t *testing.T) {
	for _, c := range []struct {
		test bool
		want int
	}{{false, len(f.lives)}, {true, len(f.tests)}} {
		if got, err := f.ords.QueueCount(f.ctx, stampduty.StatusPending, c.test); err != nil || got != c.want {
			t.Errorf("QueueCount(Pending, test %v) = %d, %v; want %d", c.test, got, err, c.want)
		}
	}
}

func (f *testQueueFixture) movesStayInTheTestQueue(t *testing.T) {
	test, papers, tests := f.test, f.papers, f.tests
	one := tests[0]
	if err := f.ords.Replace(f.ctx, one, moved(t, one.Order, "REF-T")); err != nil {
		t.Fatal(err)
	}
	// Paper 1 of the order of two: its own item, in the test queue.
	s, err := f.ords.Owned(f.ctx, test, papers.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ords.Replace(f.ctx, s, movePaper(t, s.Order, 0, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-P1"})); err != nil {
		t.Fatal(err)
	}
	if got, want := f.qsOf(t, test, fmt.Sprintf("%d.01", papers.Seq)), "test#Created#"+shardOf(papers.DocumentID); got != want {
		t.Errorf("the moved paper's item: qs = %s, want %s", got, want)
	}
	if got := f.docs(t, stampduty.StatusCreated, false, 25); len(got) != 0 {
		t.Errorf("live Created = %v, want none", got)
	}
	if got, want := f.docs(t, stampduty.StatusCreated, true, 25), queueOrder(one, papers); !slices.Equal(got, want) {
		t.Errorf("test Created = %v, want %v", got, want)
	}
	if got, want := f.docs(t, stampduty.StatusPending, true, 100), queueOrder(tests[1:]...); !slices.Equal(got, want) {
		t.Errorf("test Pending = %v\nwant %v (the order of two waits while its paper 2 does)", got, want)
	}
	// Paper 2 moves too: the order's own Pending entry is stale, and the
	// next page of the test queue drops it.
	if s, err = f.ords.Owned(f.ctx, test, papers.DocumentID); err != nil {
		t.Fatal(err)
	}
	if err := f.ords.Replace(f.ctx, s, movePaper(t, s.Order, 1, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-P2"})); err != nil {
		t.Fatal(err)
	}
	if got, want := f.docs(t, stampduty.StatusPending, true, 100), queueOrder(tests[1:len(tests)-1]...); !slices.Equal(got, want) {
		t.Errorf("test Pending after both papers moved = %v\nwant %v", got, want)
	}
	if got := f.qsOf(t, test, fmt.Sprint(papers.Seq)); got != "" {
		t.Errorf("the order's own item after the page: qs = %s, want the stale entry dropped", got)
	}
	if got, err := f.ords.QueueCount(f.ctx, stampduty.StatusCreated, false); err != nil || got != 0 {
		t.Errorf("live Created count = %d, %v; want 0", got, err)
	}
	if got, err := f.ords.QueueCount(f.ctx, stampduty.StatusCreated, true); err != nil || got != 2 {
		t.Errorf("test Created count = %d, %v; want 2", got, err)
	}
}

func (f *testQueueFixture) backfillMovesTestEntries(t *testing.T) {
	test, papers, tests, lives := f.test, f.papers, f.tests, f.lives
	// As the release before stored them: a test order's item and a test
	// paper's item with live queue keys.
	moveTo := func(owner, seq, qs string) {
		item := getItem(t, f.env, "OrdersTable", map[string]types.AttributeValue{"owner": avS(owner), "seq": avN(seq)})
		item["qs"] = avS(qs)
		putItem(t, f.env, "OrdersTable", item)
	}
	two := tests[1]
	moveTo(test, fmt.Sprint(two.Seq), "Pending#"+shardOf(two.DocumentID))
	moveTo(test, fmt.Sprintf("%d.02", papers.Seq), "Created#"+shardOf(papers.DocumentID))
	if got := f.docs(t, stampduty.StatusPending, false, 25); !slices.Contains(got, two.DocumentID) {
		t.Fatalf("live Pending = %v: the test order stored the old way is not in it (the fixture is wrong)", got)
	}
	n, err := f.ords.Backfill(f.ctx)
	if err != nil || n != 2 {
		t.Fatalf("Backfill = %d, %v; want 2 (the test order's and the test paper's entries)", n, err)
	}
	if got, want := f.qsOf(t, test, fmt.Sprint(two.Seq)), "test#Pending#"+shardOf(two.DocumentID); got != want {
		t.Errorf("after Backfill: qs = %s, want %s", got, want)
	}
	if got, want := f.qsOf(t, test, fmt.Sprintf("%d.02", papers.Seq)), "test#Created#"+shardOf(papers.DocumentID); got != want {
		t.Errorf("the paper after Backfill: qs = %s, want %s", got, want)
	}
	if got, want := f.docs(t, stampduty.StatusPending, false, 25), queueOrder(lives...); !slices.Equal(got, want) {
		t.Errorf("live Pending after Backfill = %v, want %v", got, want)
	}
	if got, want := f.qsOf(t, f.caller, fmt.Sprint(lives[0].Seq)), "Pending#"+shardOf(lives[0].DocumentID); got != want {
		t.Errorf("a live order after Backfill: qs = %s, want %s (unchanged)", got, want)
	}
	if n, err := f.ords.Backfill(f.ctx); err != nil || n != 0 {
		t.Errorf("second Backfill = %d, %v; want 0", n, err)
	}
}
