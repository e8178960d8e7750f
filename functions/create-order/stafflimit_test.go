package main

import (
	"context"
	"strings"
	"testing"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// limitBelowHeld: an admin lowers the limit below what is held (confirmed,
// accounts.Staff.SetLimit): available is negative, and every new order is
// refused with 402 until it is back at zero or above (accounts.md, the
// invariants), however small.
func (c creating) limitBelowHeld(t *testing.T) {
	ctx := context.Background()
	ledger := c.Env.DB().Ledger(c.Env.Table("LedgerTable"))
	staff := &accounts.Staff{Ledger: &accounts.Ledger{Store: ledger}, Refs: ledger.References()}
	if r := c.send(functest.DevHeaders, body(map[string]any{"amount": 150, "quantity": 2})); r.Status != 200 {
		t.Fatalf("an unlimited create: status %d: %s", r.Status, r.Body)
	}
	a := functest.Account(t, c.Env, localdb.DevOwner)
	zero := accounts.Money(0)
	if a.Balance-a.Held >= 0 {
		t.Fatalf("account %+v: want more held than its balance", a)
	}
	if _, err := staff.SetLimit(ctx, localdb.DevOwner, &zero, false, "admin-sub"); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
		t.Fatalf("a limit below held unconfirmed: %v, want 409 asking to confirm", err)
	}
	if _, err := staff.SetLimit(ctx, localdb.DevOwner, &zero, true, "admin-sub"); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := staff.SetLimit(ctx, localdb.DevOwner, nil, false, "admin-sub"); err != nil {
			t.Fatal(err)
		}
	}()
	r := c.send(functest.DevHeaders, body(map[string]any{"amount": 100, "quantity": 1}))
	if r.Status != 402 {
		t.Fatalf("status %d, want 402: %s", r.Status, r.Body)
	}
	avail := a.Balance - a.Held
	if msg := r.Error(t).Error.Message; !strings.Contains(msg, " and "+avail.Indian()+" is available") {
		t.Errorf("message %q, want it to name %s available", msg, avail.Indian())
	}
	if b := functest.Account(t, c.Env, localdb.DevOwner); b.Seq != a.Seq {
		t.Errorf("seq %d after the 402, want %d", b.Seq, a.Seq)
	}
}
