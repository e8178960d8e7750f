package store_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/notify"
	"stampduty/shared/rules"
	"stampduty/shared/store"
	"stampduty/shared/store/storetest"
	"stampduty/shared/webhooks"
)

func TestWebhooksItem(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	hooks := env.DB().Webhooks(env.Table("WebhooksTable"))
	hook := webhooks.Webhook{ID: 7, DocumentID: "k3v9xq2m7p4r8t1w5y6z0abc", URL: "https://hooks.example.com/x",
		Events: []string{webhooks.EventOrderCreated}, Enabled: true, CreatedAt: "2026-11-23T10:00:00.000Z", Secret: webhooks.NewSecret(), Owner: "acme"}

	t.Run("NoneStored", func(t *testing.T) {
		s, err := hooks.Webhooks(ctx, "acme")
		if err != nil || s.V != 0 || s.Live != nil || s.Gone != nil {
			t.Errorf("Webhooks = %+v, %v, want the empty set at version 0", s, err)
		}
	})
	t.Run("SavedAsReadBack", func(t *testing.T) {
		gone := hook
		gone.DocumentID, gone.Secret = "a000000000000000000000000", "whsec_must_not_be_kept"
		if err := hooks.SaveWebhooks(ctx, "acme", notify.Set{Live: []webhooks.Webhook{hook}, Gone: []notify.Gone{{Webhook: gone, Deleted: "2026-11-23T11:00:00.000Z"}}}, 0); err != nil {
			t.Fatal(err)
		}
		s, err := hooks.Webhooks(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		gone.Secret = ""
		want := notify.Set{V: 1, Live: []webhooks.Webhook{hook}, Gone: []notify.Gone{{Webhook: gone, Deleted: "2026-11-23T11:00:00.000Z"}}}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("read back %+v, want %+v", s, want)
		}
	})
	t.Run("ErrLostRace", func(t *testing.T) {
		for _, v := range []int64{0, 2} { // none stored: the first save's; a version not stored
			if err := hooks.SaveWebhooks(ctx, "acme", notify.Set{}, v); !errors.Is(err, notify.ErrRaced) {
				t.Errorf("save at version %d: %v, want ErrRaced", v, err)
			}
		}
		if err := hooks.SaveWebhooks(ctx, "acme", notify.Set{}, 1); err != nil {
			t.Fatal(err)
		}
		if s, _ := hooks.Webhooks(ctx, "acme"); s.V != 2 || len(s.Live) != 0 {
			t.Errorf("after the save at version 1: %+v", s)
		}
	})
}

func TestDeliveries(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	db := env.DB()
	del := db.Deliveries(env.Table("DeliveriesTable"))
	order := newOrder(t, db.IDs(env.Table("CountersTable"), 30), 1)
	order.StampDuty.UploadedDocument = &rules.File{ID: 9, DocumentID: "f000000000000000000000000", Name: "lease.pdf", Mime: rules.MimePDF,
		Size: 47, SHA256: "00", Key: "documents/x/f", CreatedAt: order.CreatedAt}
	status := rules.StatusPending
	job := notify.Job{Owner: "acme", Webhook: "w000000000000000000000000", EventID: "evt_e00000000000000000000000", Type: webhooks.EventOrderCreated,
		At: order.CreatedAt, Status: &status, Order: order, OrderVersion: 3, Next: "2026-11-23T10:00:00.000Z"}

	due := func(t *testing.T, upTo string) []string {
		t.Helper()
		out, err := env.Client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(env.Table("DeliveriesTable")), IndexName: aws.String(store.DueIndex),
			KeyConditionExpression: aws.String("dp = :due AND dk <= :to"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":due": &types.AttributeValueMemberS{Value: "due"}, ":to": &types.AttributeValueMemberS{Value: upTo + "~"}}})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, it := range out.Items {
			keys = append(keys, it["dk"].(*types.AttributeValueMemberS).Value)
		}
		return keys
	}

	t.Run("OneJobPerEventAndWebhook", func(t *testing.T) {
		for i, want := range []bool{true, false} {
			if ok, err := del.PutJob(ctx, job); ok != want || err != nil {
				t.Errorf("PutJob #%d = %v, %v, want %v", i+1, ok, err, want)
			}
		}
		got, ok, err := del.Job(ctx, "acme", job.Webhook, job.EventID)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if !reflect.DeepEqual(got, job) {
			t.Errorf("Job = %+v\nwant %+v", got, job)
		}
		if keys := due(t, job.Next); len(keys) != 1 || keys[0] != job.Next+"#acme#"+job.Webhook+"#"+job.EventID {
			t.Errorf("due = %v", keys)
		}
	})
	t.Run("ADoneJobIsNotDue", func(t *testing.T) {
		j := job
		j.EventID, j.Done, j.Attempts, j.First = "evt_e00000000000000000000001", notify.JobGaveUp, 7, job.Next
		if ok, err := del.PutJob(ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if keys := due(t, "2099-01-01T00:00:00.000Z"); len(keys) != 1 {
			t.Errorf("due = %v, want only the first job", keys)
		}
		now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		if ok, err := del.Redeliver(ctx, "acme", j.Webhook, j.EventID, now); !ok || err != nil {
			t.Fatal(ok, err)
		}
		got, _, _ := del.Job(ctx, "acme", j.Webhook, j.EventID)
		if got.Done != "" || got.Next != "2026-11-23T12:00:00.000Z" || got.Attempts != 7 || got.First != j.First {
			t.Errorf("redelivered job %+v: want due now, its attempts kept", got)
		}
		if keys := due(t, "2099-01-01T00:00:00.000Z"); len(keys) != 2 {
			t.Errorf("due = %v, want both jobs", keys)
		}
		if ok, err := del.Redeliver(ctx, "acme", "w000000000000000000000001", j.EventID, now); ok || err != nil {
			t.Errorf("Redeliver of no job = %v, %v, want false", ok, err)
		}
		if _, ok, err := del.Job(ctx, "acme", "w000000000000000000000001", j.EventID); ok || err != nil {
			t.Errorf("Job under another webhook = %v, %v", ok, err)
		}
	})
	t.Run("AttemptsNewestFirst", func(t *testing.T) {
		next := "2026-11-23T10:00:30.000Z"
		for n := 1; n <= 3; n++ {
			a := webhooks.Attempt{EventID: job.EventID, Type: job.Type, Attempt: n, Status: 500 - 100*n,
				At: rules.FormatTime(time.Date(2026, 11, 23, 10, n, 0, 0, time.UTC)), DurationMS: int64(n), NextAttemptAt: &next}
			if err := del.PutAttempt(ctx, "acme", job.Webhook, a); err != nil {
				t.Fatal(err)
			}
		}
		got, err := del.Attempts(ctx, "acme", job.Webhook, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Attempt != 3 || got[1].Attempt != 2 || got[0].Status != 200 || *got[0].NextAttemptAt != next {
			t.Errorf("Attempts = %+v, want attempts 3 and 2", got)
		}
		if got, _ := del.Attempts(ctx, "acme", "w000000000000000000000001", 100); len(got) != 0 {
			t.Errorf("another webhook's attempts: %+v", got)
		}
	})
}
