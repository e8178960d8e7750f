package orders_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// raceTrials is how many times each race of TestNumbersNameOnePaper is run.
const raceTrials = 12

// toCreated and toProcured are moves with numbers no other paper has: a
// number names one paper (papers.md), so each paper a test numbers needs
// its own.
func toCreated() stampduty.Change {
	ref, _ := functest.NewNumbers()
	return stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}
}

func toProcured() stampduty.Change {
	_, cn := functest.NewNumbers()
	return stampduty.Change{Status: stampduty.StatusProcured, CertificateNumber: cn}
}

// race runs a and b at the same moment and returns their errors.
func race(a, b func() error) (error, error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 2)
	for i, f := range []func() error{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = f()
		}()
	}
	close(start)
	wg.Wait()
	return errs[0], errs[1]
}

// oneWins fails t unless exactly one of the errors is nil and the other a
// 409 naming field.
func oneWins(t *testing.T, field string, a, b error) {
	t.Helper()
	won, lost := a, b
	if a != nil {
		won, lost = b, a
	}
	if won != nil {
		t.Fatalf("neither move won: %v; %v", a, b)
	}
	if lost == nil {
		t.Fatalf("both moves stored the same %s", field)
	}
	var e *stampduty.Error
	if !errors.As(lost, &e) || e.Code != stampduty.ECONFLICT || len(e.Fields) != 1 || e.Fields[0].Path != field {
		t.Fatalf("the losing move = %#v, want ECONFLICT naming %s", lost, field)
	}
}

