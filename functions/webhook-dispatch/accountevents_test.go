package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/openapi"
	"stampduty/shared/webhooks"
)

// accountWorld is world with an account's staff workflow and ledger whose
// changes tell their events through the real Publisher, over the store
// the dispatch reads.
type accountWorld struct {
	*world
	staff *accounts.Staff
}

func newAccountWorld(t *testing.T) *accountWorld {
	w := newWorld(t)
	ledger := w.db.Ledger(w.env.Table("LedgerTable"))
	pub := &webhooks.Publisher{Hooks: w.db.Webhooks(w.env.Table("WebhooksTable")), Jobs: w.db.Deliveries(w.env.Table("DeliveriesTable"))}
	return &accountWorld{world: w, staff: &accounts.Staff{
		Ledger: &accounts.Ledger{Store: ledger, Now: time.Now, Events: pub}, Refs: ledger.References()}}
}

// dispatch runs the dispatch function for about a second.
func (w *accountWorld) dispatch() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), Margin+time.Second)
	defer cancel()
	if err := w.run(ctx, nil); err != nil {
		w.t.Fatalf("run: %v", err)
	}
}

// accountEvents decodes what path got, each checked against openapi.yaml's
// AccountEvent, its header id its body's, signed with secret.
func (w *accountWorld) accountEvents(path, secret string) []accounts.EventJSON {
	w.t.Helper()
	c, err := openapi.New()
	if err != nil {
		w.t.Fatal(err)
	}
	var out []accounts.EventJSON
	for _, d := range w.rc.At(path) {
		if err := c.CheckSchema("AccountEvent", d.Body); err != nil {
			w.t.Errorf("%s got %s: %v", path, d.Body, err)
		}
		if err := webhooks.Verify(d.Signature, secret, d.Body, time.Now(), time.Minute); err != nil {
			w.t.Errorf("%s: signature: %v", path, err)
		}
		var ev accounts.EventJSON
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			w.t.Fatalf("%s got %q: %v", path, d.Body, err)
		}
		if ev.ID != d.ID {
			w.t.Errorf("%s got event %s with the header id %s", path, ev.ID, d.ID)
		}
		out = append(out, ev)
	}
	return out
}

// hold holds an order of total rupees on owner's account, as a create does.
func (w *accountWorld) hold(owner string, n int, total int64) {
	w.t.Helper()
	o := stampduty.Order{DocumentID: "acctevents" + string(rune('a'+n)) + "0000000000000"}
	o.StampDuty.TotalAmount = total
	if _, err := w.staff.Hold(w.t.Context(), owner, o); err != nil {
		w.t.Fatalf("hold %d: %v", total, err)
	}
}

