package main

import (
	"context"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// TestACreateThatCrossesLowTellsOnce: the create whose hold takes available
// below the caller's threshold puts the account.low_balance job of its
// subscribed webhook, with what that adds to the create (the flag marked,
// the webhooks read, the job put); the next create, still below, puts
// nothing and costs nothing more.
func TestACreateThatCrossesLowTellsOnce(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	ctx := context.Background()
	owner := localdb.DevOwner
	send := func() []storetest.ProxyCall {
		t.Helper()
		s.Proxy.Take()
		if r := s.Invoke(functest.Request("POST", "/api/live-orders", "", functest.DevHeaders, body(nil))); r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		return s.Env.Made(s.Proxy.Take())
	}
	send()
	total := functest.Account(t, s.Env, owner).Held // one order's
	ledger := s.Env.DB().Ledger(s.Env.Table("LedgerTable"))
	if _, err := ledger.Apply(ctx, owner, accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID("LOW-1"), Type: accounts.TypeCredit,
		Amount: 3 * total, By: accounts.ByAdmin, CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	a := functest.Account(t, s.Env, owner)
	zero, threshold := accounts.Money(0), 3*total/2 // available 2 orders' total: the next create crosses
	if _, err := ledger.Configure(ctx, owner, a.Seq, &zero, &threshold, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	reg := &webhooks.Registry{Hooks: s.Env.DB().Webhooks(s.Env.Table("WebhooksTable")), Jobs: s.Env.DB().Deliveries(s.Env.Table("DeliveriesTable")),
		IDs: s.Env.DB().IDs(s.Env.Table("CountersTable"), 10), Guard: webhooks.Guard{Local: true}, Now: time.Now}
	h, err := reg.Register(ctx, owner, webhooks.Registration{URL: "http://127.0.0.1:9/low", Events: []string{accounts.EventLowBalance}})
	if err != nil {
		t.Fatal(err)
	}

	s.Proxy.SetMode(storetest.Account)
	crossing, below := send(), send()
	got, err := s.Env.DB().Deliveries(s.Env.Table("DeliveriesTable")).Attempts(ctx, owner, h.DocumentID, 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("attempts %v, %v; want none yet", got, err)
	}
	jobs := func(calls []storetest.ProxyCall) (n int) {
		for _, c := range calls {
			if c.Table == s.Env.Table("DeliveriesTable") && c.Operation == "PutItem" {
				n++
			}
		}
		return n
	}
	if n := jobs(crossing); n != 1 {
		t.Errorf("the crossing create put %d jobs, want 1 (account.low_balance)", n)
	}
	if n := jobs(below); n != 0 {
		t.Errorf("the create still below put %d jobs, want none", n)
	}
	cost := func(calls []storetest.ProxyCall) (n int, wcu float64) {
		for _, c := range calls {
			n++
			wcu += c.Billed.Write
		}
		return n, wcu
	}
	n1, w1 := cost(crossing)
	n2, w2 := cost(below)
	t.Logf("the crossing create: %s", s.Env.Operations(crossing))
	t.Logf("the crossing create made %d calls (%.1f WCU), the next %d (%.1f WCU): the event added %d calls and %.1f WCU", n1, w1, n2, w2, n1-n2, w1-w2)
	if n1-n2 != 3 {
		t.Errorf("the event added %d calls, want 3 (the flag marked, the webhooks read, the job put)", n1-n2)
	}
}
