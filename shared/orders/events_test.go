package orders_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// reread returns order doc as stored now, read consistently.
func reread(t *testing.T, table *store.Orders, doc string) orders.Stored {
	t.Helper()
	ctx := context.Background()
	s, err := table.ByDocument(ctx, doc)
	if err == nil {
		s, err = table.Reread(ctx, s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// outbox returns the pending events of order doc.
func outbox(t *testing.T, table *store.Orders, doc string) []stampduty.Pending {
	t.Helper()
	return reread(t, table, doc).Outbox
}

// stored returns order doc as stored now.
func stored(t *testing.T, table *store.Orders, doc string) stampduty.Order {
	t.Helper()
	return reread(t, table, doc).Order
}

// checkEvent checks that ev is an event of type typ between the statuses
// previous and status ("" for null) about order o as stored, made at o's
// updatedAt.
func checkEvent(t *testing.T, ev stampduty.Pending, typ, previous, status string, o stampduty.Order) {
	t.Helper()
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if !stampduty.ValidEventID(ev.ID) || ev.Type != typ || str(ev.PreviousStatus) != previous || str(ev.Status) != status ||
		(previous == "") != (ev.PreviousStatus == nil) || (status == "") != (ev.Status == nil) || ev.At != o.UpdatedAt {
		t.Errorf("event %s %s (%q → %q) at %s, want a %s (%q → %q) at %s", ev.ID, ev.Type, str(ev.PreviousStatus), str(ev.Status), ev.At,
			typ, previous, status, o.UpdatedAt)
	}
	if !reflect.DeepEqual(ev.Order, o) {
		t.Errorf("event's order\n%+v\nwant the order right after the change\n%+v", ev.Order, o)
	}
}

// types returns the types of events, oldest first.
func types(events []stampduty.Pending) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

// TestCreateRecordsItsEvent: a stored order carries one order.created event
// in the write that stores it; a replay or a refusal stores none.
func TestCreateRecordsItsEvent(t *testing.T) {
	w := newWorld(t)
	t.Run("OrderCreated", func(t *testing.T) {
		doc := w.create(t, "alice", nil)
		o := stored(t, w.orders, doc)
		got := outbox(t, w.orders, doc)
		if len(got) != 1 {
			t.Fatalf("outbox %v, want one order.created", types(got))
		}
		checkEvent(t, got[0], stampduty.EventOrderCreated, "", "", o)
		if got[0].At != o.CreatedAt {
			t.Errorf("event at %s, want the order's createdAt %s", got[0].At, o.CreatedAt)
		}
	})
	t.Run("ReplayWithTheKeyStoresNone", func(t *testing.T) {
		key := &orders.Key{Value: "k1", Fingerprint: "fp"}
		doc := w.create(t, "bob", key)
		if again := w.create(t, "bob", key); again != doc {
			t.Fatalf("replay answered %s, want %s", again, doc)
		}
		if got := outbox(t, w.orders, doc); len(got) != 1 {
			t.Errorf("outbox %v, want the one order.created", types(got))
		}
		w.checkCount(t, "bob", 1)
	})
	t.Run("RefusedCreateStoresNone", func(t *testing.T) {
		ctx := context.Background()
		if _, err := w.creator.Create(ctx, "carol", body(t, map[string]any{"purpose": "Moon Lease"}), nil); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Errorf("unknown purpose: %v, want ENOTFOUND", err)
		}
		if _, err := w.creator.Create(ctx, "carol", body(t, map[string]any{"amount": 501}), nil); stampduty.ErrorCode(err) != stampduty.EINVALID {
			t.Errorf("amount out of range: %v, want EINVALID", err)
		}
		w.checkCount(t, "carol", 0)
		pending, _, err := w.orders.Pending(ctx, webhooks.Poller{}, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range pending {
			if s.Owner == "carol" {
				t.Errorf("a refused create left pending events: %v", types(s.Outbox))
			}
		}
	})
}

// TestCreateWhoseAnswerIsLostRecordsOneEvent: when DynamoDB stores an order
// but its answer is lost, the SDK sends the same PutItem again; the order
// and its event are stored once, the event with the id it was made with.
func TestCreateWhoseAnswerIsLostRecordsOneEvent(t *testing.T) {
	w := newWorld(t)
	env := w.env
	db, proxy := env.ProxiedDB()
	c := *w.creator
	c.Orders = db.Orders(env.Table("OrdersTable"))
	proxy.SetFault(dropFirstPut(env.Table("OrdersTable")))
	doc, err := c.Create(context.Background(), "dora", body(t, nil), nil)
	proxy.SetFault(nil)
	if err != nil {
		t.Fatalf("Create = %v, want success: the retry finds its own order", err)
	}
	calls := proxy.Take()
	if got, want := env.Operations(calls), "PutItem:OrdersTable=1 Query:OrdersTable=1 UpdateItem:OrdersTable=2"; got != want {
		t.Errorf("calls = %s, want %s: the caller's first seq (the counter and its seed), then the PutItem whose answer is lost", got, want)
	}
	var retries []string
	for _, c := range calls {
		if c.Attempt > 1 {
			retries = append(retries, fmt.Sprint(c.Operation, " attempt ", c.Attempt))
		}
	}
	if got, want := strings.Join(retries, ", "), "PutItem attempt 2"; got != want {
		t.Errorf("retries = %q, want %q: the SDK sends the PutItem again", got, want)
	}
	w.checkCount(t, "dora", 1)
	if got := outbox(t, w.orders, doc); len(got) != 1 || got[0].Type != stampduty.EventOrderCreated {
		t.Errorf("outbox %v, want one order.created", types(got))
	}
}

// dropFirstPut is a proxy fault that applies the first PutItem on table and
// loses its answer.
func dropFirstPut(table string) func(storetest.ProxyCall) *storetest.Fault {
	var n atomic.Int64
	return func(c storetest.ProxyCall) *storetest.Fault {
		if c.Operation == "PutItem" && c.Table == table && n.Add(1) == 1 {
			return &storetest.Fault{Drop: true}
		}
		return nil
	}
}

// TestChangesRecordTheirEvents: each stored change of an order carries its
// event in the same write, oldest first; a change that stores nothing
// records nothing.
func TestChangesRecordTheirEvents(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 4)
	table := w.orders
	f := w.fulfiller(table, w.files())
	advance := func(o stampduty.Order, c stampduty.Change) error {
		_, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, c, "op-1")
		return err
	}
	created := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"}

	t.Run("StatusChanged", func(t *testing.T) {
		o := w.mine[0]
		if err := advance(o, created); err != nil {
			t.Fatal(err)
		}
		got := outbox(t, table, o.DocumentID)
		if len(got) != 1 {
			t.Fatalf("outbox %v, want one order.status_changed", types(got))
		}
		checkEvent(t, got[0], stampduty.EventOrderStatusChanged, stampduty.StatusPending, stampduty.StatusCreated, stored(t, table, o.DocumentID))
		if got, want := got[0].Fulfillment, o.Fulfillments[0].DocumentID; got != want {
			t.Errorf("the event's fulfillment %q, want the paper that moved, %q", got, want)
		}

		t.Run("RepeatStoresNone", func(t *testing.T) {
			if err := advance(o, created); err != nil {
				t.Fatal(err)
			}
			if got := outbox(t, table, o.DocumentID); len(got) != 1 {
				t.Errorf("outbox %v after a repeat, want the one event", types(got))
			}
		})
		t.Run("ReferenceOnlyStoresNone", func(t *testing.T) {
			// Created, asked again with a certificate number it lacks: stored,
			// but no fulfillment moved.
			ref := stampduty.Change{Status: stampduty.StatusCreated, CertificateNumber: "IN-KA93689528000869Y"}
			if err := advance(o, ref); err != nil {
				t.Fatal(err)
			}
			if s := stored(t, table, o.DocumentID); s.Fulfillments[0].CertificateNumber != ref.CertificateNumber {
				t.Fatalf("the reference was not stored: %+v", s.Fulfillments[0])
			}
			if got := outbox(t, table, o.DocumentID); len(got) != 1 {
				t.Errorf("outbox %v after storing a reference, want the one event", types(got))
			}
		})
		t.Run("RefusedChangesStoreNone", func(t *testing.T) {
			for name, c := range map[string]stampduty.Change{
				"SkipAStep":  {Status: stampduty.StatusPrinted},
				"Invalid":    {Status: "Lost"},
				"AnotherRef": {Status: stampduty.StatusCreated, UniqueDocRef: "REF-OTHER"},
			} {
				if err := advance(o, c); err == nil {
					t.Errorf("%s: stored", name)
				}
			}
			if _, err := f.Advance(ctx, o.DocumentID, "nosuchfulfillment0000000", created, "op-1"); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
				t.Errorf("unknown fulfillment: %v, want ENOTFOUND", err)
			}
			if got := outbox(t, table, o.DocumentID); len(got) != 1 {
				t.Errorf("outbox %v after refused changes, want the one event", types(got))
			}
		})
	})
	t.Run("TwoQuickChangesInOrder", func(t *testing.T) {
		o := w.mine[1]
		if err := advance(o, toCreated()); err != nil {
			t.Fatal(err)
		}
		if err := advance(o, toProcured()); err != nil {
			t.Fatal(err)
		}
		got := outbox(t, table, o.DocumentID)
		if len(got) != 2 {
			t.Fatalf("outbox %v, want two order.status_changed", types(got))
		}
		checkEvent(t, got[1], stampduty.EventOrderStatusChanged, stampduty.StatusCreated, stampduty.StatusProcured, stored(t, table, o.DocumentID))
		if p := got[0]; *p.PreviousStatus != stampduty.StatusPending || *p.Status != stampduty.StatusCreated || p.Order.Fulfillments[0].Status != stampduty.StatusCreated {
			t.Errorf("first event %+v, want Pending → Created about the order as Created", p)
		}
		if got[0].ID == got[1].ID || got[0].At > got[1].At {
			t.Errorf("events %s at %s, %s at %s: want two ids, oldest first", got[0].ID, got[0].At, got[1].ID, got[1].At)
		}

		t.Run("CertificateAttached", func(t *testing.T) {
			if _, err := f.AttachCertificate(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); err != nil {
				t.Fatal(err)
			}
			got := outbox(t, table, o.DocumentID)
			if len(got) != 3 {
				t.Fatalf("outbox %v, want a third event", types(got))
			}
			now := stored(t, table, o.DocumentID)
			checkEvent(t, got[2], stampduty.EventOrderCertificateAttached, "", "", now)
			if got, want := got[2].Fulfillment, o.Fulfillments[0].DocumentID; got != want {
				t.Errorf("the event's fulfillment %q, want the paper certified, %q", got, want)
			}
			if cf := got[2].Order.Fulfillments[0].CertificateFile; cf == nil || cf.Key == "" || cf.URL != "" {
				t.Errorf("the event's certificate %+v: want its key, and no address until sending", cf)
			}
		})
	})
	t.Run("DocumentUploaded", func(t *testing.T) {
		o := w.mine[2]
		if _, err := f.UploadDocument(ctx, "owner", o.DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); err != nil {
			t.Fatal(err)
		}
		got := outbox(t, table, o.DocumentID)
		if len(got) != 1 {
			t.Fatalf("outbox %v, want one order.document_uploaded", types(got))
		}
		checkEvent(t, got[0], stampduty.EventOrderDocumentUploaded, "", "", stored(t, table, o.DocumentID))
		if d := got[0].Order.StampDuty.UploadedDocument; d == nil || d.Key == "" {
			t.Errorf("the event's document %+v: want it, with its key", d)
		}
		t.Run("RefusedUploadsStoreNone", func(t *testing.T) {
			if _, err := f.UploadDocument(ctx, "someone-else", o.DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
				t.Errorf("another caller's order: %v, want ENOTFOUND", err)
			}
			if _, err := f.UploadDocument(ctx, "owner", o.DocumentID, stampduty.Upload{ContentType: "text/plain", Body: []byte("x")}); err == nil {
				t.Error("a text file was stored")
			}
			if _, err := f.AttachCertificate(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
				t.Errorf("a certificate while Pending: %v, want ECONFLICT", err)
			}
			if got := outbox(t, table, o.DocumentID); len(got) != 1 {
				t.Errorf("outbox %v, want the one event", types(got))
			}
		})
	})
	t.Run("LostRaceStoresNone", func(t *testing.T) { lostRaceStoresNone(t, w, w.mine[3], advance, toCreated()) })
}

