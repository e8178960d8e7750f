package main

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// TestWebhookEventUnits measures section 6 over dynalite with 10 events a
// step and checks each step's calls and units against the access pattern of
// the table design (shared/store/README.md): a change in how the dispatcher reads or
// writes shows here.
func TestWebhookEventUnits(t *testing.T) {
	env := storetest.New(t)
	ctx := context.Background()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localdb.Seed(ctx, env.DB(), env.FixtureIDs(), env.Table, filepath.Join(root, localdb.SampleCatalogue), false); err != nil {
		t.Fatal(err)
	}
	body, err := orderBody(`{"amount": 20, "considerationPrice": 0, "purpose": "Affidavit", "state": "Karnataka", "paidBy": "First Party",
		"firstPartyMobileNumber": "9876543210", "firstPartyName": "Asha Rao", "secondPartyName": "Vikram Shah"}`)
	if err != nil {
		t.Fatal(err)
	}
	direct := env.DB()
	db, proxy := env.ProxiedDB()
	const n = 10
	e := &eventBench{db: db, direct: direct, proxy: proxy, table: env.Table, body: body, n: n}
	var r dispatchResults
	if err := e.measure(ctx, &r); err != nil {
		t.Fatal(err)
	}
	// The expected calls per event and units by DynamoDB's rules, by step
	// and kind of call (Read -1: a Query's share, which depends on sizes).
	// Kinds with no calls and no writes (an extra webhook's share of the
	// same Query) are left out.
	share, shards := 1.0/n, float64(store.Shards+1) // a delivery pass reads every shard and the unsharded key
	relay := map[string]usage{
		"Scan OrdersTable outbox": {share, -1, 0},    // a pass is one Scan: the n outboxes are one page
		"GetItem WebhooksTable":   {share, share, 0}, // consistent: 1 RCU
		"PutItem DeliveriesTable": {1, 0, 3},         // the job, its due and waiting entries
		"UpdateItem OrdersTable":  {1, 0, 2},         // the order and its outbox entry (the keys-only entries are not written)
	}
	deliver := map[string]usage{
		"Query DeliveriesTable due": {shards * share, -1, 0},
		// The webhook read again right before each attempt (consistent:
		// 1 RCU); no waiting Query: an order's first event waits for none.
		"GetItem WebhooksTable": {1, 1, 0},
		// The lease (the job and its due entry: 2).
		"UpdateItem DeliveriesTable": {1, 0, 2},
		// The attempt record (1), then the job after the attempt (done:
		// the job, its due and waiting entries removed: 3), each a
		// BatchWriteItem that the attempts ending together share: at most
		// 2 calls an event (one attempt at a time, but up to recordDepth
		// lanes writing their records, so fewer when they group).
		"BatchWriteItem DeliveriesTable": {2, 0, 4},
	}
	want := map[string]map[string]usage{
		stepRelay:      relay,
		stepRelayExtra: {"PutItem DeliveriesTable": {1, 0, 3}},
		stepDeliver:    deliver,
		stepDeliverExtra: {"GetItem WebhooksTable": {1, 1, 0},
			"UpdateItem DeliveriesTable": {1, 0, 2}, "BatchWriteItem DeliveriesTable": {2, 0, 4}},
		// A failed attempt also moves the job's next, which the waiting
		// index includes: its entry is rewritten (1 more).
		stepRetry: {"Query DeliveriesTable due": {shards * share, -1, 0}, "GetItem WebhooksTable": {1, 1, 0},
			"UpdateItem DeliveriesTable": {1, 0, 2}, "BatchWriteItem DeliveriesTable": {2, 0, 5}},
		stepEmpty: {"Scan OrdersTable outbox": {1, 0.5, 0}, "Query DeliveriesTable due": {shards, shards / 2, 0}},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	// grouped are the calls that attempts ending together share: between
	// 1/n (all of a pass's in one) and the figure above (none shared).
	grouped := func(k string, g, w float64) bool {
		return strings.HasPrefix(k, "BatchWriteItem ") && g <= w+1e-9 && g >= w/n-1e-9
	}
	for _, s := range stepOrder {
		t.Run(s, func(t *testing.T) {
			got := map[string]usage{}
			for _, k := range r.Steps[s].Kinds {
				if u := r.Steps[s].By[k]; u.Calls != 0 || u.Write != 0 {
					got[k] = u
				}
			}
			for k, w := range want[s] {
				g, ok := got[k]
				if !ok || !(near(g.Calls, w.Calls) || grouped(k, g.Calls, w.Calls)) || !near(g.Write, w.Write) || (w.Read >= 0 && !near(g.Read, w.Read)) || (w.Read < 0 && g.Read <= 0) {
					t.Errorf("%s: got %+v, want %+v", k, g, w)
				}
			}
			for k, g := range got {
				if _, ok := want[s][k]; !ok {
					t.Errorf("%s: %+v, a call the access pattern does not have", k, g)
				}
			}
		})
	}
	t.Run("OrderSizeMeasured", func(t *testing.T) {
		// The create writes the item and its three index entries, each
		// under 1 KB for this order with its event.
		if r.OrderBytes < 500 || r.OrderBytes > 1024 || r.OrderWrite != 4 {
			t.Errorf("the order with its event: %d bytes, %v WCU; want 500–1024 bytes, 4 WCU", r.OrderBytes, r.OrderWrite)
		}
	})
	t.Run("EveryStepTimed", func(t *testing.T) {
		for _, s := range []string{stepRelay, stepDeliver, stepRetry} {
			if r.Wall[s] <= 0 {
				t.Errorf("%s: wall time %v", s, r.Wall[s])
			}
		}
	})
}