// holders counts the papers of os (read again) whose field is number.
func holders(t *testing.T, w *fulfillmentWorld, field, number string, os ...stampduty.Order) int {
	t.Helper()
	n := 0
	for _, o := range os {
		s, err := w.orders.ByDocument(context.Background(), o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ff := range s.Fulfillments {
			if field == orders.FieldDocRef && ff.UniqueDocRef == number || field == orders.FieldCertificateNumber && ff.CertificateNumber == number {
				n++
			}
		}
	}
	return n
}

// TestNumbersNameOnePaper: a unique_doc_ref or certificate_number another
// paper holds, of the same order or any other of any caller, is 409 naming
// the field (papers.md), also when two moves race for it: exactly one
// wins. A claim no paper stands behind does not block the number for
// long, and a failed move leaves none.
func TestNumbersNameOnePaper(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 1)
	f := w.fulfiller(w.orders, w.files())
	advance := func(o stampduty.Order, paper int, c stampduty.Change) func() error {
		return func() error {
			_, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[paper].DocumentID, c, "op")
			return err
		}
	}
	created := func(t *testing.T, o stampduty.Order, paper int) {
		t.Helper()
		ref, _ := functest.NewNumbers()
		if err := advance(o, paper, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref})(); err != nil {
			t.Fatal(err)
		}
	}

	// raceFor races paper px of x and paper py of y for one new number of
	// field, each moved to the status that stores it, trials times.
	raceFor := func(t *testing.T, field string, pair func() (x stampduty.Order, px int, y stampduty.Order, py int)) {
		for range raceTrials {
			x, px, y, py := pair()
			ref, cn := functest.NewNumbers()
			c, number := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}, ref
			if field == orders.FieldCertificateNumber {
				created(t, x, px)
				created(t, y, py)
				c, number = stampduty.Change{Status: stampduty.StatusProcured, CertificateNumber: cn}, cn
			}
			a, b := race(advance(x, px, c), advance(y, py, c))
			oneWins(t, field, a, b)
			os := []stampduty.Order{x}
			if y.DocumentID != x.DocumentID {
				os = append(os, y)
			}
			if got, want := holders(t, w, field, number, os...), 1; got != want {
				t.Fatalf("%d papers hold the %s, want %d", got, field, want)
			}
		}
	}
	twoCallers := func() (stampduty.Order, int, stampduty.Order, int) {
		return functest.AddOrders(t, w.env, "owner", 1)[0], 0, functest.AddOrders(t, w.env, "other", 1)[0], 0
	}
	t.Run("two papers of one order racing for a certificate_number: one wins", func(t *testing.T) {
		raceFor(t, orders.FieldCertificateNumber, func() (stampduty.Order, int, stampduty.Order, int) {
			o := functest.AddPapers(t, w.env, "owner", 2)
			return o, 0, o, 1
		})
	})
	t.Run("orders of two callers racing for a certificate_number: one wins", func(t *testing.T) {
		raceFor(t, orders.FieldCertificateNumber, twoCallers)
	})
	t.Run("orders of two callers racing for a unique_doc_ref: one wins", func(t *testing.T) {
		raceFor(t, orders.FieldDocRef, twoCallers)
	})
	t.Run("another caller's number, one move after the other, is 409 and the paper is unchanged", func(t *testing.T) {
		x, y := functest.AddOrders(t, w.env, "owner", 1)[0], functest.AddOrders(t, w.env, "other", 1)[0]
		ref, _ := functest.NewNumbers()
		if err := advance(x, 0, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref})(); err != nil {
			t.Fatal(err)
		}
		err := advance(y, 0, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref})()
		oneWins(t, orders.FieldDocRef, nil, err)
		s, _ := w.orders.ByDocument(ctx, y.DocumentID)
		if got, want := s.Fulfillments[0].Status, stampduty.StatusPending; got != want {
			t.Errorf("the refused paper is %s, want %s", got, want)
		}
	})
	t.Run("the same move again is done, not a conflict with itself", func(t *testing.T) {
		o := functest.AddOrders(t, w.env, "owner", 1)[0]
		ref, _ := functest.NewNumbers()
		c := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}
		// The first write lands but its answer is lost; the retry finds it.
		lost := w.fulfiller(landsThenFails{w.orders}, w.files())
		lost.Numbers = f.Numbers
		if _, err := lost.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, c, "op"); err != nil {
			t.Fatalf("a move whose answer was lost: %v", err)
		}
		if err := advance(o, 0, c)(); err != nil {
			t.Errorf("the retried move: %v, want done", err)
		}
	})
	t.Run("a failed move releases its claim", func(t *testing.T) {
		x, y := functest.AddOrders(t, w.env, "owner", 1)[0], functest.AddOrders(t, w.env, "other", 1)[0]
		ref, _ := functest.NewNumbers()
		c := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}
		failing := w.fulfiller(failingReplace{w.orders, stampduty.Unavailable(errors.New("throttled"))}, w.files())
		failing.Numbers = f.Numbers
		if _, err := failing.Advance(ctx, x.DocumentID, x.Fulfillments[0].DocumentID, c, "op"); stampduty.ErrorCode(err) != stampduty.EUNAVAILABLE {
			t.Fatalf("the failing move = %v, want EUNAVAILABLE", err)
		}
		if err := advance(y, 0, c)(); err != nil {
			t.Errorf("another paper after the failed move: %v, want done", err)
		}
	})
	t.Run("a claim left by a move that never stored its paper blocks the number only while it may be in flight", func(t *testing.T) {
		x, y := functest.AddOrders(t, w.env, "owner", 1)[0], functest.AddOrders(t, w.env, "other", 1)[0]
		ref, _ := functest.NewNumbers()
		left := orders.Claim{Field: orders.FieldDocRef, Number: ref, Owner: "owner", Order: x.DocumentID,
			Paper: x.Fulfillments[0].DocumentID, At: time.Now(), Token: "left-behind"}
		if _, ok, err := f.Numbers.Claim(ctx, left); err != nil || !ok {
			t.Fatalf("Claim = %v, %v", ok, err)
		}
		c := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}
		err := advance(y, 0, c)()
		oneWins(t, orders.FieldDocRef, nil, err)
		later := *f
		later.Now = func() time.Time { return time.Now().Add(orders.ClaimGrace + time.Second) }
		if _, err := later.Advance(ctx, y.DocumentID, y.Fulfillments[0].DocumentID, c, "op"); err != nil {
			t.Errorf("past ClaimGrace: %v, want done", err)
		}
		// Its paper does not take the number back: y holds it now.
		if _, err := later.Advance(ctx, x.DocumentID, x.Fulfillments[0].DocumentID, c, "op"); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
			t.Errorf("the paper that left the claim: %v, want ECONFLICT", err)
		}
	})
	t.Run("a test paper's number is checked among test papers only", func(t *testing.T) {
		ref, _ := functest.NewNumbers()
		live := orders.Claim{Field: orders.FieldDocRef, Number: ref, Owner: "owner", Order: "o1", Paper: "p1", At: time.Now(), Token: "t1"}
		test := live
		test.Test, test.Owner, test.Order, test.Paper, test.Token = true, stampduty.TestOwnerOf("owner"), "o2", "p2", "t2"
		test.CreatedAt = stampduty.FormatTime(time.Now())
		for _, c := range []orders.Claim{live, test} {
			if _, ok, err := f.Numbers.Claim(ctx, c); err != nil || !ok {
				t.Fatalf("Claim(test %v) = %v, %v, want stored", c.Test, ok, err)
			}
		}
		other := test
		other.Order, other.Paper, other.Token = "o3", "p3", "t3"
		if held, ok, err := f.Numbers.Claim(ctx, other); err != nil || ok || held.Paper != "p2" {
			t.Errorf("a second test paper's Claim = %+v, %v, %v, want refused, held by p2", held, ok, err)
		}
	})
	t.Run("a move that stores a number without the numbers table is refused, not stored unchecked", func(t *testing.T) {
		o := functest.AddOrders(t, w.env, "owner", 1)[0]
		ref, _ := functest.NewNumbers()
		unwired := *f
		unwired.Numbers = nil
		if _, err := unwired.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}, "op"); stampduty.ErrorCode(err) != stampduty.EINTERNAL {
			t.Errorf("Advance = %v, want EINTERNAL", err)
		}
	})
}
