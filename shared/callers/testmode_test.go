package callers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/callers"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

// TestCallersCountLiveOrders: the admin's list of callers (the console's
// Callers page, stampctl callers list) counts a caller's live orders only,
// though the caller holds a test token and has test orders (test-mode.md:
// test orders never count in live figures), and lists the caller once.
func TestCallersCountLiveOrders(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	db := env.DB()
	hasher, err := auth.NewHasher(strings.Repeat("k", auth.MinKeyLength))
	if err != nil {
		t.Fatal(err)
	}
	admin := &callers.Admin{Tokens: db.Tokens(env.Table("TokensTable")), Orders: db.Orders(env.Table("OrdersTable")), Hasher: hasher, Now: time.Now}
	functest.Seed(t, env)
	if _, err := admin.Create(ctx, "asha@example.com", "acme"); err != nil {
		t.Fatal(err)
	}
	for _, test := range []bool{false, true} {
		if _, _, err := admin.Issue(ctx, "asha@example.com", "acme", test); err != nil {
			t.Fatal(err)
		}
	}
	functest.AddOrders(t, env, "acme", 2)
	functest.AddOrders(t, env, stampduty.TestOwnerOf("acme"), 3)

	list, err := admin.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found []callers.Summary
	for _, s := range list {
		if name, _ := stampduty.CallerOf(s.Owner); name == "acme" {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("acme listed %d times: %+v", len(found), found)
	}
	if got, want := found[0].Orders, 2; got != want {
		t.Errorf("acme's orders = %d, want its %d live orders (not its 3 test orders)", got, want)
	}
}
