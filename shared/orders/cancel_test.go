package orders_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// cancelWorld is a fulfillmentWorld whose Fulfiller reaches DynamoDB
// through a proxy that records every call, and the bucket through
// recordingFiles.
type cancelWorld struct {
	*fulfillmentWorld
	proxy *storetest.Proxy
	table *store.Orders
	rf    *recordingFiles
	f     *orders.Fulfiller
}

func newCancelWorld(t *testing.T, n int) *cancelWorld {
	w := newFulfillmentWorld(t, n)
	db, proxy := w.env.ProxiedDB()
	table := db.Orders(w.env.Table("OrdersTable"))
	rf := w.files()
	f := &orders.Fulfiller{Orders: table, Files: rf, Direct: rf.Store, Watches: db.Uploads(w.env.Table("UploadsTable")),
		IDs: db.IDs(w.env.Table("CountersTable"), 10), Numbers: db.Numbers(w.env.Table("NumbersTable")), Now: time.Now}
	return &cancelWorld{fulfillmentWorld: w, proxy: proxy, table: table, rf: rf, f: f}
}

// writes returns the DynamoDB writes made since the last Take, and takes
// every call.
func (c *cancelWorld) writes() []string {
	var out []string
	for _, call := range c.proxy.Take() {
		switch call.Operation {
		case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
			out = append(out, call.Operation+":"+call.Table)
		}
	}
	return out
}

// advance moves o's first fulfillment as c asks, or fails t.
func (c *cancelWorld) advance(t *testing.T, o stampduty.Order, ch ...stampduty.Change) {
	t.Helper()
	for _, x := range ch {
		if _, err := c.f.Advance(context.Background(), o.DocumentID, o.Fulfillments[0].DocumentID, x, "op-1"); err != nil {
			t.Fatal(err)
		}
	}
}

// checkCancelled checks that o is cancelled by who for reason, at its updatedAt.
func checkCancelled(t *testing.T, o stampduty.Order, who string, reason *string) {
	t.Helper()
	if o.CancelledAt == nil || o.Cancellation == nil || *o.CancelledAt != o.UpdatedAt || o.Cancellation.By != who ||
		!reflect.DeepEqual(o.Cancellation.Reason, reason) {
		t.Errorf("cancelledAt %v (updatedAt %s), cancellation %+v: want cancelled by %s at its updatedAt, reason %v", o.CancelledAt, o.UpdatedAt, o.Cancellation, who, reason)
	}
}