// lostRaceStoresNone has o's first paper moved (advance, created) while a
// second operator, who read o before, moves it too: the loser gets
// ECONFLICT and o's outbox holds the winner's event only.
func lostRaceStoresNone(t *testing.T, w *fulfillmentWorld, o stampduty.Order, advance func(stampduty.Order, stampduty.Change) error, created stampduty.Change) {
	ctx, table := context.Background(), w.orders
	stale, err := table.ByDocument(ctx, o.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if err := advance(o, created); err != nil {
		t.Fatal(err)
	}
	// The loser read the order before the winner's change.
	loser := w.fulfiller(staleReads{table, stale}, w.files())
	_, err = loser.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-LOSER"}, "op-2")
	if stampduty.ErrorCode(err) != stampduty.ECONFLICT {
		t.Fatalf("the loser's change = %v, want ECONFLICT", err)
	}
	if got := outbox(t, table, o.DocumentID); len(got) != 1 || *got[0].Status != stampduty.StatusCreated {
		t.Errorf("outbox %v, want the winner's event only", types(got))
	}
}

// staleReads is an orders store whose index read returns an old read of
// the order, as a request that lost a race has.
type staleReads struct {
	orders.Fulfillments
	stale orders.Stored
}

func (s staleReads) ByDocument(context.Context, string) (orders.Stored, error) { return s.stale, nil }

// TestChangeWhoseAnswerIsLostRecordsOneEvent: a change DynamoDB stored but
// whose answer was lost (the SDK's retry then fails its own condition, or
// the workflow sees only an error) is recognised as done, and its event is
// stored once, with the id it was made with.
func TestChangeWhoseAnswerIsLostRecordsOneEvent(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 2)
	table := w.orders
	t.Run("SDKRetry", func(t *testing.T) {
		db, proxy := w.env.ProxiedDB()
		f := w.fulfiller(db.Orders(w.env.Table("OrdersTable")), w.files())
		o := w.mine[0]
		proxy.SetFault(dropFirstPut(w.env.Table("OrdersTable")))
		_, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"}, "op-1")
		proxy.SetFault(nil)
		calls := proxy.Take()
		t.Logf("calls: %s", w.env.Operations(calls))
		if err != nil {
			t.Fatalf("Advance = %v, want success: the write landed", err)
		}
		if !slices.ContainsFunc(calls, func(c storetest.ProxyCall) bool { return c.ErrType == "ConditionalCheckFailedException" }) {
			t.Error("the retried PutItem did not fail its condition: the fault did not lose the answer")
		}
		got := outbox(t, table, o.DocumentID)
		if len(got) != 1 {
			t.Fatalf("outbox %v, want one event", types(got))
		}
		checkEvent(t, got[0], stampduty.EventOrderStatusChanged, stampduty.StatusPending, stampduty.StatusCreated, stored(t, table, o.DocumentID))
	})
	t.Run("AnswerLostToTheWorkflow", func(t *testing.T) {
		o := w.mine[1]
		f := w.fulfiller(landsThenFails{table}, w.files())
		if _, err := f.UploadDocument(ctx, "owner", o.DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); err != nil {
			t.Fatalf("UploadDocument = %v, want success", err)
		}
		if got := outbox(t, table, o.DocumentID); len(got) != 1 || got[0].Type != stampduty.EventOrderDocumentUploaded {
			t.Errorf("outbox %v, want one order.document_uploaded", types(got))
		}
	})
}

