package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"stampduty/shared/notify"
	"stampduty/shared/store/storetest"
	"stampduty/shared/webhooks"
)

// TestFailingReads: the reads behind stampctl webhooks failing — the jobs
// not done after enough attempts (a Query of the due index, never a Scan
// of the deliveries) and the disabled webhooks of every caller.
func TestFailingReads(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	db, proxy := env.ProxiedDB()
	del := db.Deliveries(env.Table("DeliveriesTable"))
	hooks := db.Webhooks(env.Table("WebhooksTable"))
	order := newOrder(t, db.IDs(env.Table("CountersTable"), 30), 1)

	// Jobs of two webhooks: n attempts, done or not.
	type seed struct {
		hook string
		n    int
		done string
	}
	seeds := []seed{{"w1", 0, notify.Due}, {"w1", 1, notify.Due}, {"w1", 3, notify.Due}, {"w2", 7, notify.GaveUp},
		{"w2", 2, notify.Delivered}, {"w2", 2, notify.Due}, {"w1", 5, notify.Disabled}}
	want := map[int][]string{} // by min attempts: the event ids
	for i, s := range seeds {
		j := notify.Job{Owner: "acme", Webhook: s.hook, Pending: webhooks.Pending{ID: fmt.Sprintf("evt_e%023d", i),
			Type: webhooks.EventOrderCreated, At: order.CreatedAt, Order: order}, Seq: notify.Seq(order.DocumentID, int64(i+1), 0),
			N: s.n, Done: s.done}
		if s.n > 0 {
			j.First = "2026-11-23T10:00:00.000Z"
		}
		if s.done == notify.Due {
			j.Next = "2026-11-23T10:00:30.000Z"
		}
		if ok, err := del.Put(ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		for min := 0; min <= 4; min++ {
			if s.done == notify.Due && s.n >= min {
				want[min] = append(want[min], j.ID)
			}
		}
	}

	t.Run("JobsNotDoneWithEnoughAttempts", func(t *testing.T) {
		for min := 0; min <= 4; min++ {
			proxy.Take()
			js, err := del.Failing(ctx, min)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := env.Operations(proxy.Take()), "Query:DeliveriesTable/index/due=1"; got != want {
				t.Errorf("calls = %s, want %s", got, want)
			}
			var got []string
			for _, j := range js {
				got = append(got, j.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, want[min]) {
				t.Errorf("Failing(%d) = %v, want %v", min, got, want[min])
			}
		}
	})
	t.Run("AJobAsPut", func(t *testing.T) {
		js, err := del.Failing(ctx, 3)
		if err != nil || len(js) != 1 {
			t.Fatal(js, err)
		}
		stored, _, err := del.Job(ctx, "acme", "w1", js[0].ID)
		if err != nil || !reflect.DeepEqual(js[0], stored) {
			t.Errorf("Failing's job %+v\nwant %+v (%v)", js[0], stored, err)
		}
	})

	t.Run("DisabledWebhooksOfEveryCaller", func(t *testing.T) {
		hook := func(id int64, enabled bool) webhooks.Webhook {
			return webhooks.Webhook{ID: id, DocumentID: fmt.Sprintf("w%024d", id), URL: fmt.Sprintf("https://h.example.com/%d", id),
				Events: []string{webhooks.EventOrderCreated}, Enabled: enabled, CreatedAt: "2026-11-23T10:00:00.000Z", Secret: webhooks.NewSecret()}
		}
		var full []webhooks.Webhook // ten webhooks, the last disabled: the filter looks past the first
		for i := range webhooks.MaxPerCaller {
			full = append(full, hook(int64(100+i), i != webhooks.MaxPerCaller-1))
		}
		for owner, set := range map[string]notify.Set{
			"acme": {Live: full},
			"bolt": {Live: []webhooks.Webhook{hook(1, false), hook(2, true), hook(3, false)}},
			"carl": {Live: []webhooks.Webhook{hook(4, true)}, Gone: []notify.Gone{{Webhook: hook(5, false), Deleted: "2026-11-23T11:00:00.000Z"}}},
			"dora": {},
		} {
			if err := hooks.SaveWebhooks(ctx, owner, set, 0); err != nil {
				t.Fatal(err)
			}
		}
		proxy.Take()
		ws, err := hooks.Disabled(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := env.Operations(proxy.Take()), "Scan:WebhooksTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		var got []string
		for _, w := range ws {
			got = append(got, fmt.Sprintf("%s/%d/%v", w.Owner, w.ID, w.Enabled))
			if w.Secret != "" || w.URL == "" {
				t.Errorf("disabled webhook %+v: want its URL and no secret", w)
			}
		}
		if want := []string{"acme/109/false", "bolt/1/false", "bolt/3/false"}; !slices.Equal(got, want) {
			t.Errorf("Disabled = %v, want %v (not the deleted one of carl)", got, want)
		}
	})
}
