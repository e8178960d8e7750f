package main

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"stampduty/shared/auth"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// TestTestAndLiveAreSeparate: a caller's test token cannot cancel the
// caller's live order, nor its live token the test order (test-mode.md,
// "Test tokens"): 404 with the one-order read's message, as for another
// caller's order, and the order stays as it was. Each token cancels its
// own.
func TestTestAndLiveAreSeparate(t *testing.T) {
	ctx := context.Background()
	s := functest.New(t, "CancelOrderFunction", wire)
	live := "sdt_" + strings.Repeat("L", 43)
	test := auth.TestPrefix + strings.Repeat("T", 43)
	functest.AddToken(t, s.Env, live, "acme")
	functest.AddTestToken(t, s.Env, test, "acme")
	liveOrder := functest.AddOrders(t, s.Env, "acme", 1)[0].DocumentID
	testOrder := functest.AddOrders(t, s.Env, stampduty.TestOwnerOf("acme"), 1)[0].DocumentID
	table := s.Env.DB().Orders(s.Env.Table("OrdersTable"))
	read := func(t *testing.T, doc string) orders.Stored {
		t.Helper()
		o, err := table.ByDocument(ctx, doc)
		if err == nil {
			o, err = table.Reread(ctx, o)
		}
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	del := func(secret, doc string) functest.Response {
		return s.Invoke(functest.Request("DELETE", "/api/live-orders/"+doc, "", map[string]string{"authorization": "Bearer " + secret}, ""))
	}
	for _, tc := range []struct{ name, secret, doc string }{
		{"TestTokenCannotCancelALiveOrder", test, liveOrder},
		{"LiveTokenCannotCancelATestOrder", live, testOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := read(t, tc.doc)
			r := del(tc.secret, tc.doc)
			if r.Status != http.StatusNotFound {
				t.Fatalf("status %d, want 404: %s", r.Status, r.Body)
			}
			if got, want := r.Error(t).Error.Message, "Order with the documentId: "+tc.doc+" cannot be found."; got != want {
				t.Errorf("message %q, want %q", got, want)
			}
			if after := read(t, tc.doc); !reflect.DeepEqual(after, before) {
				t.Error("the order changed")
			}
		})
	}
	t.Run("EachTokenCancelsItsOwnOrder", func(t *testing.T) {
		for secret, doc := range map[string]string{live: liveOrder, test: testOrder} {
			if r := del(secret, doc); r.Status != http.StatusNoContent {
				t.Errorf("%s: status %d, want 204: %s", doc, r.Status, r.Body)
			}
			if !read(t, doc).Cancelled() {
				t.Errorf("%s: not cancelled", doc)
			}
		}
	})
}
