package accounts

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"stampduty/shared/stampduty"
)

// lowFlag is a Store whose only working part is MarkLow, as the table's
// conditional update makes it: the one call that changes the flag wins.
type lowFlag struct {
	Store
	mu  sync.Mutex
	low bool
}

func (s *lowFlag) MarkLow(_ context.Context, _ string, low bool) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.low == low {
		return false, nil
	}
	s.low = low
	return true, nil
}

// events records what is published.
type events struct {
	mu  sync.Mutex
	got []Event
}

func (s *events) Publish(_ context.Context, _ string, ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, ev)
	return nil
}

func (s *events) types() string {
	var out []string
	for _, e := range s.got {
		out = append(out, e.Type)
	}
	return strings.Join(out, ",")
}

// TestNotify: each change tells what accounts.md says it tells, and
// account.low_balance only on a crossing below, once, again only after
// available rose back.
func TestNotify(t *testing.T) {
	ctx := context.Background()
	zero, thr := Money(0), Rupees(1000)
	acct := func(balance, held Money) Account {
		return Account{Owner: "acme", Balance: balance, Held: held, Limit: &zero, Threshold: &thr, Seq: 1}
	}
	store := &lowFlag{}
	l := &Ledger{Store: store}
	sink := &events{}
	steps := []struct {
		name  string
		entry Entry
		after Account
		want  string // the events published, in order
	}{
		{"CreditAboveTheThreshold", credit("U1", 1500), acct(Rupees(1500), 0), EventCredited},
		{"HoldStayingAbove", holdOf("o1", 400), acct(Rupees(1500), Rupees(400)), ""},
		{"HoldCrossingBelow", holdOf("o2", 200), acct(Rupees(1500), Rupees(600)), EventLowBalance},
		{"HoldStayingBelowTellsNothing", holdOf("o3", 100), acct(Rupees(1500), Rupees(700)), ""},
		{"AdjustmentDownBelowTellsNothing", Entry{ID: "adjustment_r1", Type: TypeAdjustment, Amount: -Rupees(10)}, acct(Rupees(1490), Rupees(700)), ""},
		{"CreditRisingAboveRearms", credit("U2", 1000), acct(Rupees(2490), Rupees(700)), EventCredited},
		{"CrossingBelowAgainTellsAgain", holdOf("o4", 900), acct(Rupees(2490), Rupees(1600)), EventLowBalance},
		{"AdjustmentUpIsACredit", Entry{ID: "adjustment_r2", Type: TypeAdjustment, Amount: Rupees(5)}, acct(Rupees(2495), Rupees(1600)), EventCredited},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			sink.got = nil
			st.after.Low = store.low // what the account item says before this change's mark
			if err := l.Notify(ctx, "acme", Applied{Entry: st.entry, Account: st.after}, sink); err != nil {
				t.Fatal(err)
			}
			if got := sink.types(); got != st.want {
				t.Errorf("events %q, want %q", got, st.want)
			}
			for _, e := range sink.got {
				if !stampduty.ValidEventID(e.ID) || e.Entry.ID != st.entry.ID {
					t.Errorf("event %+v: want an event id about entry %s", e, st.entry.ID)
				}
			}
		})
	}
	t.Run("UnlimitedOrNoThresholdIsNeverLow", func(t *testing.T) {
		a := acct(0, Rupees(5000))
		a.Limit = nil
		b := acct(0, Rupees(5000))
		b.Threshold = nil
		if IsLow(a) || IsLow(b) {
			t.Error("an account without a limit or a threshold is low")
		}
	})
	t.Run("ConcurrentCrossingsTellOnce", func(t *testing.T) {
		store.low, sink.got = false, nil
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := l.Notify(ctx, "acme", Applied{Entry: holdOf("p"+string(rune('a'+i)), 1), Account: acct(0, Rupees(1))}, sink); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if got := sink.types(); got != EventLowBalance {
			t.Errorf("events %q, want one %s", got, EventLowBalance)
		}
	})
	t.Run("SameChangeSameEventID", func(t *testing.T) {
		a, b := EventID("acme", EventCredited, 3, "credit_U1"), EventID("acme", EventCredited, 3, "credit_U1")
		if a != b || a == EventID("acme", EventCredited, 4, "credit_U2") || !stampduty.ValidEventID(a) {
			t.Errorf("ids %s, %s", a, b)
		}
	})
}

// applying is a Store whose Apply answers the account after as the change
// left it, and whose MarkLow is lowFlag's.
type applying struct {
	*lowFlag
	after Account
}