// TestOnlyListenedEventsAreRecorded: with the webhooks table as Listeners,
// a change records its event only when the order's owner has an enabled
// webhook subscribed to the event's type (read just before the write); an
// event nobody listens to is not written, so the change costs no outbox
// entry and no relay.
func TestOnlyListenedEventsAreRecorded(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 1) // "owner" has one order, stored without events
	hooks := w.env.DB().Webhooks(w.env.Table("WebhooksTable"))
	listen := func(hooks *store.Webhooks, owner string, enabled bool, events ...string) {
		t.Helper()
		s, err := hooks.Webhooks(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		s.Live = append(s.Live, webhooks.Webhook{ID: int64(len(s.Live) + 1), DocumentID: "w" + owner + "00000000000000000000", URL: "https://hooks.example.com/x",
			Events: events, Enabled: enabled, Secret: "whsec_x"})
		if err := hooks.SaveWebhooks(ctx, owner, s, s.V); err != nil {
			t.Fatal(err)
		}
	}
	cw := newWorld(t)
	createHooks := cw.env.DB().Webhooks(cw.env.Table("WebhooksTable"))
	cw.creator.Listeners = createHooks
	for _, c := range []struct {
		name, owner string
		enabled     bool
		events      []string
		want        int
	}{
		{"NoWebhookNoEvent", "nobody", false, nil, 0},
		{"AnotherTypeNoEvent", "changes-only", true, []string{stampduty.EventOrderStatusChanged}, 0},
		{"DisabledNoEvent", "disabled", false, []string{stampduty.EventOrderCreated}, 0},
		{"SubscribedEvent", "listener", true, []string{stampduty.EventOrderCreated}, 1},
	} {
		t.Run("Create"+c.name, func(t *testing.T) {
			if c.events != nil {
				listen(createHooks, c.owner, c.enabled, c.events...)
			}
			doc := cw.create(t, c.owner, nil)
			if got := outbox(t, cw.orders, doc); len(got) != c.want {
				t.Errorf("outbox %v, want %d order.created", types(got), c.want)
			}
		})
	}

	f := w.fulfiller(w.orders, w.files())
	f.Listeners = hooks
	o := w.mine[0]
	t.Run("ChangeNobodyListensToNoEvent", func(t *testing.T) {
		if _, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"}, "op-1"); err != nil {
			t.Fatal(err)
		}
		if got := outbox(t, w.orders, o.DocumentID); len(got) != 0 {
			t.Errorf("outbox %v, want none", types(got))
		}
	})
	t.Run("ChangeListenedToEvent", func(t *testing.T) {
		listen(hooks, "owner", true, stampduty.EventOrderStatusChanged)
		if _, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Change{Status: stampduty.StatusProcured, CertificateNumber: "IN-KA12345678901234A"}, "op-1"); err != nil {
			t.Fatal(err)
		}
		got := outbox(t, w.orders, o.DocumentID)
		if len(got) != 1 {
			t.Fatalf("outbox %v, want one order.status_changed", types(got))
		}
		checkEvent(t, got[0], stampduty.EventOrderStatusChanged, stampduty.StatusCreated, stampduty.StatusProcured, stored(t, w.orders, o.DocumentID))
	})
}