// TestCallerCancel: a caller cancels its order while every fulfillment is
// Pending, with one write that records order.cancelled; the order stays
// readable, leaves the work queue, and a second cancel (by whomever)
// answers the same and writes nothing. A moved paper, another caller's
// order or an unknown one are refused and change nothing.
func TestCallerCancel(t *testing.T) {
	ctx := context.Background()
	c := newCancelWorld(t, 4)
	o := c.mine[0]
	var first stampduty.Order

	t.Run("WhileEveryPaperIsPending", func(t *testing.T) {
		c.proxy.Take()
		before := time.Now()
		got, err := c.f.Cancel(ctx, "owner", o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.writes(), []string{"PutItem:" + c.env.Table("OrdersTable")}; !slices.Equal(got, want) {
			t.Errorf("writes %v, want %v", got, want)
		}
		s := stored(t, c.orders, o.DocumentID)
		checkCancelled(t, s, stampduty.ByCaller, nil)
		if at, err := time.Parse(time.RFC3339, *s.CancelledAt); err != nil || at.Before(before.Truncate(time.Millisecond)) || *s.CancelledAt != stampduty.FormatTime(at) {
			t.Errorf("cancelledAt %s: want the time of the cancel, as createdAt", *s.CancelledAt)
		}
		if !reflect.DeepEqual(got, s.ForCaller()) {
			t.Errorf("answer\n%+v\nwant the stored order\n%+v", got, s.ForCaller())
		}
		if !reflect.DeepEqual(s.Fulfillments, o.Fulfillments) || !sameJSON(s.StampDuty, o.StampDuty) || s.CreatedAt != o.CreatedAt {
			t.Errorf("the cancel changed more than the cancellation: %+v", s)
		}
		ev := outbox(t, c.orders, o.DocumentID)
		if len(ev) != 1 {
			t.Fatalf("outbox %v, want one order.cancelled", types(ev))
		}
		checkEvent(t, ev[0], stampduty.EventOrderCancelled, "", "", s)
		first = got
	})
	t.Run("LeavesTheQueue", func(t *testing.T) {
		page, _, err := c.f.Queue(ctx, stampduty.StatusPending, false, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		var queued []string
		for _, q := range page {
			queued = append(queued, q.DocumentID)
		}
		if slices.Contains(queued, o.DocumentID) || !slices.Contains(queued, c.mine[1].DocumentID) {
			t.Errorf("Pending queue %v: want %s and not the cancelled %s", queued, c.mine[1].DocumentID, o.DocumentID)
		}
	})
	t.Run("SecondCancelAnswersTheSameAndWritesNothing", func(t *testing.T) {
		c.proxy.Take()
		again, err := c.f.Cancel(ctx, "owner", o.DocumentID)
		if err != nil || !reflect.DeepEqual(again, first) {
			t.Errorf("again = %+v, %v\nwant the first answer %+v", again.Cancellation, err, first.Cancellation)
		}
		ops, err := c.f.OpsCancel(ctx, o.DocumentID, "Duplicate order")
		if err != nil || !reflect.DeepEqual(ops.Order.ForCaller(), first) {
			t.Errorf("an operator's cancel after it = %+v, %v: want the caller's cancel as it stands", ops.Cancellation, err)
		}
		if w := c.writes(); len(w) != 0 {
			t.Errorf("a second cancel wrote %v", w)
		}
		if ev := outbox(t, c.orders, o.DocumentID); len(ev) != 1 {
			t.Errorf("outbox %v, want the first cancel's event only", types(ev))
		}
	})
	t.Run("ErrAfterAPaperMoved", func(t *testing.T) {
		m := c.mine[1]
		c.advance(t, m, toCreated())
		before := reread(t, c.orders, m.DocumentID)
		c.proxy.Take()
		_, err := c.f.Cancel(ctx, "owner", m.DocumentID)
		if stampduty.ErrorCode(err) != stampduty.ECONFLICT || err.Error() != "An order can be cancelled only while every fulfillment is Pending." {
			t.Errorf("Cancel = %v, want ECONFLICT with papers.md's message", err)
		}
		if w := c.writes(); len(w) != 0 {
			t.Errorf("a refused cancel wrote %v", w)
		}
		if now := reread(t, c.orders, m.DocumentID); !reflect.DeepEqual(now, before) {
			t.Errorf("the order changed:\n%+v\nwas\n%+v", now, before)
		}
	})
	t.Run("ErrAnotherCallersOrUnknownOrder", func(t *testing.T) {
		c.proxy.Take()
		for owner, doc := range map[string]string{"someone-else": c.mine[2].DocumentID, "owner": "nosuchorder0000000000000"} {
			_, err := c.f.Cancel(ctx, owner, doc)
			if stampduty.ErrorCode(err) != stampduty.ENOTFOUND || err.Error() != "Order with the documentId: "+doc+" cannot be found." {
				t.Errorf("%s's cancel of %s = %v, want the one-order read's 404", owner, doc, err)
			}
		}
		if w := c.writes(); len(w) != 0 {
			t.Errorf("refused cancels wrote %v", w)
		}
		if s := stored(t, c.orders, c.mine[2].DocumentID); s.Cancelled() {
			t.Error("another caller cancelled the order")
		}
	})
}

// TestOperatorCancel: an operator cancels, with a reason, while no
// fulfillment is Procured or Printed.
func TestOperatorCancel(t *testing.T) {
	ctx := context.Background()
	c := newCancelWorld(t, 3)
	reason := "Customer called: duplicate of another order"
	t.Run("CreatedPaper", func(t *testing.T) {
		o := c.mine[0]
		c.advance(t, o, toCreated())
		got, err := c.f.OpsCancel(ctx, o.DocumentID, reason)
		if err != nil {
			t.Fatal(err)
		}
		s := reread(t, c.orders, o.DocumentID)
		checkCancelled(t, s.Order, stampduty.ByOperator, &reason)
		if !reflect.DeepEqual(got, s.OpsOrder) || got.Owner != "owner" {
			t.Errorf("answer\n%+v\nwant the stored order as operators see it\n%+v", got, s.OpsOrder)
		}
		if ev := s.Outbox; len(ev) != 2 || ev[1].Type != stampduty.EventOrderCancelled {
			t.Errorf("outbox %v, want the move's event and order.cancelled", types(ev))
		}
		if page, _, err := c.f.Queue(ctx, stampduty.StatusCreated, false, "", 100); err != nil || len(page) != 0 {
			t.Errorf("Created queue = %d orders, %v: want none", len(page), err)
		}
	})
	t.Run("ErrProcuredPaper", func(t *testing.T) {
		o := c.mine[1]
		c.advance(t, o, toCreated(), toProcured())
		before := reread(t, c.orders, o.DocumentID)
		c.proxy.Take()
		_, err := c.f.OpsCancel(ctx, o.DocumentID, reason)
		if stampduty.ErrorCode(err) != stampduty.ECONFLICT || err.Error() != stampduty.MsgOperatorCancel {
			t.Errorf("OpsCancel = %v, want ECONFLICT %q", err, stampduty.MsgOperatorCancel)
		}
		if w := c.writes(); len(w) != 0 {
			t.Errorf("a refused cancel wrote %v", w)
		}
		if now := reread(t, c.orders, o.DocumentID); !reflect.DeepEqual(now, before) {
			t.Error("the order changed")
		}
	})
	t.Run("ErrUnknownOrder", func(t *testing.T) {
		if _, err := c.f.OpsCancel(ctx, "nosuchorder0000000000000", reason); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Errorf("OpsCancel = %v, want ENOTFOUND", err)
		}
	})
}

// TestCancelledOrderRefusesChanges: a cancelled order's fulfillments take
// no move and no certificate, and the order no document, from a body, a
// pre-signed upload or one staged before the cancel: ECONFLICT, and
// nothing is written to DynamoDB or S3.
func TestCancelledOrderRefusesChanges(t *testing.T) {
	ctx := context.Background()
	c := newCancelWorld(t, 1)
	o := c.mine[0]
	ff := o.Fulfillments[0].DocumentID
	u := staged(t, c.f, o.DocumentID) // before the cancel
	if _, err := c.f.Cancel(ctx, "owner", o.DocumentID); err != nil {
		t.Fatal(err)
	}
	before := reread(t, c.orders, o.DocumentID)
	c.proxy.Take()
	c.rf.puts = nil
	body := stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}
	declared := stampduty.Declared{Mime: stampduty.MimePDF, Size: int64(len(pdf))}
	const (
		move        = "The order is cancelled: its fulfillments can no longer move."
		certificate = "The order is cancelled: its fulfillments can no longer take a certificate."
		document    = "The order is cancelled: it can no longer take a document."
	)
	for _, tt := range []struct {
		name, want string
		do         func() error
	}{
		{"Move", move, func() error {
			_, err := c.f.Advance(ctx, o.DocumentID, ff, toCreated(), "op-1")
			return err
		}},
		{"CertificateBody", certificate, func() error {
			_, err := c.f.AttachCertificate(ctx, o.DocumentID, ff, body)
			return err
		}},
		{"CertificateUpload", certificate, func() error {
			_, err := c.f.NewCertificateUpload(ctx, o.DocumentID, ff, declared)
			return err
		}},
		{"DocumentBody", document, func() error {
			_, err := c.f.UploadDocument(ctx, "owner", o.DocumentID, body)
			return err
		}},
		{"DocumentUpload", document, func() error {
			_, err := c.f.NewDocumentUpload(ctx, "owner", o.DocumentID, declared)
			return err
		}},
		{"DocumentStagedBeforeTheCancel", document, func() error {
			_, err := c.f.AttachDocument(ctx, "owner", o.DocumentID, u.ID)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); stampduty.ErrorCode(err) != stampduty.ECONFLICT || err.Error() != tt.want {
				t.Errorf("%v, want ECONFLICT %q", err, tt.want)
			}
			if w := c.writes(); len(w) != 0 {
				t.Errorf("wrote %v", w)
			}
			if len(c.rf.puts) != 0 {
				t.Errorf("stored files %v", c.rf.puts)
			}
		})
	}
	if now := reread(t, c.orders, o.DocumentID); !reflect.DeepEqual(now, before) {
		t.Errorf("the cancelled order changed:\n%+v\nwas\n%+v", now, before)
	}
}

