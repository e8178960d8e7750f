package store_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// TestCancelledOrderItem: a cancelled order is stored with its cancel
// under ca and cx ({by, r?}) and without queue keys (it left the work
// queue's index), and reads back, and in its pending event, as it was
// written; an order not cancelled has neither attribute and reads with
// both null.
func TestCancelledOrderItem(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 10)
	ords := db.Orders(env.Table("OrdersTable"))
	item := func(t *testing.T, o stampduty.Order) map[string]types.AttributeValue {
		t.Helper()
		s, err := ords.ByDocument(ctx, o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		out, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table("OrdersTable")),
			Key: map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: s.Owner},
				"seq": &types.AttributeValueMemberN{Value: "1"}}, ConsistentRead: aws.Bool(true)})
		if err != nil || out.Item == nil {
			t.Fatalf("GetItem = %v, %v", out, err)
		}
		return out.Item
	}
	reason := "Duplicate"
	for _, tt := range []struct {
		name, owner string
		who         string
		reason      *string
	}{
		{"ByCaller", "caller", stampduty.ByCaller, nil},
		{"ByOperator", "operator", stampduty.ByOperator, &reason},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOrder(t, ids, 1)
			if _, err := ords.Create(ctx, tt.owner, o); err != nil {
				t.Fatal(err)
			}
			it := item(t, o)
			for _, k := range []string{"ca", "cx"} {
				if _, ok := it[k]; ok {
					t.Errorf("an order not cancelled has %s", k)
				}
			}
			if _, ok := it["qs"]; !ok {
				t.Fatal("a new order is not queued: the test cannot show it leaves the queue")
			}
			s, err := ords.ByDocument(ctx, o.DocumentID)
			if err != nil {
				t.Fatal(err)
			}
			if s.CancelledAt != nil || s.Cancellation != nil {
				t.Errorf("read back with cancelledAt %v, cancellation %+v: want both nil", s.CancelledAt, s.Cancellation)
			}
			next, changed, err := s.Order.Cancel(tt.who, tt.reason, "2026-11-21T05:00:00.000Z")
			if err != nil || !changed {
				t.Fatal(changed, err)
			}
			ev, err := stampduty.NewPending(stampduty.EventOrderCancelled, next.UpdatedAt, next, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			proxy.Take()
			if err := ords.Replace(ctx, s, next, ev); err != nil {
				t.Fatal(err)
			}
			if got, want := env.Operations(proxy.Take()), "PutItem:OrdersTable=1"; got != want {
				t.Errorf("calls = %s, want %s", got, want)
			}
			it = item(t, o)
			for _, k := range []string{"qs", "qk"} {
				if _, ok := it[k]; ok {
					t.Errorf("the cancelled order's item has %s: it stays in the queue's index", k)
				}
			}
			if ca, ok := it["ca"].(*types.AttributeValueMemberS); !ok || ca.Value != "2026-11-21T05:00:00.000Z" {
				t.Errorf("ca = %#v", it["ca"])
			}
			cx, ok := it["cx"].(*types.AttributeValueMemberM)
			if !ok {
				t.Fatalf("cx = %#v", it["cx"])
			}
			keys := []string{}
			for k := range cx.Value {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if want := map[bool][]string{false: {"by"}, true: {"by", "r"}}[tt.reason != nil]; !slices.Equal(keys, want) {
				t.Errorf("cx has %v, want %v", keys, want)
			}
			now, err := ords.Reread(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(now.Order, next) {
				t.Errorf("read back\n%+v\nwant\n%+v", now.Order, next)
			}
			if len(now.Outbox) != 1 || !reflect.DeepEqual(now.Outbox[0].Order, next) {
				t.Errorf("the event's order %+v, want the cancelled order", now.Outbox)
			}
			// A later change keeps the event with its own copy of the order (o).
			later := next
			later.UpdatedAt = "2026-11-21T06:00:00.000Z"
			if err := ords.Replace(ctx, now, later); err != nil {
				t.Fatal(err)
			}
			if again, err := ords.Reread(ctx, s); err != nil || !reflect.DeepEqual(again.Outbox[0].Order, next) {
				t.Errorf("the event's own copy %+v, %v: want the cancelled order", again.Outbox, err)
			}
		})
	}
}