func (s applying) Apply(_ context.Context, _ string, ch Change) (Applied, error) {
	return Applied{Entry: ch.Entry, Account: s.after}, nil
}

// TestHoldTellsLowBalance: a hold that takes available below the
// threshold tells account.low_balance through the Ledger's Events, and a
// Ledger without Events tells nothing and marks nothing.
func TestHoldTellsLowBalance(t *testing.T) {
	zero, thr := Money(0), Rupees(1000)
	after := Account{Owner: "acme", Balance: Rupees(1500), Held: Rupees(600), Limit: &zero, Threshold: &thr, Seq: 2}
	o := stampduty.Order{DocumentID: "o1", StampDuty: stampduty.StampDuty{Amount: 600, Quantity: 1, TotalAmount: 600}}
	flag := &lowFlag{}
	quiet := &Ledger{Store: applying{flag, after}}
	if _, err := quiet.Hold(context.Background(), "acme", o); err != nil {
		t.Fatal(err)
	}
	if flag.low {
		t.Error("a ledger without Events marked the account low")
	}
	sink := &events{}
	told := &Ledger{Store: applying{flag, after}, Events: sink}
	if _, err := told.Hold(context.Background(), "acme", o); err != nil {
		t.Fatal(err)
	}
	if got := sink.types(); got != EventLowBalance || !flag.low {
		t.Errorf("events %q, low %v; want %s and the account marked low", got, flag.low, EventLowBalance)
	}
}

// failing is a Sink whose publishes fail while fail is set.
type failing struct {
	events
	fail bool
}

func (s *failing) Publish(ctx context.Context, owner string, ev Event) error {
	if s.fail {
		return errors.New("the deliveries table is down")
	}
	return s.events.Publish(ctx, owner, ev)
}

// TestAFailedLowBalanceIsToldByTheNextChange: a hold that crosses below
// the threshold and fails to publish account.low_balance leaves the
// account unmarked (the hold itself stands), so the next change that
// finds it low tells it, once.
func TestAFailedLowBalanceIsToldByTheNextChange(t *testing.T) {
	zero, thr := Money(0), Rupees(1000)
	flag := &lowFlag{}
	sink := &failing{fail: true}
	hold := func(doc string, held Money) {
		t.Helper()
		after := Account{Owner: "acme", Balance: Rupees(1500), Held: held, Limit: &zero, Threshold: &thr, Seq: 2, Low: flag.low}
		o := stampduty.Order{DocumentID: doc, StampDuty: stampduty.StampDuty{Amount: 100, Quantity: 1, TotalAmount: 100}}
		if _, err := (&Ledger{Store: applying{flag, after}, Events: sink}).Hold(context.Background(), "acme", o); err != nil {
			t.Fatalf("hold %s: %v (a failed publish must not fail the hold)", doc, err)
		}
	}
	hold("o1", Rupees(600))
	if flag.low || len(sink.got) != 0 {
		t.Fatalf("after the failed publish: low %v, events %q; want unmarked and none", flag.low, sink.types())
	}
	sink.fail = false
	hold("o2", Rupees(700))
	hold("o3", Rupees(800))
	if got := sink.types(); got != EventLowBalance || !flag.low {
		t.Errorf("events %q, low %v; want one %s, told by the next change, and the account marked", got, flag.low, EventLowBalance)
	}
}

// TestNotifySettings: a lower limit or a higher threshold that leaves
// available below the threshold tells account.low_balance once, about
// the account's newest entry.
func TestNotifySettings(t *testing.T) {
	ctx := context.Background()
	thr := Rupees(1000)
	limit := Rupees(500)
	a := Account{Owner: "acme", Balance: Rupees(1200), Held: Rupees(400), Limit: &limit, Threshold: &thr, Seq: 7}
	newest := holdOf("o7", 400)
	l := &Ledger{Store: &lowFlag{}}
	sink := &events{}
	if err := l.NotifySettings(ctx, "acme", a, &newest, sink); err != nil {
		t.Fatal(err)
	}
	if got := sink.types(); got != "" {
		t.Fatalf("available %s above the threshold: events %q", *a.Available(), got)
	}
	lower := Money(0)
	a.Limit = &lower
	for range 2 {
		if err := l.NotifySettings(ctx, "acme", a, &newest, sink); err != nil {
			t.Fatal(err)
		}
		a.Low = true // as the account now stores it
	}
	if got := sink.types(); got != EventLowBalance || sink.got[0].Entry.ID != newest.ID {
		t.Errorf("events %q about %v, want one %s about %s", got, sink.got, EventLowBalance, newest.ID)
	}
}
