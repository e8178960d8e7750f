package main

import (
	"context"
	"strings"
	"testing"

	"stampduty/shared/auth"
	"stampduty/shared/testkit/functest"
)

// TestTestAndLiveAreSeparate: an order created with a caller's test token
// belongs to the caller's test principal: it is not counted or listed with
// the caller's live owner, and an idempotency key used by the test token
// does not replay for the live token (test-mode.md, "Test tokens").
func TestTestAndLiveAreSeparate(t *testing.T) {
	c := creating{functest.New(t, "CreateOrderFunction", wire)}
	ctx := context.Background()
	live := "sdt_" + strings.Repeat("L", 43)
	test := auth.TestPrefix + strings.Repeat("T", 43)
	functest.AddToken(t, c.Env, live, "acme")
	functest.AddTestToken(t, c.Env, test, "acme")
	orders := c.Env.DB().Orders(c.Env.Table("OrdersTable"))
	count := func(t *testing.T, owner string) int {
		t.Helper()
		n, err := orders.Count(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	b := body(nil)
	testID := orderID(t, c.keyed("key-both", b, test))
	t.Run("CountedOnlyForTheTestPrincipal", func(t *testing.T) {
		if got, want := count(t, auth.TestOwner("acme")), 1; got != want {
			t.Errorf("test principal: %d orders, want %d", got, want)
		}
		if got, want := count(t, "acme"), 0; got != want {
			t.Errorf("live owner: %d orders, want %d", got, want)
		}
	})
	t.Run("NotListedForTheLiveOwner", func(t *testing.T) {
		page, _, err := orders.Page(ctx, "acme", 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 0 {
			t.Errorf("the live owner lists %d orders, want none", len(page))
		}
	})
	t.Run("IdempotencyKeysAreSeparate", func(t *testing.T) {
		liveID := orderID(t, c.keyed("key-both", b, live))
		if liveID == testID {
			t.Errorf("the live token replayed the test token's order %s", testID)
		}
		if got, want := count(t, "acme"), 1; got != want {
			t.Errorf("live owner: %d orders, want %d", got, want)
		}
		if again := orderID(t, c.keyed("key-both", b, test)); again != testID {
			t.Errorf("the test token's key replayed %s, want %s", again, testID)
		}
	})
}
