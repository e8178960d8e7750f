package main

import (
	"net/http"
	"strings"
	"testing"

	"stampduty/shared/auth"
	"stampduty/shared/testkit/functest"
)

// TestTestAndLiveAreSeparate: a caller's live token cannot read the
// caller's test orders and its test token cannot read its live orders
// (test-mode.md, "Test tokens"); each reads its own.
func TestTestAndLiveAreSeparate(t *testing.T) {
	s := functest.New(t, "GetOrderFunction", wire)
	live := "sdt_" + strings.Repeat("L", 43)
	test := auth.TestPrefix + strings.Repeat("T", 43)
	functest.AddToken(t, s.Env, live, "acme")
	functest.AddTestToken(t, s.Env, test, "acme")
	liveOrder := functest.AddOrders(t, s.Env, "acme", 1)[0]
	testOrder := functest.AddOrders(t, s.Env, auth.TestOwner("acme"), 1)[0]
	get := func(secret, doc string) int {
		return s.Invoke(functest.Request("GET", "/api/live-orders/"+doc, "", map[string]string{"authorization": "Bearer " + secret}, "")).Status
	}
	for _, tc := range []struct {
		name, secret, doc string
		want              int
	}{
		{"LiveTokenReadsALiveOrder", live, liveOrder.DocumentID, http.StatusOK},
		{"TestTokenReadsATestOrder", test, testOrder.DocumentID, http.StatusOK},
		{"LiveTokenCannotReadATestOrder", live, testOrder.DocumentID, http.StatusNotFound},
		{"TestTokenCannotReadALiveOrder", test, liveOrder.DocumentID, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := get(tc.secret, tc.doc); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
}
