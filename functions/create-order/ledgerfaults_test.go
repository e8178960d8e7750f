package main

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// The tests of this file break the money path where DynamoDB and Lambda
// can break it (accounts.md: "No lost answer, killed function, stalled
// DynamoDB or concurrent request breaks them") and check, after each,
// that no money is lost or doubled, and that one run of the reconciler
// repairs what is left to repair.

// money is the ledger and the orders of one stack, and the reconciler
// over them on a clock past its grace (what it runs on five minutes
// later).
type money struct {
	s      *functest.Stack
	ledger *store.Ledger
	ords   *store.Orders
	rec    *accounts.Reconciler
}

func newMoney(s *functest.Stack) *money {
	db := s.Env.DB()
	ledger := db.Ledger(s.Env.Table("LedgerTable"))
	later := func() time.Time { return time.Now().Add(2 * store.DeadAfter) }
	m := &money{s: s, ledger: ledger, ords: db.Orders(s.Env.Table("OrdersTable"))}
	m.rec = &accounts.Reconciler{Books: ledger, Orders: m.ords, Ledger: &accounts.Ledger{Store: ledger, Now: time.Now},
		Grace: store.DeadAfter, Now: later}
	return m
}

// reconcile runs the reconciler once and returns what it did.
func (m *money) reconcile(t *testing.T) accounts.Report {
	t.Helper()
	rep, err := m.rec.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// check fails t unless owner's money is whole (accounts.md's invariants):
// the ledger agrees with itself (storetest.CheckLedger), every stored
// order has its hold, and held is what the owner's stored orders hold by
// their state. It returns the account and the number of orders.
func (m *money) check(t *testing.T, owner string) (accounts.Account, int) {
	t.Helper()
	ctx := context.Background()
	a, es := storetest.CheckLedger(t, m.ledger, owner)
	ids := map[string]bool{}
	for _, e := range es {
		ids[e.ID] = true
	}
	placed, _, err := m.ords.Page(ctx, owner, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	var want accounts.Money
	for _, o := range placed {
		if p := o.PaymentNow(); p != nil {
			want += accounts.Money(p.HeldPaise)
		}
		if !ids[accounts.HoldID(o.DocumentID)] {
			t.Errorf("order %s stored without its hold", o.DocumentID)
		}
	}
	if a.Held != want {
		t.Errorf("held %s, the %d stored orders hold %s", a.Held, len(placed), want)
	}
	return a, len(placed)
}

// killedAfterHold is the ledger of a create whose function is killed right
// after the hold: runtime.Goexit ends the request's goroutine there,
// running nothing more of it (no order write, no unhold).
type killedAfterHold struct{ *accounts.Ledger }

func (k killedAfterHold) Hold(ctx context.Context, owner string, o stampduty.Order) (accounts.Applied, error) {
	if _, err := k.Ledger.Hold(ctx, owner, o); err != nil {
		return accounts.Applied{}, err
	}
	runtime.Goexit()
	return accounts.Applied{}, nil
}

// orderBody is body(nil) as the edge decodes it.
func orderBody(t *testing.T) *stampduty.OrderBody {
	t.Helper()
	members, err := function.DecodeObject([]byte(body(nil)))
	if err != nil {
		t.Fatal(err)
	}
	return stampduty.NewOrderBody(stampjson.Fields(members))
}

// TestLedgerFaults: a lost answer to the order's PutItem or to the
// account's UpdateItem, a function killed between the hold and the order,
// and a LedgerTable that stalls during a create, a charge and a cancel.
// After each, no money is lost or doubled, and one run of the reconciler
// makes exactly the repairs left to make (a second makes none).
func TestLedgerFaults(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	m := newMoney(s)
	owner := localdb.DevOwner
	create := func() functest.Response {
		return s.Invoke(functest.Request("POST", "/api/live-orders", "", functest.DevHeaders, body(nil)))
	}
	if r := create(); r.Status != 200 { // warm
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	first := func(op, table string, f storetest.Fault) (func(storetest.ProxyCall) *storetest.Fault, *atomic.Int32) {
		var n atomic.Int32
		return func(c storetest.ProxyCall) *storetest.Fault {
			if c.Operation == op && c.Table == s.Env.Table(table) && n.Add(1) == 1 {
				return &f
			}
			return nil
		}, &n
	}
	every := func(table string, ops ...string) func(storetest.ProxyCall) *storetest.Fault {
		return func(c storetest.ProxyCall) *storetest.Fault {
			for _, op := range ops {
				if c.Table == s.Env.Table(table) && (op == "" || c.Operation == op) {
					return &storetest.Fault{Hang: true}
				}
			}
			return nil
		}
	}
	// fulfiller moves and cancels orders with its payments over a ledger
	// reached through proxy.
	fulfiller := func(db *store.DB) *orders.Fulfiller {
		f := functest.Fulfiller(s.Env)
		f.Payments = &accounts.Ledger{Store: db.Ledger(s.Env.Table("LedgerTable")), Now: time.Now}
		return f
	}

	// lostAnswer creates with the first answer to op on table lost: the
	// request reaches the table, the SDK retries it.
	lostAnswer := func(op, table string) func(t *testing.T) {
		return func(t *testing.T) {
			f, n := first(op, table, storetest.Fault{Drop: true})
			s.Proxy.SetFault(f)
			defer s.Proxy.SetFault(nil)
			if r := create(); r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if n.Load() < 2 {
				t.Fatalf("%d %ss: the answer was not lost and retried", n.Load(), op)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		fault   func(t *testing.T) // makes the fault happen
		orders  int                // orders it adds
		repairs int                // what the reconciler has left to do
	}{
		{name: "LostOrderPutAnswer", orders: 1, fault: lostAnswer("PutItem", "OrdersTable")},
		{name: "LostAccountUpdateAnswer", orders: 1, fault: lostAnswer("UpdateItem", "LedgerTable")},
		{name: "KilledBetweenHoldAndOrder", repairs: 1, fault: func(t *testing.T) {
			db := s.Env.DB()
			c := &orders.Creator{Articles: db.Articles(s.Env.Table("ArticlesTable")), IDs: db.IDs(s.Env.Table("CountersTable"), store.IDBlock),
				Orders: m.ords, Payments: killedAfterHold{&accounts.Ledger{Store: m.ledger, Now: time.Now}}, Now: time.Now}
			b := orderBody(t)
			var wg sync.WaitGroup
			wg.Add(1)
			returned := false
			go func() {
				defer wg.Done()
				c.Create(context.Background(), owner, b, nil)
				returned = true
			}()
			wg.Wait()
			if returned {
				t.Fatal("the create returned: it was not killed after its hold")
			}
		}},
		{name: "LedgerStalledAtHold", fault: func(t *testing.T) {
			s.Proxy.SetFault(every("LedgerTable", ""))
			defer s.Proxy.SetFault(nil)
			if r := create(); r.Status != 503 {
				t.Fatalf("status %d, want 503: %s", r.Status, r.Body)
			}
		}},
		{name: "LedgerStalledAtHoldEntry", repairs: 2, fault: func(t *testing.T) {
			// The account's update lands, its entry's put stalls: the hold
			// is in the account alone, the create gives up its order.
			s.Proxy.SetFault(every("LedgerTable", "BatchWriteItem"))
			defer s.Proxy.SetFault(nil)
			if r := create(); r.Status != 503 {
				t.Fatalf("status %d, want 503: %s", r.Status, r.Body)
			}
		}},
		{name: "LedgerStalledAtCharge", orders: 1, repairs: 1, fault: func(t *testing.T) {
			if r := create(); r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			db, proxy := s.Env.ProxiedDB()
			t.Cleanup(proxy.Close)
			f := fulfiller(db)
			o := newestOrder(t, m, owner)
			ctx := context.Background()
			ref, cn := functest.NewNumbers()
			if _, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}, "op-1"); err != nil {
				t.Fatal(err)
			}
			proxy.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
				if c.Table == s.Env.Table("LedgerTable") {
					return &storetest.Fault{Hang: true}
				}
				return nil
			})
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if _, err := f.Advance(sctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Change{Status: stampduty.StatusProcured, CertificateNumber: cn}, "op-1"); err == nil {
				t.Fatal("the move answered OK with its charge stalled")
			}
			if got := newestOrder(t, m, owner).Fulfillments[0].Status; got != stampduty.StatusProcured {
				t.Fatalf("paper %s, want the move stored", got)
			}
		}},
		{name: "LedgerStalledAtCancel", orders: 1, repairs: 1, fault: func(t *testing.T) {
			if r := create(); r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			db, proxy := s.Env.ProxiedDB()
			t.Cleanup(proxy.Close)
			f := fulfiller(db)
			o := newestOrder(t, m, owner)
			proxy.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
				if c.Table == s.Env.Table("LedgerTable") {
					return &storetest.Fault{Hang: true}
				}
				return nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if _, err := f.Cancel(ctx, owner, o.DocumentID); err == nil {
				t.Fatal("the cancel answered OK with its release stalled")
			}
			if got := newestOrder(t, m, owner); got.CancelledAt == nil {
				t.Fatal("the cancel was not stored")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, n := m.check(t, owner)
			tc.fault(t)
			if rep := m.reconcile(t); rep.Repairs != tc.repairs || rep.Mismatches != 0 {
				t.Errorf("the reconciler's run: %+v, want %d repairs and no mismatch", rep, tc.repairs)
			}
			after, n2 := m.check(t, owner)
			if n2-n != tc.orders {
				t.Errorf("%d orders stored, want %d", n2-n, tc.orders)
			}
			if rep := m.reconcile(t); rep.Repairs != 0 || rep.Mismatches != 0 {
				t.Errorf("a second run: %+v, want nothing to do", rep)
			}
			t.Logf("%s: %d orders, %d repairs; held %s, charged %s", tc.name, tc.orders, tc.repairs, after.Held, after.Totals.Charges)
		})
	}
}

// newestOrder returns owner's newest order.
func newestOrder(t *testing.T, m *money, owner string) stampduty.Order {
	t.Helper()
	os, _, err := m.ords.Page(context.Background(), owner, 1, 1)
	if err != nil || len(os) != 1 {
		t.Fatal(os, err)
	}
	return os[0]
}

// TestParallelCreatesNeverPassTheLimit: a prepaid account (limit 0)
// credited for exactly n orders gets 3n creates at once (8 at a time):
// exactly n are created, the others answer 402 PaymentRequiredError, none
// a 5xx, and available ends at exactly 0.00 with the money whole.
func TestParallelCreatesNeverPassTheLimit(t *testing.T) {
	const n, parallel = 10, 8
	s := functest.New(t, "CreateOrderFunction", wire)
	m := newMoney(s)
	ctx := context.Background()
	owner := localdb.DevOwner
	const total = 200 // body()'s one paper of ₹200
	zero := accounts.Money(0)
	if _, err := m.ledger.Configure(ctx, owner, 0, &zero, nil, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ledger.Apply(ctx, owner, accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID("UTR-n"), Type: accounts.TypeCredit,
		Amount: accounts.Rupees(n * total), Reference: "UTR-n", By: accounts.ByAdmin, CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	statuses := make(chan int, 3*n)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for range 3 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := s.Invoke(functest.Request("POST", "/api/live-orders", "", functest.DevHeaders, body(nil)))
			if r.Status == 402 {
				if e := r.Error(t); e.Error.Name != "PaymentRequiredError" {
					t.Errorf("402 named %s", e.Error.Name)
				}
			}
			statuses <- r.Status
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	if count[200] != n || count[402] != 2*n || len(count) != 2 {
		t.Errorf("answers %v, want %d × 200 and %d × 402, nothing else", count, n, 2*n)
	}
	a, stored := m.check(t, owner)
	if stored != n {
		t.Errorf("%d orders stored, want %d", stored, n)
	}
	for _, o := range func() []stampduty.Order { os, _, _ := m.ords.Page(ctx, owner, 1, 100); return os }() {
		if o.StampDuty.TotalAmount != total {
			t.Fatalf("an order of %d, want %d: the test's arithmetic is off", o.StampDuty.TotalAmount, total)
		}
	}
	if av := a.Available(); av == nil || *av != 0 {
		t.Errorf("available %v, want exactly 0.00", av)
	}
}
