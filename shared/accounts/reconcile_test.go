package accounts

import (
	"strings"
	"testing"
	"time"
)

// book writes entries as a store would: seqs from 1, after-values and
// totals the running sums.
func book(es ...Entry) []Entry {
	var cp Checkpoint
	out := make([]Entry, len(es))
	for i, e := range es {
		db, dh := e.Effects()
		cp.Balance, cp.Held, cp.Totals = cp.Balance+db, cp.Held+dh, cp.Totals.Add(e.Type, e.Amount)
		e.Seq, e.BalanceAfter, e.HeldAfter, e.Totals = int64(i+1), cp.Balance, cp.Held, cp.Totals
		out[i] = e
	}
	return out
}

var at = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func credit(ref string, rupees int64) Entry {
	return Entry{ID: CreditID(ref), Type: TypeCredit, Amount: Rupees(rupees), Reference: ref, CreatedAt: at}
}
func holdOf(order string, rupees int64) Entry {
	return Entry{ID: HoldID(order), Type: TypeHold, Amount: Rupees(rupees), Order: order, CreatedAt: at}
}
func chargeOf(order, paper string, rupees int64) Entry {
	return Entry{ID: ChargeID(paper), Type: TypeCharge, Amount: Rupees(rupees), Order: order, Fulfillment: paper, CreatedAt: at}
}
func releaseOf(order string, rupees int64) Entry {
	return Entry{ID: ReleaseID(order), Type: TypeRelease, Amount: Rupees(rupees), Order: order, CreatedAt: at}
}

// TestReplay: the reconciler's check of an account's entries finds each
// disagreement accounts.md lists, and nothing in a ledger that is right.
func TestReplay(t *testing.T) {
	good := book(credit("U1", 1000), holdOf("o1", 300), chargeOf("o1", "p1", 100), holdOf("o2", 50), releaseOf("o2", 50))
	tests := []struct {
		name    string
		es      []Entry
		hi      int64
		want    string // a mismatch's words, "" for none
		open    map[string]Money
		balance Money
	}{
		{name: "RightLedgerAgrees", es: good, hi: 5, open: map[string]Money{"o1": Rupees(200)}, balance: Rupees(900)},
		{name: "MissingSeq", es: append(good[:2:2], good[3:]...), hi: 5, want: gap},
		{name: "MissingNewest", es: good[:4], hi: 5, want: gap},
		{name: "AfterValuesNotTheRunningSums", es: func() []Entry {
			es := append([]Entry(nil), good...)
			es[2].BalanceAfter += 1
			return es
		}(), hi: 5, want: "the running sums"},
		{name: "IDWrittenTwice", es: book(credit("U1", 10), credit("U1", 10)), hi: 2, want: "written twice"},
		{name: "SecondHold", es: book(holdOf("o1", 10), holdOf("o1", 10)), hi: 2, want: "a second hold"},
		{name: "SecondChargeOfAPaper", es: book(holdOf("o1", 30), chargeOf("o1", "p1", 10), chargeOf("o1", "p1", 10)), hi: 3, want: "a second charge"},
		{name: "ChargeOfAnOrderNotHolding", es: book(chargeOf("o9", "p9", 10)), hi: 1, want: "holds nothing"},
		{name: "ReleaseAfterRelease", es: book(holdOf("o1", 10), releaseOf("o1", 10), releaseOf("o1", 10)), hi: 3, want: "holds nothing"},
		{name: "ReleaseLeavingSomethingHeld", es: book(holdOf("o1", 10), releaseOf("o1", 4)), hi: 2, want: "still holds"},
		{name: "ChargeBeyondTheHold", es: book(holdOf("o1", 10), chargeOf("o1", "p1", 20)), hi: 2, want: "holds -10.00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, bad := replay(Checkpoint{}, tc.es, tc.hi)
			var words []string
			for _, m := range bad {
				words = append(words, m.what)
			}
			got := strings.Join(words, "; ")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("mismatches %q, want %q", got, tc.want)
			}
			if tc.want != "" {
				return
			}
			if next.Seq != tc.hi || next.Balance != tc.balance || len(next.Open) != len(tc.open) {
				t.Errorf("checkpoint %+v, want seq %d, balance %s, open %v", next, tc.hi, tc.balance, tc.open)
			}
			for doc, held := range tc.open {
				if next.Open[doc].Held != held {
					t.Errorf("open %s holds %s, want %s", doc, next.Open[doc].Held, held)
				}
			}
		})
	}
}

// TestReplayIsIncremental: checking a ledger in two halves, the second
// from the first's checkpoint, ends where checking it whole does.
func TestReplayIsIncremental(t *testing.T) {
	es := book(credit("U1", 1000), holdOf("o1", 300), chargeOf("o1", "p1", 100), holdOf("o2", 50), releaseOf("o2", 50), chargeOf("o1", "p2", 100))
	whole, bad := replay(Checkpoint{}, es, 6)
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	first, bad := replay(Checkpoint{}, es[:3], 3)
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	second, bad := replay(first, es[3:], 6)
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if second.Seq != whole.Seq || second.Balance != whole.Balance || second.Held != whole.Held || second.Totals != whole.Totals ||
		len(second.Open) != 1 || second.Open["o1"].Held != Rupees(100) || len(second.Open["o1"].Charged) != 2 {
		t.Errorf("in halves %+v, whole %+v", second, whole)
	}
	if len(first.Open["o1"].Charged) != 1 {
		t.Errorf("the first half's checkpoint changed under the second: %+v", first.Open["o1"])
	}
}

// TestAgree: an account must be its entries' sums, and its held what its
// open orders hold.
func TestAgree(t *testing.T) {
	es := book(credit("U1", 1000), holdOf("o1", 300))
	cp, _ := replay(Checkpoint{}, es, 2)
	right := Account{Balance: Rupees(1000), Held: Rupees(300), Seq: 2, Totals: cp.Totals}
	if bad := agree(right, cp); len(bad) > 0 {
		t.Errorf("a right account: %v", bad)
	}
	wrong := right
	wrong.Held = Rupees(200)
	if bad := agree(wrong, cp); len(bad) != 1 || !strings.Contains(bad[0].what, "entries sum to") {
		t.Errorf("an account off its entries: %v", bad)
	}
	lost := cp
	lost.Open = map[string]OpenHold{}
	if bad := agree(right, lost); len(bad) != 1 || !strings.Contains(bad[0].what, "open orders hold") {
		t.Errorf("held without the orders holding it: %v", bad)
	}
}
