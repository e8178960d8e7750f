package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// staffOf returns the admins' workflows over l.
func staffOf(l *store.Ledger) *accounts.Staff {
	return &accounts.Staff{Ledger: &accounts.Ledger{Store: l}, Refs: l.References()}
}

// holds applies n holds of one rupee each to owner's account: entries
// enough to push a change out of the store's replay window.
func holds(t *testing.T, l *store.Ledger, owner, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := l.Apply(context.Background(), owner, hold(fmt.Sprintf("%s%d", prefix, i), 1)); err != nil {
			t.Fatal(err)
		}
	}
}

// ledgerCost returns the calls and units of calls.
func ledgerCost(env *storetest.Env, calls []storetest.ProxyCall) (string, float64, float64) {
	var wcu, rcu float64
	for _, c := range calls {
		wcu += c.Billed.Write
		rcu += c.Billed.Read
	}
	return env.Operations(calls), wcu, rcu
}

// creditsOf counts the credit entries of owner with reference ref.
func creditsOf(t *testing.T, l *store.Ledger, owner, ref string) int {
	t.Helper()
	a, err := l.Account(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	es, err := l.Entries(context.Background(), owner, 1, a.Seq)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.Type == accounts.TypeCredit && e.Reference == ref {
			n++
		}
	}
	return n
}

