package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
)

// TestModeComesFromTheOwnerKey: an order's livemode and the caller's name
// operators see are read from the key the order is stored under, never
// from an attribute: an item written before test mode (all live) reads
// live, the same item under a test principal's key reads as a test order of
// the same caller, and a write stores no mode (the item is the same bytes
// whatever Livemode the order in memory says).
func TestModeComesFromTheOwnerKey(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	ords := env.DB().Orders(env.Table("OrdersTable"))
	for _, tc := range []struct {
		name, owner string
		livemode    bool
	}{{"LiveKey", "acme", true}, {"TestKey", stampduty.TestOwnerOf("acme"), false}} {
		t.Run(tc.name, func(t *testing.T) {
			putItem(t, env, "OrdersTable", storedOrder(tc.owner))
			s, err := ords.Reread(ctx, orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: tc.owner}, Seq: 1})
			if err != nil {
				t.Fatal(err)
			}
			if s.Livemode != tc.livemode || s.Caller != "acme" || s.Owner != tc.owner {
				t.Errorf("read livemode %v, caller %q, owner key %q; want %v, acme, %q", s.Livemode, s.Caller, s.Owner, tc.livemode, tc.owner)
			}
		})
	}
	t.Run("NotStored", func(t *testing.T) {
		o := storedOrderValue
		for i, live := range []bool{true, false} {
			o.Livemode = live
			if _, err := ords.Create(ctx, "written", o); err != nil {
				t.Fatal(err)
			}
			item := getItem(t, env, "OrdersTable", map[string]types.AttributeValue{"owner": avS("written"), "seq": avN(fmt.Sprint(i + 1))})
			want := getItem(t, env, "OrdersTable", map[string]types.AttributeValue{"owner": avS("written"), "seq": avN("1")})
			want["seq"] = avN(fmt.Sprint(i + 1))
			checkSameItem(t, item, want)
			for name := range item {
				if strings.Contains(strings.ToLower(name), "live") || name == "mode" {
					t.Errorf("the order item stores %s", name)
				}
			}
		}
	})
}
