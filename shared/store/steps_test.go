package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// TestStepJobs: a test order's step job (orders.Steps) is put once, sits in
// the due index from its due time, is re-armed after a step (leaving its
// lease) and, once done, leaves the index; it expires with its order; and
// the failing deliveries never list it.
func TestStepJobs(t *testing.T) {
	env := storetest.New(t)
	ctx := context.Background()
	del := env.DB().Deliveries(env.Table("DeliveriesTable"))
	owner, doc := stampduty.TestOwnerOf("acme"), "o000000000000000000000001"
	at := time.Date(2026, 11, 27, 10, 0, 5, 0, time.UTC)
	for range 2 { // the second is a create's retry: harmless
		if err := del.Schedule(ctx, owner, doc, at); err != nil {
			t.Fatal(err)
		}
	}
	due := func(t *testing.T, now time.Time) []webhooks.Job {
		t.Helper()
		js, err := del.Due(ctx, webhooks.Poller{}, now, 10)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	t.Run("DueFromItsTime", func(t *testing.T) {
		if js := due(t, at.Add(-time.Millisecond)); len(js) != 0 {
			t.Errorf("due before its time: %+v", js)
		}
		js := due(t, at)
		if len(js) != 1 || js[0].Owner != owner || js[0].Webhook != orders.StepsHook || js[0].ID != doc || js[0].Type != orders.StepType {
			t.Fatalf("due at its time: %+v", js)
		}
	})
	t.Run("ExpiresWithItsOrder", func(t *testing.T) {
		items := rawPartition(t, env, "DeliveriesTable", "pk", owner+"#"+orders.StepsHook)
		if len(items) != 1 {
			t.Fatalf("%d items", len(items))
		}
		n, ok := items[0]["expires"].(*types.AttributeValueMemberN)
		if want := at.Add(stampduty.TestDataLifetime).Unix(); !ok || n.Value != strconv.FormatInt(want, 10) {
			t.Errorf("expires %v, want %d", items[0]["expires"], want)
		}
	})
	t.Run("ReArmedWithoutItsLease", func(t *testing.T) {
		j := due(t, at)[0]
		if ok, err := del.Lease(ctx, j, at, at.Add(time.Minute)); err != nil || !ok {
			t.Fatalf("lease: %v %v", ok, err)
		}
		j.Next = stampduty.FormatTime(at.Add(5 * time.Second))
		if err := del.Stepped(ctx, j); err != nil {
			t.Fatal(err)
		}
		if js := due(t, at.Add(time.Second)); len(js) != 0 {
			t.Errorf("due before its next step: %+v", js)
		}
		js := due(t, at.Add(5*time.Second))
		if len(js) != 1 || js[0].Lease != "" {
			t.Fatalf("due at its next step: %+v", js)
		}
		if ok, err := del.Lease(ctx, js[0], at.Add(5*time.Second), at.Add(time.Minute)); err != nil || !ok {
			t.Errorf("the next step's lease: %v %v (the first lease must be gone)", ok, err)
		}
	})
	t.Run("NotAFailingDelivery", func(t *testing.T) {
		j := due(t, at.Add(5*time.Second))[0]
		j.N, j.Next = 3, stampduty.FormatTime(at.Add(10*time.Second))
		if err := del.Stepped(ctx, j); err != nil {
			t.Fatal(err)
		}
		failing, err := del.Failing(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(failing) != 0 {
			t.Errorf("failing deliveries: %+v", failing)
		}
	})
	t.Run("DoneLeavesTheIndex", func(t *testing.T) {
		j := due(t, at.Add(10*time.Second))[0]
		j.Next, j.Done = "", webhooks.JobDelivered
		if err := del.Stepped(ctx, j); err != nil {
			t.Fatal(err)
		}
		if js := due(t, at.Add(time.Hour)); len(js) != 0 {
			t.Errorf("due once done: %+v", js)
		}
		got, ok, err := del.Job(ctx, owner, orders.StepsHook, doc)
		if err != nil || !ok || got.Done != webhooks.JobDelivered {
			t.Errorf("the job once done: %+v %v %v", got, ok, err)
		}
	})
}