// TestCredits: a credit is recorded once per reference per account, however
// it is repeated, raced or interrupted (accounts.md, Staff).
func TestCredits(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, _ := proxiedStore(t, 10)
	l := db.Ledger(env.Table("LedgerTable"))
	s := staffOf(l)

	t.Run("CreditCostsFiveCalls", func(t *testing.T) {
		proxy.SetMode(storetest.Account)
		defer proxy.SetMode(storetest.Record)
		proxy.Take()
		a, err := s.Credit(ctx, "acme", accounts.Rupees(1000), "UTR0001", "NEFT from Acme", "admin-sub")
		if err != nil {
			t.Fatal(err)
		}
		ops, wcu, rcu := ledgerCost(env, proxy.Take())
		if got, want := ops, "BatchWriteItem:LedgerTable=1 GetItem:LedgerTable=1 PutItem:LedgerTable=1 UpdateItem:LedgerTable=2"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		t.Logf("a credit: %s, %.1f WCU, %.1f RCU", ops, wcu, rcu)
		e := a.Entry
		if e.ID != accounts.CreditID("UTR0001") || e.Amount != accounts.Rupees(1000) || e.By != accounts.ByAdmin || e.Sub != "admin-sub" ||
			e.Reference != "UTR0001" || e.Note != "NEFT from Acme" || a.Replayed || a.Account.Balance != accounts.Rupees(1000) {
			t.Errorf("credit %+v, account %+v", e, a.Account)
		}
		checkLedger(t, l, "acme")
	})
	t.Run("SameReferenceAnswersTheFirstCredit", func(t *testing.T) {
		first, err := s.Credit(ctx, "acme", accounts.Rupees(50), "UTR0002", "", "admin-sub")
		if err != nil {
			t.Fatal(err)
		}
		proxy.SetMode(storetest.Account)
		defer proxy.SetMode(storetest.Record)
		proxy.Take()
		again, err := s.Credit(ctx, "acme", accounts.Rupees(50), " utr0002 ", "another note", "other-sub")
		if err != nil {
			t.Fatal(err)
		}
		if !again.Replayed || again.Entry.Seq != first.Entry.Seq || again.Entry.Note != "" || again.Entry.Sub != "admin-sub" {
			t.Errorf("again %+v, want the first entry %+v, replayed", again.Entry, first.Entry)
		}
		ops, wcu, rcu := ledgerCost(env, proxy.Take())
		t.Logf("a repeated credit: %s, %.1f WCU, %.1f RCU", ops, wcu, rcu)
		if got := creditsOf(t, l, "acme", "UTR0002"); got != 1 {
			t.Errorf("%d credits of UTR0002, want 1", got)
		}
		checkLedger(t, l, "acme")
	})
	t.Run("SameReferenceOtherAmountIsAConflict", func(t *testing.T) {
		before := checkLedger(t, l, "acme")
		_, err := s.Credit(ctx, "acme", accounts.Rupees(51), "UTR0002", "", "admin-sub")
		if got, want := stampduty.ErrorCode(err), stampduty.ECONFLICT; got != want {
			t.Fatalf("err = %v, want %s", err, want)
		}
		if after := checkLedger(t, l, "acme"); after.Seq != before.Seq || after.Balance != before.Balance {
			t.Errorf("account %+v after the conflict, want %+v", after, before)
		}
	})
	t.Run("SameReferenceOnAnotherAccountIsItsOwn", func(t *testing.T) {
		if _, err := s.Credit(ctx, "other", accounts.Rupees(51), "UTR0002", "", "admin-sub"); err != nil {
			t.Fatal(err)
		}
		if got := creditsOf(t, l, "other", "UTR0002"); got != 1 {
			t.Errorf("%d credits, want 1", got)
		}
	})
	t.Run("RepeatBeyondTheReplayWindowIsStillOnce", func(t *testing.T) {
		if _, err := s.Credit(ctx, "acme", accounts.Rupees(7), "UTR-OLD", "", "admin-sub"); err != nil {
			t.Fatal(err)
		}
		holds(t, l, "acme", "old", 40)
		again, err := s.Credit(ctx, "acme", accounts.Rupees(7), "UTR-OLD", "", "admin-sub")
		if err != nil || !again.Replayed {
			t.Fatalf("again: %+v, %v; want replayed", again, err)
		}
		if got := creditsOf(t, l, "acme", "UTR-OLD"); got != 1 {
			t.Errorf("%d credits of UTR-OLD, want 1", got)
		}
		checkLedger(t, l, "acme")
	})
	t.Run("ClaimWithoutItsCreditIsCompletedByTheNextRequest", func(t *testing.T) {
		// Its writer stopped after the claim, before the credit.
		a, _ := l.Account(ctx, "acme")
		if _, _, err := l.References().Claim(ctx, "acme", accounts.Claim{Reference: "UTR-HALF", Amount: accounts.Rupees(9), After: a.Seq, Sub: "admin-sub", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		holds(t, l, "acme", "half", 40)
		got, err := s.Credit(ctx, "acme", accounts.Rupees(9), "UTR-HALF", "", "admin-sub")
		if err != nil || got.Replayed {
			t.Fatalf("credit: %+v, %v; want applied now", got, err)
		}
		if n := creditsOf(t, l, "acme", "UTR-HALF"); n != 1 {
			t.Errorf("%d credits, want 1", n)
		}
		checkLedger(t, l, "acme")
	})
	t.Run("CreditAppliedButNotSettledIsFoundNotAppliedAgain", func(t *testing.T) {
		// Its writer stopped after the credit, before recording its seq on
		// the claim; 40 entries later the store's replay window no longer
		// holds it.
		a, _ := l.Account(ctx, "acme")
		if _, _, err := l.References().Claim(ctx, "acme", accounts.Claim{Reference: "UTR-LOST", Amount: accounts.Rupees(11), After: a.Seq, Sub: "admin-sub", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Apply(ctx, "acme", credit("UTR-LOST", 11)); err != nil {
			t.Fatal(err)
		}
		holds(t, l, "acme", "lost", 40)
		got, err := s.Credit(ctx, "acme", accounts.Rupees(11), "UTR-LOST", "", "admin-sub")
		if err != nil || !got.Replayed {
			t.Fatalf("credit: %+v, %v; want the credit found, replayed", got, err)
		}
		if n := creditsOf(t, l, "acme", "UTR-LOST"); n != 1 {
			t.Errorf("%d credits, want 1", n)
		}
		checkLedger(t, l, "acme")
	})
	t.Run("CreditAppliedBetweenTheLookAndTheApplyIsNotAppliedAgain", func(t *testing.T) {
		// Another request claimed UTR-GAP; while this one applies it (after
		// looking through the entries since the claim), that one applies
		// it and 40 holds follow, out of the store's replay window: the
		// apply, made on the seq this one looked through, is refused and
		// the next look finds the credit.
		a, _ := l.Account(ctx, "gap")
		if _, _, err := l.References().Claim(ctx, "gap", accounts.Claim{Reference: "UTR-GAP", Amount: accounts.Rupees(13), After: a.Seq, Sub: "admin-sub", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		ldb, p := openThroughProxy(t, env)
		var once atomic.Int32
		p.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
			if c.Operation == "UpdateItem" && once.Add(1) == 1 {
				if _, err := l.Apply(ctx, "gap", credit("UTR-GAP", 13)); err != nil {
					t.Error(err)
				}
				holds(t, l, "gap", "gap", 40)
			}
			return nil
		})
		got, err := staffOf(ldb.Ledger(env.Table("LedgerTable"))).Credit(ctx, "gap", accounts.Rupees(13), "UTR-GAP", "", "admin-sub")
		if err != nil || !got.Replayed {
			t.Fatalf("credit: %+v, %v; want the other request's credit, replayed", got, err)
		}
		if once.Load() == 0 {
			t.Fatal("the other request did not run")
		}
		if n := creditsOf(t, l, "gap", "UTR-GAP"); n != 1 {
			t.Errorf("%d credits, want 1", n)
		}
		checkLedger(t, l, "gap")
	})
	t.Run("RacingCreditsAndHoldsWriteOneCredit", func(t *testing.T) {
		const racers = 8
		var wg sync.WaitGroup
		var replayed atomic.Int32
		for i := range racers {
			wg.Add(2)
			go func() {
				defer wg.Done()
				a, err := s.Credit(ctx, "race2", accounts.Rupees(100), "UTR-RACE", "", "admin-sub")
				if err != nil {
					t.Errorf("credit %d: %v", i, err)
				}
				if a.Replayed {
					replayed.Add(1)
				}
			}()
			go func() {
				defer wg.Done()
				if _, err := l.Apply(ctx, "race2", hold(fmt.Sprintf("rr%d", i), 1)); err != nil {
					t.Errorf("hold %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if n := creditsOf(t, l, "race2", "UTR-RACE"); n != 1 || replayed.Load() != racers-1 {
			t.Errorf("%d credits, %d answered replayed; want 1 and %d", n, replayed.Load(), racers-1)
		}
		checkLedger(t, l, "race2")
	})
	t.Run("TestAccountIsOpenedFirst", func(t *testing.T) {
		owner := stampduty.TestOwnerOf("acme")
		a, err := s.Credit(ctx, owner, accounts.Rupees(5), "UTR-T", "", "admin-sub")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := a.Account.Balance, accounts.TestOpening+accounts.Rupees(5); got != want || a.Entry.Seq != 2 {
			t.Errorf("balance %s at seq %d, want %s at 2 (after the opening credit)", got, a.Entry.Seq, want)
		}
		checkLedger(t, l, owner)
	})
	t.Run("RefusalsWriteNothing", func(t *testing.T) {
		proxy.Take()
		for _, tt := range []struct {
			name      string
			amount    accounts.Money
			ref, path string
		}{
			{"ZeroAmount", 0, "UTR9", "amount"},
			{"NegativeAmount", -100, "UTR9", "amount"},
			{"NoReference", 100, "  ", "reference"},
		} {
			_, err := s.Credit(ctx, "acme", tt.amount, tt.ref, "", "admin-sub")
			var e *stampduty.Error
			if !errors.As(err, &e) || e.Code != stampduty.EINVALID || len(e.Fields) != 1 || e.Fields[0].Path != tt.path {
				t.Errorf("%s: err = %v, want 400 naming %s", tt.name, err, tt.path)
			}
		}
		if calls := proxy.Take(); len(calls) != 0 {
			t.Errorf("refused credits called %s", env.Operations(calls))
		}
	})
}

// TestAdjustments: an adjustment moves the balance by its signed amount,
// once per request, and never takes available below zero.
func TestAdjustments(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, _ := proxiedStore(t, 10)
	l := db.Ledger(env.Table("LedgerTable"))
	s := staffOf(l)
	hundred := accounts.Rupees(100)
	if _, err := s.SetLimit(ctx, "acme", &hundred, false, "admin-sub"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Credit(ctx, "acme", accounts.Rupees(50), "UTR1", "", "admin-sub"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Apply(ctx, "acme", hold("o1", 30)); err != nil {
		t.Fatal(err)
	}
	// balance 50, held 30, limit 100: available 120.

	t.Run("DownWithinAvailable", func(t *testing.T) {
		proxy.SetMode(storetest.Account)
		defer proxy.SetMode(storetest.Record)
		proxy.Take()
		a, err := s.Adjust(ctx, "acme", -accounts.Rupees(20)-50, "bank charge", "req-1", "admin-sub")
		if err != nil {
			t.Fatal(err)
		}
		ops, wcu, rcu := ledgerCost(env, proxy.Take())
		t.Logf("an adjustment: %s, %.1f WCU, %.1f RCU", ops, wcu, rcu)
		if got, want := ops, "BatchWriteItem:LedgerTable=1 UpdateItem:LedgerTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		if got, want := a.Account.Balance, accounts.Rupees(30)-50; got != want || a.Entry.Amount != -accounts.Rupees(20)-50 ||
			a.Entry.ID != accounts.AdjustmentID("req-1") || a.Entry.Note != "bank charge" || a.Entry.Sub != "admin-sub" {
			t.Errorf("balance %s, entry %+v; want %s", got, a.Entry, want)
		}
		checkLedger(t, l, "acme")
	})
	t.Run("RetriedRequestAppliesOnce", func(t *testing.T) {
		before := checkLedger(t, l, "acme")
		a, err := s.Adjust(ctx, "acme", -accounts.Rupees(20)-50, "bank charge", "req-1", "admin-sub")
		if err != nil || !a.Replayed {
			t.Fatalf("%+v, %v: want replayed", a, err)
		}
		if after := checkLedger(t, l, "acme"); after.Balance != before.Balance {
			t.Errorf("balance %s, want %s", after.Balance, before.Balance)
		}
	})
	t.Run("BelowZeroAvailableIsRefused", func(t *testing.T) {
		before := checkLedger(t, l, "acme")
		avail := *before.Available()
		_, err := s.Adjust(ctx, "acme", -avail-1, "too much", "req-2", "admin-sub")
		if got, want := stampduty.ErrorCode(err), stampduty.ECONFLICT; got != want {
			t.Fatalf("err = %v, want %s", err, want)
		}
		if after := checkLedger(t, l, "acme"); after.Seq != before.Seq {
			t.Errorf("seq %d after the refusal, want %d", after.Seq, before.Seq)
		}
		if _, err := s.Adjust(ctx, "acme", -avail, "exactly what is available", "req-3", "admin-sub"); err != nil {
			t.Errorf("down to zero available: %v", err)
		}
		checkLedger(t, l, "acme")
	})
	t.Run("UpIsNeverRefused", func(t *testing.T) {
		if _, err := s.Adjust(ctx, "acme", accounts.Rupees(500), "refund reversed", "req-4", "admin-sub"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("UnlimitedAccountMayGoBelowZero", func(t *testing.T) {
		a, err := s.Adjust(ctx, "open", -accounts.Rupees(500), "refund paid out", "req-5", "admin-sub")
		if err != nil || a.Account.Balance != -accounts.Rupees(500) {
			t.Fatalf("%+v, %v", a.Account, err)
		}
	})
	t.Run("TestAccountIsOpenedFirst", func(t *testing.T) {
		owner := stampduty.TestOwnerOf("acme")
		a, err := s.Adjust(ctx, owner, -accounts.Rupees(5), "test", "req-t", "admin-sub")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := a.Account.Balance, accounts.TestOpening-accounts.Rupees(5); got != want || a.Entry.Seq != 2 {
			t.Errorf("balance %s at seq %d, want %s at 2 (after the opening credit)", got, a.Entry.Seq, want)
		}
		checkLedger(t, l, owner)
	})
	t.Run("RefusalsWriteNothing", func(t *testing.T) {
		proxy.Take()
		for _, tt := range []struct {
			name   string
			amount accounts.Money
			note   string
			paths  []string
		}{
			{"NoNote", 100, " ", []string{"note"}},
			{"ZeroAmount", 0, "x", []string{"amount"}},
			{"Both", 0, "", []string{"amount", "note"}},
			{"NoteOfTwoLines", 100, "a\nb", []string{"note"}},
		} {
			_, err := s.Adjust(ctx, "acme", tt.amount, tt.note, "req-x", "admin-sub")
			var e *stampduty.Error
			var paths []string
			if errors.As(err, &e) {
				for _, f := range e.Fields {
					paths = append(paths, f.Path)
				}
			}
			if e == nil || e.Code != stampduty.EINVALID || fmt.Sprint(paths) != fmt.Sprint(tt.paths) {
				t.Errorf("%s: err = %v (%v), want 400 naming %v", tt.name, err, paths, tt.paths)
			}
		}
		if calls := proxy.Take(); len(calls) != 0 {
			t.Errorf("refused adjustments called %s", env.Operations(calls))
		}
	})
}

// TestLimits: an admin sets a caller's credit limit; one below what is held
// needs a confirmation, after which every new order is refused until
// available is back at zero or above.
func TestLimits(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, _ := proxiedStore(t, 10)
	l := db.Ledger(env.Table("LedgerTable"))
	s := staffOf(l)
	order := func(doc string, rupees int64) stampduty.Order {
		return stampduty.Order{DocumentID: doc, StampDuty: stampduty.StampDuty{Amount: rupees, Quantity: 1, TotalAmount: rupees}}
	}
	if _, err := s.Hold(ctx, "acme", order("o1", 300)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Credit(ctx, "acme", accounts.Rupees(100), "UTR1", "", "admin-sub"); err != nil {
		t.Fatal(err)
	}
	// balance 100, held 300, unlimited.

	t.Run("LimitCostsThreeCalls", func(t *testing.T) {
		proxy.SetMode(storetest.Account)
		defer proxy.SetMode(storetest.Record)
		limit := accounts.Rupees(1000)
		proxy.Take()
		a, err := s.SetLimit(ctx, "acme", &limit, false, "admin-sub")
		if err != nil {
			t.Fatal(err)
		}
		ops, wcu, rcu := ledgerCost(env, proxy.Take())
		t.Logf("a limit change: %s, %.1f WCU, %.1f RCU", ops, wcu, rcu)
		if got, want := ops, "GetItem:LedgerTable=2 UpdateItem:LedgerTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		if a.Limit == nil || *a.Limit != limit || *a.Available() != accounts.Rupees(800) {
			t.Errorf("account %+v, want limit 1000.00, 800.00 available", a)
		}
	})
	t.Run("BelowHeldNeedsConfirming", func(t *testing.T) {
		zero := accounts.Money(0)
		before := checkLedger(t, l, "acme")
		_, err := s.SetLimit(ctx, "acme", &zero, false, "admin-sub")
		if got, want := stampduty.ErrorCode(err), stampduty.ECONFLICT; got != want {
			t.Fatalf("err = %v, want %s asking to confirm", err, want)
		}
		if a, _ := l.Account(ctx, "acme"); *a.Limit != *before.Limit {
			t.Errorf("limit %s after the refusal, want %s", *a.Limit, *before.Limit)
		}
		a, err := s.SetLimit(ctx, "acme", &zero, true, "admin-sub")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := *a.Available(), -accounts.Rupees(200); got != want {
			t.Errorf("available %s, want %s", got, want)
		}
	})
	t.Run("NegativeAvailableRefusesEveryOrder", func(t *testing.T) {
		_, err := s.Hold(ctx, "acme", order("o2", 1))
		if got, want := stampduty.ErrorCode(err), stampduty.EPAYMENT; got != want {
			t.Fatalf("err = %v, want %s", err, want)
		}
		if err := s.Release(ctx, "acme", stampduty.Order{DocumentID: "o1", Held: true,
			StampDuty: stampduty.StampDuty{Amount: 300, Quantity: 1, TotalAmount: 300}}, accounts.ByOperator); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Hold(ctx, "acme", order("o3", 100)); err != nil {
			t.Errorf("a hold once available is back: %v", err)
		}
		checkLedger(t, l, "acme")
	})
	t.Run("UnlimitedAgain", func(t *testing.T) {
		a, err := s.SetLimit(ctx, "acme", nil, false, "admin-sub")
		if err != nil || a.Limit != nil || a.Available() != nil {
			t.Fatalf("%+v, %v: want unlimited", a, err)
		}
		if _, err := s.Hold(ctx, "acme", order("o4", 1_000_000)); err != nil {
			t.Errorf("unlimited hold: %v", err)
		}
	})
	t.Run("LimitWhileHoldsRaceIsAppliedOnWhatItRead", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := l.Apply(ctx, "busy", hold(fmt.Sprintf("b%d", i), 1)); err != nil {
					t.Errorf("hold: %v", err)
				}
			}()
		}
		limit := accounts.Rupees(10)
		_, err := s.SetLimit(ctx, "busy", &limit, false, "admin-sub")
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		a := checkLedger(t, l, "busy")
		if got, want := *a.Available(), accounts.Rupees(2); got != want {
			t.Errorf("available %s, want %s: room recomputed from what was read", got, want)
		}
	})
	t.Run("DefaultLimitOpensNewCallers", func(t *testing.T) {
		zero := accounts.Money(0)
		prepaid := &accounts.Ledger{Store: l, DefaultLimit: &zero}
		if err := prepaid.OpenCaller(ctx, "newcaller"); err != nil {
			t.Fatal(err)
		}
		if _, err := prepaid.Hold(ctx, "newcaller", order("n1", 1)); stampduty.ErrorCode(err) != stampduty.EPAYMENT {
			t.Errorf("hold on a new prepaid caller: %v, want 402", err)
		}
		unlimited := &accounts.Ledger{Store: l}
		proxy.Take()
		if err := unlimited.OpenCaller(ctx, "freecaller"); err != nil {
			t.Fatal(err)
		}
		if calls := proxy.Take(); len(calls) != 0 {
			t.Errorf("an unlimited default stored %s, want nothing", env.Operations(calls))
		}
	})
}
