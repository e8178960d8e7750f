package store_test

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// TestReserveN: ReserveN takes n consecutive seqs in one UpdateItem (a
// caller's first one seeds the counter above the orders it already has),
// concurrent reservations of one caller get disjoint ranges that together
// are exactly 1…total, and Reserve keeps handing out the next one.
func TestReserveN(t *testing.T) {
	env, db, proxy, ids := proxiedStore(t, 400)
	s := db.Orders(env.Table("OrdersTable"))
	ctx := context.Background()
	createSeqd(t, s, "bank", newOrder(t, ids, 0)) // seq 1
	proxy.Take()
	last, err := s.ReserveN(ctx, "bank", 5)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := last, int64(6); got != want {
		t.Errorf("last = %d, want %d (2…6)", got, want)
	}
	if got, want := env.Operations(proxy.Take()), "UpdateItem:OrdersTable=1"; got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for n := range int64(8) {
		wg.Go(func() {
			last, err := s.ReserveN(ctx, "bank", n+1)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for seq := last - n; seq <= last; seq++ {
				got = append(got, seq)
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, seq := range got {
		if seq != int64(7+i) {
			t.Fatalf("seqs %v, want 7…42 each once", got)
		}
	}
	if next, err := s.Reserve(ctx, "bank"); err != nil || next != 43 {
		t.Errorf("Reserve = %d, %v; want 43", next, err)
	}
	if _, err := s.ReserveN(ctx, "bank", 0); err == nil {
		t.Error("ReserveN(0) reserved")
	}
}

// TestSlots: Slots reads, in one Query, the documentId at each seq of a
// range that holds an order, "" at a voided one, nothing at an empty one;
// the items of an order's papers (at s.kk) are not slots.
func TestSlots(t *testing.T) {
	env, db, proxy, ids := proxiedStore(t, 400)
	s := db.Orders(env.Table("OrdersTable"))
	ctx := context.Background()
	last, err := s.ReserveN(ctx, "bank", 4) // 1…4
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{}
	for _, seq := range []int64{last - 3, last - 1} {
		o := newPapers(t, ids, 3) // kept apart: its papers get items of their own
		o.DocumentID = stampduty.WithSeq(o.DocumentID, seq)
		if _, err := s.Put(ctx, "bank", seq, o); err != nil {
			t.Fatal(err)
		}
		want[seq] = o.DocumentID
	}
	// Paper 2 of the order at last-3 changes: its item is at (last-3).02.
	st, err := s.Owned(ctx, "bank", want[last-3])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, st, movePaper(t, st.Order, 1, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-2"})); err != nil {
		t.Fatal(err)
	}
	if voided, err := s.Void(ctx, "bank", last); err != nil || !voided {
		t.Fatal(voided, err)
	}
	want[last] = ""
	proxy.Take()
	got, err := s.Slots(ctx, "bank", last-3, last)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slots %v, want %v", got, want)
	}
	if got, want := env.Operations(proxy.Take()), "Query:OrdersTable=1"; got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
}

// TestBatchKey: a batch's key record keeps its planned rows, their seqs
// once planned and the answers once complete, as a replay reads them; a
// second claim finds the first's; Yield ends the lease; PlanBatch and
// CompleteBatch by a request that no longer holds the claim are 409.
func TestBatchKey(t *testing.T) {
	env, db, _, _ := proxiedStore(t, 400)
	k := db.Idempotency(env.Table("IdempotencyTable"))
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	plan := []orders.PlannedRow{{Index: 0, Doc: "a00000000000000000000001", Amount: 200, Quantity: 2}, {Index: 2, Doc: "a00000000000000000000002", Amount: 20, Quantity: 1}}
	rec, claimed, err := k.ClaimBatch(ctx, "bank", "key", "batch:fp", "claim0000000000000000001", plan, now, time.Minute, time.Hour)
	if err != nil || !claimed || !reflect.DeepEqual(rec.Rows, plan) {
		t.Fatalf("claim: %+v %v %v", rec, claimed, err)
	}
	other, claimed, err := k.ClaimBatch(ctx, "bank", "key", "batch:fp", "claim0000000000000000002", nil, now, time.Minute, time.Hour)
	if err != nil || claimed || other.OrderID != "claim0000000000000000001" || !reflect.DeepEqual(other.Rows, plan) {
		t.Fatalf("second claim: %+v %v %v", other, claimed, err)
	}
	plan[0].Seq, plan[1].Seq = 7, 8
	if err := k.PlanBatch(ctx, "bank", "key", "claim0000000000000000001", plan); err != nil {
		t.Fatal(err)
	}
	if err := k.PlanBatch(ctx, "bank", "key", "claim0000000000000000002", plan); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
		t.Errorf("another request's plan: %v, want 409", err)
	}
	if err := k.Yield(ctx, "bank", "key", "claim0000000000000000001", now); err != nil {
		t.Fatal(err)
	}
	got, ok, err := k.GetBatch(ctx, "bank", "key", now)
	if err != nil || !ok || !reflect.DeepEqual(got.Rows, plan) || got.State != orders.KeyPending || !got.Lease.Equal(now) {
		t.Fatalf("after plan and yield: %+v %v %v", got, ok, err)
	}
	answers := []orders.RowAnswer{
		{Index: 0, OrderID: "a00000000000000000000007", Amount: 200, Quantity: 2},
		{Index: 1, Code: stampduty.EINVALID, Message: "Invalid data. quantity must be an integer from 1 to 20", Fields: []stampduty.FieldError{{Path: "quantity", Message: "quantity must be an integer from 1 to 20"}}},
		{Index: 2, OrderID: "a00000000000000000000008", Amount: 20, Quantity: 1},
	}
	if err := k.CompleteBatch(ctx, "bank", "key", "claim0000000000000000001", answers); err != nil {
		t.Fatal(err)
	}
	got, ok, err = k.GetBatch(ctx, "bank", "key", now)
	if err != nil || !ok || got.State != orders.KeyDone || !reflect.DeepEqual(got.Answers, answers) {
		t.Fatalf("done: %+v %v %v", got, ok, err)
	}
	if err := k.CompleteBatch(ctx, "bank", "key", "claim0000000000000000001", answers); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
		t.Errorf("completing a done key again: %v, want 409", err)
	}
	// A create's record under the key reads as a batch's with another fingerprint.
	if _, _, err := k.Claim(ctx, "bank", "single", "fp", "a00000000000000000000009", now, time.Minute, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := k.GetBatch(ctx, "bank", "single", now); err != nil || !ok || got.Fingerprint != "fp" || got.Rows != nil {
		t.Errorf("a create's record: %+v %v %v", got, ok, err)
	}
}