// TestConcurrentCancels: a caller's and an operator's cancels of one
// order, at the same time, store one cancel and one event; the other
// answers with what is stored.
func TestConcurrentCancels(t *testing.T) {
	ctx := context.Background()
	c := newCancelWorld(t, 6)
	reason := "Stopped by the operator"
	t.Run("LostRace", func(t *testing.T) {
		o := c.mine[0]
		stale, err := c.table.ByDocument(ctx, o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.f.Cancel(ctx, "owner", o.DocumentID); err != nil {
			t.Fatal(err)
		}
		// The operator read the order before the caller's cancel was stored.
		loser := *c.f
		loser.Orders = staleReads{c.table, stale}
		c.proxy.Take()
		got, err := loser.OpsCancel(ctx, o.DocumentID, reason)
		if err != nil {
			t.Fatalf("the loser's cancel = %v, want the stored cancel", err)
		}
		checkCancelled(t, got.Order, stampduty.ByCaller, nil)
		s := reread(t, c.orders, o.DocumentID)
		if !reflect.DeepEqual(got, s.OpsOrder) {
			t.Errorf("the loser's answer\n%+v\nwant the stored order\n%+v", got, s.OpsOrder)
		}
		if ev := s.Outbox; len(ev) != 1 {
			t.Errorf("outbox %v, want one order.cancelled", types(ev))
		}
		// Its write was tried, and lost on its condition.
		if w := c.writes(); len(w) != 1 {
			t.Errorf("writes %v, want the one conditional write that lost", w)
		}
	})
	t.Run("AtTheSameTime", func(t *testing.T) {
		for _, o := range c.mine[1:] {
			var (
				wg       sync.WaitGroup
				start    = make(chan struct{})
				caller   stampduty.Order
				operator stampduty.OpsOrder
				cerr     error
				oerr     error
			)
			wg.Add(2)
			go func() { defer wg.Done(); <-start; caller, cerr = c.f.Cancel(ctx, "owner", o.DocumentID) }()
			go func() { defer wg.Done(); <-start; operator, oerr = c.f.OpsCancel(ctx, o.DocumentID, reason) }()
			close(start)
			wg.Wait()
			if cerr != nil || oerr != nil {
				t.Fatalf("caller %v, operator %v: want both answered", cerr, oerr)
			}
			s := reread(t, c.orders, o.DocumentID)
			if !reflect.DeepEqual(caller, s.Order.ForCaller()) || !reflect.DeepEqual(operator, s.OpsOrder) {
				t.Errorf("answers %+v and %+v, want both the stored %+v", caller.Cancellation, operator.Cancellation, s.Cancellation)
			}
			if len(s.Outbox) != 1 || s.Outbox[0].Type != stampduty.EventOrderCancelled || s.Version != 2 {
				t.Errorf("outbox %v at version %d, want one order.cancelled, stored once", types(s.Outbox), s.Version)
			}
		}
	})
}

// TestCancelRecordsItsEventWhenListened: with the webhooks table as
// Listeners, order.cancelled is recorded, with the cancel, only when the
// owner listens to it.
func TestCancelRecordsItsEventWhenListened(t *testing.T) {
	ctx := context.Background()
	c := newCancelWorld(t, 2)
	hooks := c.env.DB().Webhooks(c.env.Table("WebhooksTable"))
	c.f.Listeners = hooks
	if _, err := c.f.Cancel(ctx, "owner", c.mine[0].DocumentID); err != nil {
		t.Fatal(err)
	}
	if ev := outbox(t, c.orders, c.mine[0].DocumentID); len(ev) != 0 {
		t.Errorf("outbox %v, want none: nobody listens", types(ev))
	}
	s, err := hooks.Webhooks(ctx, "owner")
	if err != nil {
		t.Fatal(err)
	}
	s.Live = append(s.Live, webhooks.Webhook{ID: 1, DocumentID: "wowner000000000000000000", URL: "https://hooks.example.com/x",
		Events: []string{stampduty.EventOrderCancelled}, Enabled: true, Secret: "whsec_x"})
	if err := hooks.SaveWebhooks(ctx, "owner", s, s.V); err != nil {
		t.Fatal(err)
	}
	if _, err := c.f.Cancel(ctx, "owner", c.mine[1].DocumentID); err != nil {
		t.Fatal(err)
	}
	ev := outbox(t, c.orders, c.mine[1].DocumentID)
	if len(ev) != 1 {
		t.Fatalf("outbox %v, want one order.cancelled", types(ev))
	}
	checkEvent(t, ev[0], stampduty.EventOrderCancelled, "", "", stored(t, c.orders, c.mine[1].DocumentID))
}

// TestCancelOrderOfSeveralPapers: an order whose papers are kept in items
// of their own is cancelled by locking each paper's item (the store's
// fence), then writing its own item, and then waits in no queue; no paper
// of it moves.
func TestCancelOrderOfSeveralPapers(t *testing.T) {
	ctx := context.Background()
	c := newCancelWorld(t, 0)
	reason := "Wrong state"
	queued := func(t *testing.T, status, doc string) bool {
		t.Helper()
		page, _, err := c.f.Queue(ctx, status, false, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(page, func(o stampduty.OpsOrder) bool { return o.DocumentID == doc })
	}
	t.Run("CallerWhileEveryPaperIsPending", func(t *testing.T) {
		o := functest.AddPapers(t, c.env, "owner", 3)
		if _, err := c.f.Cancel(ctx, "owner", o.DocumentID); err != nil {
			t.Fatal(err)
		}
		checkCancelled(t, stored(t, c.orders, o.DocumentID), stampduty.ByCaller, nil)
		if queued(t, stampduty.StatusPending, o.DocumentID) {
			t.Error("the cancelled order is in the Pending queue")
		}
	})
	t.Run("OperatorWithACreatedPaper", func(t *testing.T) {
		o := functest.AddPapers(t, c.env, "owner", 3)
		second := o.Fulfillments[1].DocumentID
		if _, err := c.f.Advance(ctx, o.DocumentID, second, toCreated(), "op-1"); err != nil {
			t.Fatal(err)
		}
		if !queued(t, stampduty.StatusCreated, o.DocumentID) || !queued(t, stampduty.StatusPending, o.DocumentID) {
			t.Fatal("the order is not in the Created and Pending queues before the cancel")
		}
		if _, err := c.f.Cancel(ctx, "owner", o.DocumentID); stampduty.ErrorCode(err) != stampduty.ECONFLICT || err.Error() != stampduty.MsgCallerCancel {
			t.Errorf("the caller's cancel = %v, want ECONFLICT %q", err, stampduty.MsgCallerCancel)
		}
		c.proxy.Take()
		got, err := c.f.OpsCancel(ctx, o.DocumentID, reason)
		if err != nil {
			t.Fatal(err)
		}
		// The locks: an item for each paper never changed (PutItem), a mark
		// on the Created one's (UpdateItem); then the order's own item.
		table := c.env.Table("OrdersTable")
		got2 := slices.Sorted(slices.Values(c.writes()))
		if want := []string{"PutItem:" + table, "PutItem:" + table, "PutItem:" + table, "UpdateItem:" + table}; !slices.Equal(got2, want) {
			t.Errorf("writes %v, want %v: three papers locked, then the order's own item", got2, want)
		}
		s := stored(t, c.orders, o.DocumentID)
		checkCancelled(t, s, stampduty.ByOperator, &reason)
		if !reflect.DeepEqual(got.Order, s) || s.Fulfillments[1].Status != stampduty.StatusCreated {
			t.Errorf("answer %+v, stored %+v", got.Cancellation, s.Fulfillments)
		}
		for _, status := range []string{stampduty.StatusPending, stampduty.StatusCreated} {
			if queued(t, status, o.DocumentID) {
				t.Errorf("the cancelled order is in the %s queue", status)
			}
		}
		c.proxy.Take()
		for _, ff := range []string{o.Fulfillments[0].DocumentID, second} {
			if _, err := c.f.Advance(ctx, o.DocumentID, ff, toCreated(), "op-1"); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
				t.Errorf("a move of paper %s: %v, want ECONFLICT", ff, err)
			}
		}
		if _, err := c.f.OpsCancel(ctx, o.DocumentID, "again"); err != nil {
			t.Errorf("a second cancel: %v", err)
		}
		if w := c.writes(); len(w) != 0 {
			t.Errorf("wrote %v after the cancel", w)
		}
	})
}

// sameJSON reports whether a and b are the same as JSON: what a client
// sees of them (a duty read back holds no more than its JSON).
func sameJSON(a, b any) bool {
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	return errX == nil && errY == nil && string(x) == string(y)
}
