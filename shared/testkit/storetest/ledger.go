package storetest

import (
	"context"
	"testing"

	"stampduty/shared/accounts"
	"stampduty/shared/store"
)

// CheckLedger fails t unless owner's account and entries in l agree
// (accounts.md's invariants): every seq 1 … n has its entry, each entry's
// after-values are the running sums of the effects before it, the effects
// sum to the account's balance and held, its running totals agree with
// both, and no entry id is written twice. It returns the account and its
// entries, newest first.
func CheckLedger(t testing.TB, l *store.Ledger, owner string) (accounts.Account, []accounts.Entry) {
	t.Helper()
	ctx := context.Background()
	a, err := l.Account(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	es, err := l.Entries(ctx, owner, 1, a.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(es)) != a.Seq {
		t.Fatalf("%s: %d entries for an account of %d", owner, len(es), a.Seq)
	}
	var bal, held accounts.Money
	ids := map[string]bool{}
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		if ids[e.ID] {
			t.Errorf("%s: entry %s written twice", owner, e.ID)
		}
		ids[e.ID] = true
		db, dh := e.Effects()
		bal, held = bal+db, held+dh
		if e.BalanceAfter != bal || e.HeldAfter != held {
			t.Errorf("%s: entry %d (%s) after %s/%s, want the running %s/%s", owner, e.Seq, e.ID, e.BalanceAfter, e.HeldAfter, bal, held)
		}
	}
	if a.Balance != bal || a.Held != held {
		t.Errorf("%s: account %s/%s, entries sum to %s/%s", owner, a.Balance, a.Held, bal, held)
	}
	if a.Totals.Balance() != a.Balance || a.Totals.Held() != a.Held {
		t.Errorf("%s: totals %+v disagree with %s/%s", owner, a.Totals, a.Balance, a.Held)
	}
	return a, es
}