// TestAccountEventsAreDelivered: an admin's credit reaches the webhooks
// subscribed to account.credited, signed, with the account and the entry
// (accounts.md, Events); account.low_balance reaches its subscribers once
// per crossing below the threshold; a repeated change delivers nothing
// twice; webhooks not subscribed, and another caller's, get nothing.
func TestAccountEventsAreDelivered(t *testing.T) {
	w := newAccountWorld(t)
	ctx := t.Context()
	const owner = "acct-events"
	credited := w.register(owner, "/credited", accounts.EventCredited)
	low := w.register(owner, "/low", accounts.EventLowBalance)
	w.register(owner, "/orders", stampduty.EventOrderCreated)
	w.register(other, "/other", accounts.EventCredited, accounts.EventLowBalance)
	testHook := w.register(stampduty.TestOwnerOf(owner), "/test-credited", accounts.EventCredited)
	const limited = "acct-events-limit"
	limitLow := w.register(limited, "/limit-low", accounts.EventLowBalance)

	zero, threshold := accounts.Money(0), accounts.Rupees(500)
	if _, err := w.staff.SetLimit(ctx, owner, &zero, false, "admin-sub"); err != nil {
		t.Fatal(err)
	}
	first, err := w.staff.Credit(ctx, owner, accounts.Rupees(1000), "UTR-E1", "NEFT", "admin-sub")
	if err != nil {
		t.Fatal(err)
	}
	// A test credit on the caller's test account (test-mode.md).
	if _, err := w.staff.Credit(ctx, stampduty.TestOwnerOf(owner), accounts.Rupees(5), "UTR-T1", "", "admin-sub"); err != nil {
		t.Fatal(err)
	}
	w.dispatch()

	t.Run("ATestAccountsEventsGoToTestWebhooksOnly", func(t *testing.T) {
		got := w.accountEvents("/test-credited", testHook.Secret)
		if len(got) != 1 || got[0].Livemode || got[0].Data.Account.Livemode || got[0].Data.Entry == nil || got[0].Data.Entry.Amount != "5.00" {
			t.Errorf("/test-credited got %+v; want the test credit, livemode false", got)
		}
	})
	t.Run("ACreditIsDeliveredSignedWithTheAccountAndEntry", func(t *testing.T) {
		got := w.accountEvents("/credited", credited.Secret)
		if len(got) != 1 {
			t.Fatalf("/credited got %d events, want 1", len(got))
		}
		ev := got[0]
		a := ev.Data.Account
		if ev.Type != accounts.EventCredited || !ev.Livemode || ev.Data.Entry == nil || ev.Data.Entry.ID != first.Entry.ID ||
			ev.Data.Entry.Amount != "1000.00" || ev.Data.Entry.BalanceAfter != "1000.00" || ev.Data.Entry.Reference == nil ||
			*ev.Data.Entry.Reference != "UTR-E1" || ev.Data.Entry.By != accounts.ByAdmin {
			t.Errorf("event %+v, entry %+v; want account.credited of %s", ev, ev.Data.Entry, first.Entry.ID)
		}
		if a.Balance != "1000.00" || a.Available == nil || *a.Available != "1000.00" || a.CreditLimit == nil || *a.CreditLimit != "0.00" ||
			a.Currency != "INR" || !a.Livemode {
			t.Errorf("account %+v, want balance and available 1000.00, limit 0.00", a)
		}
		if ev.ID != accounts.EventID(owner, accounts.EventCredited, first.Account.Seq, first.Entry.ID) {
			t.Errorf("event id %s is not the change's", ev.ID)
		}
	})

	// The same credit again at once (a retried request: nothing came
	// after it, so it is told again, with the same id, and a delivered
	// job is not put again).
	if again, err := w.staff.Credit(ctx, owner, accounts.Rupees(1000), "UTR-E1", "NEFT", "admin-sub"); err != nil || !again.Replayed {
		t.Fatalf("credit again: %+v, %v; want the first, replayed", again, err)
	}

	// A threshold, then holds: 700 available, 400 (crosses: told), 300
	// (still below: not told), a credit to 1300 (re-arms), 400 (told again).
	a, err := w.staff.Account(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.staff.Store.Configure(ctx, owner, a.Seq, a.Limit, &threshold, a.Low, time.Now()); err != nil {
		t.Fatal(err)
	}
	w.hold(owner, 0, 300)
	w.hold(owner, 1, 300)
	w.hold(owner, 2, 100)
	if _, err := w.staff.Credit(ctx, owner, accounts.Rupees(1000), "UTR-E2", "", "admin-sub"); err != nil {
		t.Fatal(err)
	}
	w.hold(owner, 3, 900)
	// Repeats: the same credit (its reference) and the same hold.
	if _, err := w.staff.Credit(ctx, owner, accounts.Rupees(1000), "UTR-E2", "", "admin-sub"); err != nil {
		t.Fatal(err)
	}
	w.hold(owner, 3, 900)

	// An admin lowers a limit below the threshold: told once, with no
	// entry (the account has none), not again when it is lowered more.
	for i, rupees := range []int64{1000, 200, 100} {
		l := accounts.Rupees(rupees)
		after, err := w.staff.SetLimit(ctx, limited, &l, false, "admin-sub")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, err := w.staff.Store.Configure(ctx, limited, after.Seq, after.Limit, &threshold, after.Low, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.dispatch()

	t.Run("ALimitLoweredBelowTheThresholdTellsOnce", func(t *testing.T) {
		got := w.accountEvents("/limit-low", limitLow.Secret)
		if len(got) != 1 || got[0].Type != accounts.EventLowBalance || got[0].Data.Entry != nil || got[0].Data.Account.Available == nil ||
			*got[0].Data.Account.Available != "200.00" {
			t.Errorf("/limit-low got %+v; want one account.low_balance at 200.00 available, no entry", got)
		}
	})

	t.Run("LowBalanceOncePerCrossing", func(t *testing.T) {
		got := w.accountEvents("/low", low.Secret)
		var avail []string
		for _, ev := range got {
			if ev.Type != accounts.EventLowBalance || ev.Data.Account.Available == nil || ev.Data.Entry == nil || ev.Data.Entry.Type != accounts.TypeHold {
				t.Errorf("event %+v; want account.low_balance told by a hold", ev)
				continue
			}
			avail = append(avail, *ev.Data.Account.Available)
		}
		if want := []string{"400.00", "400.00"}; !slices.Equal(avail, want) {
			t.Errorf("low_balance told at available %v, want %v (the two crossings)", avail, want)
		}
		if len(got) == 2 && got[0].ID == got[1].ID {
			t.Errorf("both crossings have the id %s", got[0].ID)
		}
	})
	t.Run("ARepeatedChangeIsDeliveredOnce", func(t *testing.T) {
		var ids []string
		for _, ev := range w.accountEvents("/credited", credited.Secret) {
			ids = append(ids, ev.ID)
		}
		if len(ids) != 2 || ids[0] == ids[1] {
			t.Errorf("/credited got %v, want the two credits' events, once each", ids)
		}
	})
	t.Run("OnlySubscribersOfTheOwner", func(t *testing.T) {
		if n, m := len(w.rc.At("/orders")), len(w.rc.At("/other")); n+m != 0 {
			t.Errorf("/orders got %d, /other got %d; want none", n, m)
		}
	})
}
