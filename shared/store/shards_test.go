package store_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/webhooks"
)

// TestShardedKeysSpread: the outbox and due index keys spread 2,000
// events of 20 callers (a webhook each) so that no value takes more than
// 1/8 of them (the bar, counted here on the keys themselves; the
// bench measures the units at the wire).
func TestShardedKeysSpread(t *testing.T) {
	outbox, due := map[string]int{}, map[string]int{}
	const n = 2000
	for i := range n {
		doc, err := stampduty.NewDocumentID()
		if err != nil {
			t.Fatal(err)
		}
		id, err := stampduty.NewEventID()
		if err != nil {
			t.Fatal(err)
		}
		outbox[store.OutboxShard(doc)]++
		due[store.JobDueShard(fmt.Sprintf("caller-%d#w%024d", i%20, i%20), id)]++
	}
	for name, counts := range map[string]map[string]int{"outbox": outbox, "due": due} {
		if got := len(counts); got != store.Shards {
			t.Errorf("%s: %d key values used, want %d", name, got, store.Shards)
		}
		for k, c := range counts {
			if c > n/8 {
				t.Errorf("%s: %s holds %d of %d entries, more than 1/8", name, k, c, n)
			}
		}
	}
}

// setS sets attribute name of the item at key of table to value, as a
// store before the sharding wrote it.
func setS(t *testing.T, ctx context.Context, client *dynamodb.Client, table string, key map[string]types.AttributeValue, name, value string) {
	t.Helper()
	if _, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
		UpdateExpression: aws.String("SET #a = :v"), ExpressionAttributeNames: map[string]string{"#a": name},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: value}}}); err != nil {
		t.Fatal(err)
	}
}

// TestItemsStoredBeforeTheSharding: an order whose outbox entry and a job
// whose due entry carry the unsharded keys ("pending", "due") are still
// relayed and delivered, and their next write moves them to their shard.
func TestItemsStoredBeforeTheSharding(t *testing.T) {
	f := newOutboxFixture(t)
	t.Run("OutboxUnderPendingIsRelayed", func(t *testing.T) {
		s, created := f.create(t, "legacy", 40)
		s, moved := f.advance(t, s, "REF-L")
		key := map[string]types.AttributeValue{"owner": avS(s.Owner), "seq": avN(strconv.FormatInt(s.Seq, 10))}
		setS(t, f.ctx, f.env.Client, f.env.Table("OrdersTable"), key, "obp", "pending")
		if docs := pendingDocs(t, f.ords); !slices.Contains(docs, s.DocumentID) {
			t.Fatalf("Pending = %v, without the order stored under the unsharded key", docs)
		}
		if err := f.ords.Relayed(f.ctx, s, []string{created.ID}); err != nil {
			t.Fatal(err)
		}
		if got, want := render(f.item(t, s)["obp"]), `{S:"`+store.OutboxShard(s.DocumentID)+`"}`; got != want {
			t.Errorf("obp after relaying one of two events = %s, want its shard %s", got, want)
		}
		now, err := f.ords.Reread(f.ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.ords.Relayed(f.ctx, now, []string{moved.ID}); err != nil {
			t.Fatal(err)
		}
		checkNoOutbox(t, f.item(t, s))
	})
	t.Run("JobUnderDueIsDeliveredAndMoves", func(t *testing.T) {
		d := newDeliveriesFixture(t)
		env := d.env
		if ok, err := d.del.Put(d.ctx, d.job); !ok || err != nil {
			t.Fatal(ok, err)
		}
		key := map[string]types.AttributeValue{"pk": avS(d.job.Owner + "#" + d.job.Webhook), "sk": avS("job#" + d.job.ID)}
		setS(t, d.ctx, env.Client, env.Table("DeliveriesTable"), key, "dp", "due")
		if got := d.dueAt(t, d.job.Next); !slices.Equal(got, []string{d.job.ID}) {
			t.Fatalf("due = %v, want the job stored under the unsharded key", got)
		}
		now, _ := time.Parse(stampduty.TimeLayout, d.job.Next)
		if ok, err := d.del.Lease(d.ctx, d.job, now, now.Add(15*time.Second)); !ok || err != nil {
			t.Fatal(ok, err)
		}
		// A failed attempt: due again in 30 s, under its shard.
		j := d.job
		j.N, j.First, j.Next = 1, d.job.Next, stampduty.FormatTime(now.Add(30*time.Second))
		if err := d.del.Attempted(d.ctx, webhooks.AttemptDone{Job: j, Attempt: webhooks.Attempt{EventID: j.ID, Type: j.Type, Attempt: 1, At: d.job.Next, NextAttemptAt: &j.Next}}); err != nil {
			t.Fatal(err)
		}
		it := getItem(t, env, "DeliveriesTable", key)
		if got, want := render(it["dp"]), `{S:"`+store.JobDueShard(d.job.Owner+"#"+d.job.Webhook, d.job.ID)+`"}`; got != want {
			t.Errorf("dp after an attempt = %s, want its shard %s", got, want)
		}
		if got := d.dueAt(t, j.Next); !slices.Equal(got, []string{d.job.ID}) {
			t.Errorf("due at its retry = %v, want the job", got)
		}
	})
}

// TestShardedReadsInOrder: Pending and Due read every shard and return
// their entries oldest (soonest) first across the shards.
func TestShardedReadsInOrder(t *testing.T) {
	f := newOutboxFixture(t)
	base := time.Date(2026, 11, 21, 4, 0, 0, 0, time.UTC)
	var want []string
	shards := map[string]bool{}
	for i := range 24 {
		o := newOrder(t, f.ids, 100+i)
		at := stampduty.FormatTime(base.Add(time.Duration(23-i) * time.Second)) // newest created first
		o.CreatedAt, o.UpdatedAt = at, at
		if _, err := f.ords.Create(f.ctx, "sharded", o, pending(t, stampduty.EventOrderCreated, o, nil, nil)); err != nil {
			t.Fatal(err)
		}
		want = append(want, o.DocumentID)
		shards[store.OutboxShard(o.DocumentID)] = true
	}
	slices.Reverse(want)
	if len(shards) < 4 {
		t.Fatalf("24 orders in %d shards: the test needs several", len(shards))
	}
	if got := pendingDocs(t, f.ords); !slices.Equal(got, want) {
		t.Errorf("Pending = %v,\nwant %v (oldest first across %d shards)", got, want, len(shards))
	}

	d := newDeliveriesFixture(t)
	var wantJobs []string
	for i := range 24 {
		j := d.job
		j.ID = fmt.Sprintf("evt_s%023d", i)
		j.Next = stampduty.FormatTime(base.Add(time.Duration(23-i) * time.Second))
		if ok, err := d.del.Put(d.ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		wantJobs = append(wantJobs, j.ID)
	}
	slices.Reverse(wantJobs)
	if got := d.dueAt(t, stampduty.FormatTime(base.Add(time.Minute))); !slices.Equal(got, wantJobs) {
		t.Errorf("Due = %v,\nwant %v (soonest first across the shards)", got, wantJobs)
	}
}
