package main

import (
	"net/http"
	"reflect"
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestTestAndLiveAreSeparate: a caller's test token cannot cancel the
// caller's live order, nor its live token the test order (test-mode.md,
// "Test tokens"): 404 with the one-order read's message, as for another
// caller's order, and the order stays as it was. Each token cancels its
// own.
func TestTestAndLiveAreSeparate(t *testing.T) {
	s := functest.New(t, "CancelOrderFunction", wire)
	live, test := functest.AddLiveAndTestTokens(t, s.Env, "acme")
	liveOrder, testOrder := functest.AddLiveAndTestOrder(t, s.Env, "acme")
	del := func(secret, doc string) functest.Response {
		return s.Invoke(functest.Request("DELETE", "/api/live-orders/"+doc, "", map[string]string{"authorization": "Bearer " + secret}, ""))
	}
	for _, tc := range []struct{ name, secret, doc string }{
		{"TestTokenCannotCancelALiveOrder", test, liveOrder},
		{"LiveTokenCannotCancelATestOrder", live, testOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := functest.StoredOrder(t, s.Env, tc.doc)
			r := del(tc.secret, tc.doc)
			if r.Status != http.StatusNotFound {
				t.Fatalf("status %d, want 404: %s", r.Status, r.Body)
			}
			if got, want := r.Error(t).Error.Message, "Order with the documentId: "+tc.doc+" cannot be found."; got != want {
				t.Errorf("message %q, want %q", got, want)
			}
			if after := functest.StoredOrder(t, s.Env, tc.doc); !reflect.DeepEqual(after, before) {
				t.Error("the order changed")
			}
		})
	}
	t.Run("EachTokenCancelsItsOwnOrder", func(t *testing.T) {
		for secret, doc := range map[string]string{live: liveOrder, test: testOrder} {
			if r := del(secret, doc); r.Status != http.StatusNoContent {
				t.Errorf("%s: status %d, want 204: %s", doc, r.Status, r.Body)
			}
			if !functest.StoredOrder(t, s.Env, doc).Cancelled() {
				t.Errorf("%s: not cancelled", doc)
			}
		}
	})
}
