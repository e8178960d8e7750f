package main

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { functest.Main(m) }

// TestCancelOrder drives DELETE /api/live-orders/{documentId} over one
// set of tables, each subtest in turn, then checks the function against
// template.yaml with every call they made.
func TestCancelOrder(t *testing.T) {
	ctx := context.Background()
	s := functest.New(t, "CancelOrderFunction", wire)
	mine := functest.AddOrders(t, s.Env, localdb.DevOwner, 3)
	theirs := functest.AddOrders(t, s.Env, "someone-else", 1)
	del := func(headers map[string]string, doc string) functest.Response {
		return s.Invoke(functest.Request("DELETE", "/api/live-orders/"+doc, "", headers, ""))
	}
	writes := func(calls []storetest.ProxyCall) int {
		n := 0
		for _, c := range calls {
			if c.Operation == "PutItem" || c.Operation == "UpdateItem" || c.Operation == "DeleteItem" {
				n++
			}
		}
		return n
	}

	t.Run("AnswersAsStrapiDeletes", func(t *testing.T) {
		del(functest.DevHeaders, "nosuchorder0000000000000") // the token is cached from here on
		before := functest.Account(t, s.Env, localdb.DevOwner)
		s.Proxy.Take()
		resp := del(functest.DevHeaders, mine[0].DocumentID)
		if resp.Status != http.StatusNoContent || resp.Body != "" {
			t.Fatalf("%d %q, want 204 and no body (Strapi v5's delete)", resp.Status, resp.Body)
		}
		// The order by its key (with its papers), whether the owner
		// listens, the write; then the release of its hold (accounts.md):
		// the account item's update, the entry and the one before it.
		if got, want := s.Env.Operations(s.Proxy.Take()), "BatchWriteItem:LedgerTable=1 GetItem:WebhooksTable=1 PutItem:OrdersTable=1 Query:OrdersTable=1 UpdateItem:LedgerTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		o := functest.StoredOrder(t, s.Env, mine[0].DocumentID).Order
		// What the order held is released: the account holds that less.
		after := functest.Account(t, s.Env, localdb.DevOwner)
		if got, want := after.Held, before.Held-accounts.Rupees(mine[0].StampDuty.TotalAmount); got != want {
			t.Errorf("held %s after the cancel, want %s", got, want)
		}
		if p := o.PaymentNow(); p == nil || p.Released != "20.00" || p.Held != "0.00" {
			t.Errorf("payment %+v, want 20.00 released and nothing held", p)
		}
		if o.CancelledAt == nil || o.Cancellation == nil || o.Cancellation.By != stampduty.ByCaller || o.Cancellation.Reason != nil || o.UpdatedAt != *o.CancelledAt {
			t.Errorf("stored cancelledAt %v, cancellation %+v, updatedAt %s", o.CancelledAt, o.Cancellation, o.UpdatedAt)
		}
	})
	t.Run("SecondCancelAnswersTheSameAndWritesNothing", func(t *testing.T) {
		before := functest.StoredOrder(t, s.Env, mine[0].DocumentID)
		s.Proxy.Take()
		resp := del(functest.DevHeaders, mine[0].DocumentID)
		if resp.Status != http.StatusNoContent || resp.Body != "" {
			t.Errorf("%d %q, want 204 as the first time", resp.Status, resp.Body)
		}
		if n := writes(s.Proxy.Take()); n != 0 {
			t.Errorf("%d writes, want none", n)
		}
		if after := functest.StoredOrder(t, s.Env, mine[0].DocumentID); !reflect.DeepEqual(after, before) {
			t.Error("the order changed")
		}
	})
	t.Run("ErrAfterAPaperMoved", func(t *testing.T) {
		o := mine[1]
		if _, err := functest.Fulfiller(s.Env).Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID,
			stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"}, functest.Operator); err != nil {
			t.Fatal(err)
		}
		before := functest.StoredOrder(t, s.Env, o.DocumentID)
		s.Proxy.Take()
		resp := del(functest.DevHeaders, o.DocumentID)
		e := resp.Error(t)
		if resp.Status != http.StatusConflict || e.Error.Name != "ConflictError" ||
			e.Error.Message != "An order can be cancelled only while every fulfillment is Pending." {
			t.Errorf("%d %s %q, want 409 ConflictError with papers.md's message", resp.Status, e.Error.Name, e.Error.Message)
		}
		if n := writes(s.Proxy.Take()); n != 0 {
			t.Errorf("%d writes, want none", n)
		}
		if after := functest.StoredOrder(t, s.Env, o.DocumentID); !reflect.DeepEqual(after, before) {
			t.Error("the order changed")
		}
	})
	t.Run("SeveralPapersEachLocked", func(t *testing.T) {
		// Three papers, the first with a reference stored while Pending (so
		// in an item of its own): the cancel locks the two never changed
		// with an item each (PutItem) and the first's item (UpdateItem),
		// then cancels the order; no paper moves after it.
		o := functest.AddPapers(t, s.Env, localdb.DevOwner, 3)
		f := functest.Fulfiller(s.Env)
		if _, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID,
			stampduty.Change{Status: stampduty.StatusPending, UniqueDocRef: "REF-EARLY"}, functest.Operator); err != nil {
			t.Fatal(err)
		}
		s.Proxy.Take()
		if resp := del(functest.DevHeaders, o.DocumentID); resp.Status != http.StatusNoContent {
			t.Fatalf("%d %s, want 204", resp.Status, resp.Body)
		}
		if got, want := s.Env.Operations(s.Proxy.Take()), "BatchWriteItem:LedgerTable=1 GetItem:WebhooksTable=1 PutItem:OrdersTable=3 Query:OrdersTable=1 UpdateItem:LedgerTable=1 UpdateItem:OrdersTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		for i, ff := range o.Fulfillments {
			_, err := f.Advance(ctx, o.DocumentID, ff.DocumentID, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-LATE"}, functest.Operator)
			if got, want := stampduty.ErrorCode(err), stampduty.ECONFLICT; got != want {
				t.Errorf("paper %d moved after the cancel: %v, want %s", i+1, err, want)
			}
		}
	})
	t.Run("ErrAnotherCallersOrUnknownOrderIsNotFound", func(t *testing.T) {
		for _, doc := range []string{theirs[0].DocumentID, "nosuchorder0000000000000", "x"} {
			resp := del(functest.DevHeaders, doc)
			e := resp.Error(t)
			if resp.Status != http.StatusNotFound || e.Error.Message != "Order with the documentId: "+doc+" cannot be found." {
				t.Errorf("%s: %d %q, want the one-order read's 404", doc, resp.Status, e.Error.Message)
			}
		}
		if functest.StoredOrder(t, s.Env, theirs[0].DocumentID).Cancelled() {
			t.Error("another caller's order was cancelled")
		}
	})
	t.Run("ErrNoToken", func(t *testing.T) {
		if resp := del(nil, mine[2].DocumentID); resp.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", resp.Status)
		}
		if resp := del(map[string]string{"authorization": "Bearer sdt_nope"}, mine[2].DocumentID); resp.Status != http.StatusUnauthorized {
			t.Errorf("status %d, want 401", resp.Status)
		}
		if functest.StoredOrder(t, s.Env, mine[2].DocumentID).Cancelled() {
			t.Error("cancelled without a token")
		}
	})
	t.Run("ErrOtherMethod", func(t *testing.T) {
		resp := s.Invoke(functest.Request("POST", "/api/live-orders/"+mine[2].DocumentID, "", functest.DevHeaders, ""))
		if resp.Status != http.StatusMethodNotAllowed || resp.Headers["Allow"] != "DELETE" {
			t.Errorf("%d (Allow %q), want 405 allowing DELETE", resp.Status, resp.Headers["Allow"])
		}
	})
	t.Run("EventFile", func(t *testing.T) {
		// events/cancel-order.json names an order no one has: 404.
		s.CheckEvents(t, map[string]int{"cancel-order": http.StatusNotFound})
	})
	s.CheckRoutes()
	s.CheckTemplate(s.Proxy.All())
}
