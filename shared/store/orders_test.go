package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"stampduty/shared/config"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// openThroughProxy returns a store opened the way a function opens it
// (store.Open: the SDK's standard retryer, 3 attempts of at most
// store.AttemptTimeout each), talking to env's engine through a new
// recording proxy.
func openThroughProxy(t *testing.T, env *storetest.Env) (*store.DB, *storetest.Proxy) {
	t.Helper()
	p := env.NewProxy()
	return store.Open(config.New(env.Getenv("CreateOrderFunction", nil))), p
}

// onPut returns a proxy fault function that applies f to the nth PutItem
// (from 1) on table and forwards every other request untouched. first runs
// as the first PutItem on table arrives, before it is forwarded.
func onPut(table string, nth int64, f storetest.Fault, first func()) func(storetest.ProxyCall) *storetest.Fault {
	var n atomic.Int64
	return func(c storetest.ProxyCall) *storetest.Fault {
		if c.Operation != "PutItem" || c.Table != table {
			return nil
		}
		i := n.Add(1)
		if i == 1 {
			first()
		}
		if i == nth {
			return &f
		}
		return nil
	}
}

// TestCreateOnceWhenTheAnswerIsLost: when DynamoDB applies an order's
// PutItem but its answer never reaches the function (the connection drops,
// or the answer comes after the attempt's timeout), the SDK's retry of that
// PutItem must not make Create store the order a second time.
func TestCreateOnceWhenTheAnswerIsLost(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	db, proxy := openThroughProxy(t, env)
	table := env.Table("OrdersTable")
	ordersTable := db.Orders(table)
	direct := env.DB() // straight to the engine, around the proxy
	ids := direct.IDs(env.Table("CountersTable"), 30)

	for _, tc := range []struct {
		name  string
		fault storetest.Fault
		// rival, when set, stores another order of the owner just before
		// Create's first PutItem arrives, so that the first PutItem loses
		// the race for its seq and the lost answer is the second one's.
		rival      bool
		wantOrders int
	}{
		{"DroppedAnswer", storetest.Fault{Drop: true}, false, 1},
		{"DelayedAnswer", storetest.Fault{Delay: 2 * store.AttemptTimeout}, false, 1},
		{"DroppedAnswerAfterALostRace", storetest.Fault{Drop: true}, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner := "owner-" + tc.name
			o := newOrder(t, ids, 1)
			nth, first := int64(1), func() {}
			if tc.rival {
				rival := newOrder(t, ids, 2)
				nth, first = 2, func() {
					if _, err := direct.Orders(table).Create(ctx, owner, rival); err != nil {
						t.Errorf("rival create: %v", err)
					}
				}
			}
			proxy.SetFault(onPut(table, nth, tc.fault, first))
			proxy.Take()
			seq, err := ordersTable.Create(ctx, owner, o)
			proxy.SetFault(nil)
			t.Logf("Create = %d, %v; calls: %s", seq, err, env.Operations(proxy.Take()))
			if err != nil && !errors.Is(err, orders.ErrOutcomeUnknown) {
				t.Fatalf("Create = %v, want success or an outcome-unknown error", err)
			}
			assertStoredOnce(t, direct.Orders(table), owner, o.DocumentID, tc.wantOrders)
		})
	}
}

// assertStoredOnce checks that owner has want orders and that exactly one of
// them has documentId doc.
func assertStoredOnce(t *testing.T, orders *store.Orders, owner, doc string, want int) {
	t.Helper()
	ctx := context.Background()
	n, err := orders.Count(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if got := n; got != want {
		t.Errorf("Count = %d, want %d", got, want)
	}
	page, total, err := orders.Page(ctx, owner, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := total; got != want {
		t.Errorf("Page total = %d, want %d", got, want)
	}
	if got, want := countDoc(page, doc), 1; got != want {
		t.Errorf("order %s listed %d times, want %d", doc, got, want)
	}
}

func countDoc(orders []stampduty.Order, doc string) int {
	n := 0
	for _, o := range orders {
		if o.DocumentID == doc {
			n++
		}
	}
	return n
}
