package main

import (
	"strings"
	"testing"

	"stampduty/shared/auth"
	"stampduty/shared/testkit/functest"
)

// TestTestAndLiveAreSeparate: a caller's test token and live token see two
// separate worlds (test-mode.md, "Test tokens"). The test token lists and
// counts only the orders of the caller's test principal, the live token
// only its live orders, though both tokens belong to the same caller.
func TestTestAndLiveAreSeparate(t *testing.T) {
	l := listing{functest.New(t, "ListOrdersFunction", wire)}
	live := "sdt_" + strings.Repeat("L", 43)
	test := auth.TestPrefix + strings.Repeat("T", 43)
	functest.AddToken(t, l.Env, live, "acme")
	functest.AddTestToken(t, l.Env, test, "acme")
	addOrders(t, l.Stack, "acme", 4)
	addOrders(t, l.Stack, auth.TestOwner("acme"), 2)

	docs := func(t *testing.T, secret string) (map[string]bool, int) {
		t.Helper()
		b := functest.OK[listBody](t, l.list(map[string]string{"authorization": "Bearer " + secret}, "pageSize=100"))
		seen := map[string]bool{}
		for _, o := range b.Data {
			seen[o["documentId"].(string)] = true
		}
		return seen, b.Pagination["total"]
	}
	liveDocs, liveTotal := docs(t, live)
	testDocs, testTotal := docs(t, test)
	t.Run("TheLiveTokenSeesOnlyLiveOrders", func(t *testing.T) {
		if got, want := len(liveDocs), 4; got != want || liveTotal != want {
			t.Errorf("live token: %d orders listed, total %d; want %d", got, liveTotal, want)
		}
	})
	t.Run("TheTestTokenSeesOnlyTestOrders", func(t *testing.T) {
		if got, want := len(testDocs), 2; got != want || testTotal != want {
			t.Errorf("test token: %d orders listed, total %d; want %d", got, testTotal, want)
		}
	})
	t.Run("NoOrderInBothWorlds", func(t *testing.T) {
		for doc := range testDocs {
			if liveDocs[doc] {
				t.Errorf("order %s listed with both the test and the live token", doc)
			}
		}
	})
}
