package store_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/store"
	"stampduty/shared/webhooks"
)

// sweep reads poller p's part of the outbox index to its end, limit
// orders a call, and returns the documentIds read and the calls made.
func sweep(t *testing.T, f *outboxFixture, p webhooks.Poller, limit int) ([]string, int) {
	t.Helper()
	var docs []string
	cursor, calls := "", 0
	for {
		ps, next, err := f.ords.Pending(f.ctx, p, cursor, limit)
		if err != nil {
			t.Fatal(err)
		}
		calls++
		for _, s := range ps {
			docs = append(docs, s.DocumentID)
		}
		if cursor = next; cursor == "" || calls > 100 {
			return docs, calls
		}
	}
}

// TestPollersSplitTheReads: poller i of n reads segment i of n of the
// outbox index (a parallel Scan, the unsharded "pending" included) and the
// due shards s with s mod n = i (the unsharded "due" poller 0's): every
// order with pending events and every due job is read by exactly one
// poller, through one Scan a page and one Query per shard of its own.
func TestPollersSplitTheReads(t *testing.T) {
	f := newOutboxFixture(t)
	var all []string
	for i := range 40 {
		s, _ := f.create(t, "split", 200+i)
		all = append(all, s.DocumentID)
		if i == 0 { // stored before the sharding
			key := map[string]types.AttributeValue{"owner": avS(s.Owner), "seq": avN(strconv.FormatInt(s.Seq, 10))}
			setS(t, f.ctx, f.env.Client, f.env.Table("OrdersTable"), key, "obp", "pending")
		}
	}
	d := newDeliveriesFixture(t)
	shardOf := map[string]int{} // by job id; -1: the unsharded key
	for i := range 48 {
		j := d.job
		j.ID = fmt.Sprintf("evt_p%023d", i)
		if ok, err := d.del.Put(d.ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		dp := store.JobDueShard(j.Owner+"#"+j.Webhook, j.ID)
		n, _ := strconv.Atoi(strings.TrimPrefix(dp, "due#"))
		shardOf[j.ID] = n
		if i == 0 {
			key := map[string]types.AttributeValue{"pk": avS(j.Owner + "#" + j.Webhook), "sk": avS("job#" + j.ID)}
			setS(t, d.ctx, d.env.Client, d.env.Table("DeliveriesTable"), key, "dp", "due")
			shardOf[j.ID] = -1
		}
	}
	at := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("Of%d", n), func(t *testing.T) {
			orderBy, jobBy := map[string]int{}, map[string]int{}
			for i := range n {
				p := webhooks.Poller{Index: i, Count: n}
				f.proxy.Take()
				docs, pages := sweep(t, f, p, 7)
				if got := f.env.Operations(f.proxy.Take()); got != fmt.Sprintf("Scan:OrdersTable/index/outbox=%d", pages) {
					t.Errorf("poller %d of %d: calls %s for %d pages, want one Scan a page", i, n, got, pages)
				}
				for _, doc := range docs {
					if prev, ok := orderBy[doc]; ok {
						t.Errorf("order %s read by pollers %d and %d of %d", doc, prev, i, n)
					}
					orderBy[doc] = i
				}
				db, proxy := d.env.ProxiedDB()
				js, err := db.Deliveries(d.env.Table("DeliveriesTable")).Due(d.ctx, p, at, 100)
				if err != nil {
					t.Fatal(err)
				}
				want := 0 // the Queries: one per shard of its own, and the unsharded key for poller 0
				for s := range store.Shards {
					if s%n == i {
						want++
					}
				}
				if i == 0 {
					want++
				}
				if got := d.env.Operations(proxy.Take()); got != fmt.Sprintf("Query:DeliveriesTable/index/due=%d", want) {
					t.Errorf("poller %d of %d: calls %s, want %d Queries", i, n, got, want)
				}
				for _, j := range js {
					if s := shardOf[j.ID]; (s < 0 && i != 0) || (s >= 0 && s%n != i) {
						t.Errorf("poller %d of %d read job %s of shard %d", i, n, j.ID, s)
					}
					if prev, ok := jobBy[j.ID]; ok {
						t.Errorf("job %s read by pollers %d and %d of %d", j.ID, prev, i, n)
					}
					jobBy[j.ID] = i
				}
			}
			if got := slices.Sorted(maps.Keys(orderBy)); !slices.Equal(got, slices.Sorted(slices.Values(all))) {
				t.Errorf("the pollers read %d orders, want the %d pending", len(got), len(all))
			}
			if got, want := len(jobBy), len(shardOf); got != want {
				t.Errorf("the pollers read %d due jobs, want %d", got, want)
			}
		})
	}
}

// TestSweepReachesTheEnd: a sweep of the outbox index returns every order
// pending when it starts, however many arrive while it goes on (here as
// many as it reads a page): the cursor is kept across calls, so a backlog
// is worked to its end before the sweep starts again, and no order waits
// behind newer ones for ever.
func TestSweepReachesTheEnd(t *testing.T) {
	f := newOutboxFixture(t)
	backlog := map[string]bool{}
	for i := range 30 {
		s, _ := f.create(t, "backlog", 300+i)
		backlog[s.DocumentID] = true
	}
	const limit = 5
	cursor, arrived, calls := "", 0, 1
	defer func() { t.Logf("the backlog of 30 read in %d pages of %d", calls-1, limit) }()
	for ; len(backlog) > 0; calls++ {
		if calls > 30 {
			t.Fatalf("%d orders of the backlog not read in %d pages of %d while %d newer arrived", len(backlog), calls-1, limit, arrived)
		}
		ps, next, err := f.ords.Pending(f.ctx, webhooks.Poller{}, cursor, limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ps { // relayed: out of the index
			delete(backlog, s.DocumentID)
			if err := f.ords.Relayed(f.ctx, s, eventIDs(s.Outbox)); err != nil {
				t.Fatal(err)
			}
		}
		cursor = next
		for range limit { // as many newer ones as a page holds
			f.create(t, "newer", 400+arrived)
			arrived++
		}
	}
}
