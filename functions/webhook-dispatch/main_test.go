package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/webhooks"
)

func TestMain(m *testing.M) { functest.Main(m) }

// newReceiver starts a loopback webhook receiver whose /gone answers 410,
// any other path 204 unless told otherwise (On).
func newReceiver(t *testing.T) *receiver {
	r := startReceiver(t, nil)
	r.On("/gone", func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusGone) })
	return r
}

// TestDispatch runs the function once over changes made through the
// workflows: each subscribed receiver gets each event of its caller's
// orders, signed, in the order of the changes, its order rendered for the
// caller with fresh download addresses; a 410 disables its webhook; and the
// function uses exactly the permissions the template grants it.
func TestDispatch(t *testing.T) {
	s, run := functest.NewScheduled(t, "WebhookDispatchFunction", wire)
	env, ctx := s.Env, context.Background()
	db := env.DB()
	reg := &webhooks.Registry{Hooks: db.Webhooks(env.Table("WebhooksTable")), Jobs: db.Deliveries(env.Table("DeliveriesTable")),
		IDs: db.IDs(env.Table("CountersTable"), 10), Guard: webhooks.Guard{Local: true}, Now: time.Now}
	rc := newReceiver(t)
	register := func(owner, path string, events ...string) webhooks.Registered {
		t.Helper()
		w, err := reg.Register(ctx, owner, webhooks.Registration{URL: rc.URL + path, Events: events})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	all := register(localdb.DevOwner, "/all", stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged,
		stampduty.EventOrderDocumentUploaded, stampduty.EventOrderCertificateAttached)
	register(localdb.DevOwner, "/changed", stampduty.EventOrderStatusChanged)
	gone := register(localdb.DevOwner, "/gone", stampduty.EventOrderCreated)
	register("someone-else", "/other", stampduty.EventOrderCreated)
	// A receiver that fails: the status change waits for the create's
	// retry (its job is postponed), even in the run that put it.
	rc.On("/flaky", func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusInternalServerError) })
	register(localdb.DevOwner, "/flaky", stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged)

	o := createOrder(t, env, localdb.DevOwner)
	f := functest.Fulfiller(env)
	if _, err := f.UploadDocument(ctx, localdb.DevOwner, o.DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF,
		Body: []byte("%PDF-1.7\nx\n%%EOF\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID,
		stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "IN-KA-1"}, functest.Operator); err != nil {
		t.Fatal(err)
	}

	// An order of three papers whose second paper moves twice: its events
	// are in the paper's own item (the store's papers.go).
	register("papers-owner", "/papers", stampduty.EventOrderStatusChanged)
	three := functest.AddPapers(t, env, "papers-owner", 3)
	for _, c := range []stampduty.Change{{Status: stampduty.StatusCreated, UniqueDocRef: "IN-KA-2"},
		{Status: stampduty.StatusProcured, CertificateNumber: "IN-KA93689528000869Y"}} {
		if _, err := f.Advance(ctx, three.DocumentID, three.Fulfillments[1].DocumentID, c, functest.Operator); err != nil {
			t.Fatal(err)
		}
	}

	// A test order whose first step is due: the run makes it (its
	// steps are TestTestOrdersFulfilThemselves's).
	tester := stampduty.TestOwnerOf("papers-owner")
	selfMoving := functest.AddOrders(t, env, tester, 1)[0]
	if err := db.Deliveries(env.Table("DeliveriesTable")).Schedule(ctx, tester, selfMoving.DocumentID, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Its first made-up unique_doc_ref is another test paper's: the step makes another.
	_, ref := holdMadeUp(t, env, f, selfMoving.DocumentID, 0, orders.FieldDocRef)

	// One run that polls for about two seconds.
	runCtx, cancel := context.WithTimeout(ctx, Margin+2*time.Second)
	defer cancel()
	if err := run(runCtx, nil); err != nil {
		t.Fatalf("run: %v", err)
	}

	t.Run("EveryEventInOrderSigned", func(t *testing.T) { everyEventInOrderSigned(t, rc.At("/all"), all.Secret, o.DocumentID) })
	t.Run("OnlyTheSubscribedTypes", func(t *testing.T) {
		if got := rc.At("/changed"); len(got) != 1 || !strings.Contains(string(got[0].Body), stampduty.EventOrderStatusChanged) {
			t.Errorf("/changed got %d events, want the status change", len(got))
		}
		if got := rc.At("/other"); len(got) != 0 {
			t.Errorf("another caller's webhook got %d events of this caller's order", len(got))
		}
	})
	t.Run("GoneDisables", func(t *testing.T) {
		if got := rc.At("/gone"); len(got) != 1 {
			t.Errorf("/gone got %d requests, want one", len(got))
		}
		hooks, err := reg.List(ctx, localdb.DevOwner)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(hooks, func(w webhooks.Webhook) bool { return w.DocumentID == gone.DocumentID })
		if i < 0 || hooks[i].Enabled {
			t.Errorf("the webhook that answered 410 is not disabled: %+v", hooks)
		}
		atts, err := reg.Deliveries(ctx, localdb.DevOwner, gone.DocumentID)
		if err != nil || len(atts) != 1 || atts[0].Status != http.StatusGone || atts[0].NextAttemptAt != nil {
			t.Errorf("deliveries of /gone: %+v, %v", atts, err)
		}
	})
	t.Run("LaterEventsWaitForARetry", func(t *testing.T) {
		if got := rc.At("/flaky"); len(got) != 1 || !strings.Contains(string(got[0].Body), stampduty.EventOrderCreated) {
			t.Errorf("/flaky got %d requests, want the create's once (its status change waits for the create's retry)", len(got))
		}
	})
	t.Run("PaperEventsNameTheirPaper", func(t *testing.T) { paperEventsNameTheirPaper(t, rc.At("/papers"), three.Fulfillments[1].DocumentID) })
	t.Run("TestOrderStepped", func(t *testing.T) {
		o, err := f.Get(ctx, tester, selfMoving.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := o.Fulfillments[0].Status, stampduty.StatusCreated; got != want {
			t.Errorf("the test order's paper is %s, want %s", got, want)
		}
		if got, want := o.Fulfillments[0].UniqueDocRef, ref; got != want {
			t.Errorf("the test order's paper has unique_doc_ref %q, want its second try's %q", got, want)
		}
	})
	t.Run("OutboxesEmptied", func(t *testing.T) {
		pending, _, err := db.Orders(env.Table("OrdersTable")).Pending(ctx, webhooks.Poller{}, "", 10)
		if err != nil || len(pending) != 0 {
			t.Errorf("%d orders still have pending events (%v)", len(pending), err)
		}
	})
	// The ledger's grants charge a test paper reaching Procured, which
	// this test's order does not.
	s.CheckTemplate(s.Proxy.All(), functest.Elsewhere{Table: "LedgerTable", Test: "TestTestOrdersFulfilThemselves"})
}

// everyEventInOrderSigned checks the deliveries of the webhook of every
// type: the order orderID's created, document and status events, in that
// order, each signed with secret, rendered as its caller sees it.
func everyEventInOrderSigned(t *testing.T, got []delivery, secret, orderID string) {
	var types []string
	for _, d := range got {
		var ev webhooks.Event
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.ID != d.ID || !stampduty.ValidEventID(ev.ID) {
			t.Errorf("event id %q, header %q", ev.ID, d.ID)
		}
		if err := webhooks.Verify(d.Signature, secret, d.Body, time.Now(), time.Minute); err != nil {
			t.Errorf("%s: the signature does not verify: %v", ev.Type, err)
		}
		var order stampduty.Order
		if err := json.Unmarshal(ev.Data.Order, &order); err != nil || order.DocumentID != orderID {
			t.Errorf("%s: order %s, %v", ev.Type, ev.Data.Order, err)
		}
		if strings.Contains(string(ev.Data.Order), functest.Operator) {
			t.Errorf("%s: the caller's order names the operator: %s", ev.Type, ev.Data.Order)
		}
		switch ev.Type {
		case stampduty.EventOrderDocumentUploaded:
			doc := order.StampDuty.UploadedDocument
			if doc == nil || doc.URL == "" {
				t.Fatalf("the document event's order has no document address: %s", ev.Data.Order)
			}
			if r := functest.Download(t, doc.URL); r.Status != http.StatusOK || !strings.HasPrefix(r.Body, "%PDF") {
				t.Errorf("the event's document address answers %d", r.Status)
			}
		case stampduty.EventOrderStatusChanged:
			if ev.Data.PreviousStatus == nil || *ev.Data.PreviousStatus != stampduty.StatusPending ||
				ev.Data.OrderStatus == nil || *ev.Data.OrderStatus != stampduty.StatusCreated {
				t.Errorf("status change %v → %v", ev.Data.PreviousStatus, ev.Data.OrderStatus)
			}
		default:
			if ev.Data.PreviousStatus != nil || ev.Data.OrderStatus != nil {
				t.Errorf("%s has statuses", ev.Type)
			}
		}
	}
	want := []string{stampduty.EventOrderCreated, stampduty.EventOrderDocumentUploaded, stampduty.EventOrderStatusChanged}
	if !slices.Equal(types, want) {
		t.Errorf("/all got %v, want %v", types, want)
	}
}

// paperEventsNameTheirPaper checks the two events of the moves of paper 2
// (documentId paper2) of an order of three papers: each names the paper,
// its order as it was after the move.
func paperEventsNameTheirPaper(t *testing.T, got []delivery, paper2 string) {
	if len(got) != 2 {
		t.Fatalf("/papers got %d events, want the two moves of paper 2", len(got))
	}
	for i, want := range []string{stampduty.StatusCreated, stampduty.StatusProcured} {
		var ev webhooks.Event
		if err := json.Unmarshal(got[i].Body, &ev); err != nil {
			t.Fatal(err)
		}
		var order stampduty.Order
		if err := json.Unmarshal(ev.Data.Order, &order); err != nil || len(order.Fulfillments) != 3 {
			t.Fatalf("event %d: order %s (%v), want its 3 papers", i, ev.Data.Order, err)
		}
		if ev.Data.Fulfillment == nil || *ev.Data.Fulfillment != paper2 {
			t.Errorf("event %d: data.fulfillment %v, want paper 2's documentId %s", i, ev.Data.Fulfillment, paper2)
		}
		if ev.Data.OrderStatus == nil || *ev.Data.OrderStatus != want || order.Fulfillments[1].Status != want ||
			order.Fulfillments[0].Status != stampduty.StatusPending || order.Fulfillments[2].Status != stampduty.StatusPending {
			t.Errorf("event %d: to %v, papers %s %s %s; want paper 2 %s, the others Pending", i, ev.Data.OrderStatus,
				order.Fulfillments[0].Status, order.Fulfillments[1].Status, order.Fulfillments[2].Status, want)
		}
	}
}
