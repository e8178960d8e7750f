package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

func TestWebhooksItem(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	hooks := env.DB().Webhooks(env.Table("WebhooksTable"))
	hook := webhooks.Webhook{ID: 7, DocumentID: "k3v9xq2m7p4r8t1w5y6z0abc", URL: "https://hooks.example.com/x",
		Events: []string{stampduty.EventOrderCreated}, Enabled: true, CreatedAt: "2026-11-23T10:00:00.000Z", Secret: webhooks.NewSecret(), Owner: "acme"}

	t.Run("NoneStored", func(t *testing.T) {
		s, err := hooks.Webhooks(ctx, "acme")
		if err != nil || s.V != 0 || s.Live != nil || s.Gone != nil {
			t.Errorf("Webhooks = %+v, %v, want the empty set at version 0", s, err)
		}
	})
	t.Run("SavedAsReadBack", func(t *testing.T) {
		gone := hook
		gone.DocumentID, gone.Secret = "a000000000000000000000000", "whsec_must_not_be_kept"
		if err := hooks.SaveWebhooks(ctx, "acme", webhooks.Set{Live: []webhooks.Webhook{hook}, Gone: []webhooks.Gone{{Webhook: gone, Deleted: "2026-11-23T11:00:00.000Z"}}}, 0); err != nil {
			t.Fatal(err)
		}
		s, err := hooks.Webhooks(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		gone.Secret = ""
		want := webhooks.Set{V: 1, Live: []webhooks.Webhook{hook}, Gone: []webhooks.Gone{{Webhook: gone, Deleted: "2026-11-23T11:00:00.000Z"}}}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("read back %+v, want %+v", s, want)
		}
	})
	t.Run("ErrLostRace", func(t *testing.T) {
		for _, v := range []int64{0, 2} { // none stored: the first save's; a version not stored
			if err := hooks.SaveWebhooks(ctx, "acme", webhooks.Set{}, v); !errors.Is(err, webhooks.ErrRaced) {
				t.Errorf("save at version %d: %v, want ErrRaced", v, err)
			}
		}
		if err := hooks.SaveWebhooks(ctx, "acme", webhooks.Set{}, 1); err != nil {
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
	order.StampDuty.UploadedDocument = &stampduty.File{ID: 9, DocumentID: "f000000000000000000000000", Name: "lease.pdf", Mime: stampduty.MimePDF,
		Size: 47, SHA256: "00", Key: "documents/x/f", CreatedAt: order.CreatedAt}
	status := stampduty.StatusPending
	job := webhooks.Job{Owner: "acme", Webhook: "w000000000000000000000000", Pending: stampduty.Pending{ID: "evt_e00000000000000000000000",
		Type: stampduty.EventOrderCreated, At: order.CreatedAt, Status: &status, Order: order},
		Seq: webhooks.Seq(order.DocumentID, 3, 0), Next: "2026-11-23T10:00:00.000Z"}
	ids := func(js []webhooks.Job) []string {
		var out []string
		for _, j := range js {
			out = append(out, j.ID)
		}
		return out
	}
	dueAt := func(t *testing.T, at string) []string {
		t.Helper()
		now, err := time.Parse(stampduty.TimeLayout, at)
		if err != nil {
			t.Fatal(err)
		}
		js, err := del.Due(ctx, now, 100)
		if err != nil {
			t.Fatal(err)
		}
		return ids(js)
	}
	later := "2099-01-01T00:00:00.000Z"

	t.Run("OneJobPerEventAndWebhook", func(t *testing.T) {
		for i, want := range []bool{true, false} {
			if ok, err := del.Put(ctx, job); ok != want || err != nil {
				t.Errorf("Put #%d = %v, %v, want %v", i+1, ok, err, want)
			}
		}
		got, ok, err := del.Job(ctx, "acme", job.Webhook, job.ID)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if !reflect.DeepEqual(got, job) {
			t.Errorf("Job = %+v\nwant %+v", got, job)
		}
	})
	t.Run("DueFromItsNext", func(t *testing.T) {
		if got := dueAt(t, "2026-11-23T09:59:59.999Z"); len(got) != 0 {
			t.Errorf("due a moment before its next: %v", got)
		}
		js, err := del.Due(ctx, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), 100)
		if err != nil || len(js) != 1 || !reflect.DeepEqual(js[0], job) {
			t.Errorf("due at its next: %+v, %v; want the job as put", js, err)
		}
	})
	t.Run("ADoneJobIsNotDue", func(t *testing.T) {
		j := job
		j.ID, j.Seq, j.Done, j.N, j.First = "evt_e00000000000000000000001", webhooks.Seq(order.DocumentID, 4, 0), webhooks.JobGaveUp, 7, job.Next
		if ok, err := del.Put(ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if got := dueAt(t, later); len(got) != 1 {
			t.Errorf("due = %v, want only the first job", got)
		}
		now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		if ok, err := del.Redeliver(ctx, "acme", j.Webhook, j.ID, now); !ok || err != nil {
			t.Fatal(ok, err)
		}
		got, _, _ := del.Job(ctx, "acme", j.Webhook, j.ID)
		if got.Done != webhooks.JobDue || got.Next != "2026-11-23T12:00:00.000Z" || got.N != 7 || got.First != j.First {
			t.Errorf("redelivered job %+v: want due now, its attempts kept", got)
		}
		if got := dueAt(t, later); len(got) != 2 {
			t.Errorf("due = %v, want both jobs", got)
		}
		if w, err := del.Waiting(ctx, got); w != job.Next || err != nil {
			t.Errorf("Waiting of the redelivered later event = %q, %v; want behind the first, due at %s", w, err, job.Next)
		}
		if ok, err := del.Redeliver(ctx, "acme", "w000000000000000000000001", j.ID, now); ok || err != nil {
			t.Errorf("Redeliver of no job = %v, %v, want false", ok, err)
		}
		if _, ok, err := del.Job(ctx, "acme", "w000000000000000000000001", j.ID); ok || err != nil {
			t.Errorf("Job under another webhook = %v, %v", ok, err)
		}
	})
	t.Run("WaitingForAnEarlierEventOfTheOrder", func(t *testing.T) {
		if w, err := del.Waiting(ctx, job); w != "" || err != nil {
			t.Errorf("Waiting of the order's first event = %v, %v", w, err)
		}
		other := job
		other.ID, other.Seq = "evt_e00000000000000000000002", webhooks.Seq("o999999999999999999999999", 1, 0)
		if ok, err := del.Put(ctx, other); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if w, err := del.Waiting(ctx, other); w != "" || err != nil {
			t.Errorf("Waiting of another order's event = %v, %v; want false", w, err)
		}
	})
	t.Run("OneLeaseAtATime", func(t *testing.T) {
		now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		until := now.Add(15 * time.Second)
		for i, c := range []struct {
			j    webhooks.Job
			at   time.Time
			want bool
		}{{job, now, true}, {job, now.Add(time.Second), false}, {job, until, true}} {
			if ok, err := del.Lease(ctx, c.j, c.at, c.at.Add(15*time.Second)); ok != c.want || err != nil {
				t.Errorf("Lease #%d at %s = %v, %v; want %v", i+1, c.at, ok, err, c.want)
			}
		}
		stale := job
		stale.N = 1
		if ok, err := del.Lease(ctx, stale, now.Add(time.Hour), now.Add(time.Hour)); ok || err != nil {
			t.Errorf("Lease of a job read with another attempt count = %v, %v; want false", ok, err)
		}
	})
	t.Run("AttemptedMovesTheJob", func(t *testing.T) {
		j, next := job, "2026-11-23T10:00:30.000Z"
		j.N, j.First, j.Next = 1, job.Next, next
		a := webhooks.Attempt{EventID: j.ID, Type: j.Type, Attempt: 1, Status: 500, At: job.Next, DurationMS: 12, NextAttemptAt: &next}
		if err := del.Attempted(ctx, j, a); err != nil {
			t.Fatal(err)
		}
		got, _, _ := del.Job(ctx, "acme", j.Webhook, j.ID)
		if !reflect.DeepEqual(got, j) {
			t.Errorf("after a failed attempt: %+v\nwant %+v", got, j)
		}
		if got := dueAt(t, "2026-11-23T10:00:29.999Z"); slices.Contains(got, j.ID) {
			t.Errorf("due before its retry: %v", got)
		}
		if ok, err := del.Lease(ctx, j, time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC), time.Date(2026, 11, 23, 10, 0, 45, 0, time.UTC)); !ok || err != nil {
			t.Errorf("the lease was not released: %v, %v", ok, err)
		}
		j.N, j.Next, j.Done = 2, "", webhooks.JobDelivered
		a.Attempt, a.Status, a.At, a.NextAttemptAt = 2, 204, next, nil
		if err := del.Attempted(ctx, j, a); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := del.Job(ctx, "acme", j.Webhook, j.ID); !reflect.DeepEqual(got, j) {
			t.Errorf("after delivery: %+v\nwant %+v", got, j)
		}
		if got := dueAt(t, later); len(got) != 2 || got[0] == job.ID || got[1] == job.ID {
			t.Errorf("due = %v, want the delivered job gone", got)
		}
		redelivered, _, _ := del.Job(ctx, "acme", job.Webhook, "evt_e00000000000000000000001")
		if w, err := del.Waiting(ctx, redelivered); w != "" || err != nil {
			t.Errorf("Waiting once the earlier event is delivered = %v, %v", w, err)
		}
	})
	t.Run("AttemptsNewestFirst", func(t *testing.T) {
		got, err := del.Attempts(ctx, "acme", job.Webhook, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Attempt != 2 || got[0].Status != 204 || got[0].NextAttemptAt != nil {
			t.Errorf("Attempts(1) = %+v, want attempt 2", got)
		}
		if got, _ := del.Attempts(ctx, "acme", job.Webhook, 100); len(got) != 2 || got[1].Attempt != 1 || got[1].DurationMS != 12 {
			t.Errorf("Attempts = %+v, want attempts 2 and 1", got)
		}
		if got, _ := del.Attempts(ctx, "acme", "w000000000000000000000001", 100); len(got) != 0 {
			t.Errorf("another webhook's attempts: %+v", got)
		}
	})
	t.Run("PostponeMovesADueJob", func(t *testing.T) {
		j, _, _ := del.Job(ctx, "acme", job.Webhook, "evt_e00000000000000000000002")
		if ok, err := del.Postpone(ctx, j, "2026-11-24T10:00:00.000Z"); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if got := dueAt(t, "2026-11-24T09:59:59.999Z"); slices.Contains(got, j.ID) {
			t.Errorf("due before the time it was postponed to: %v", got)
		}
		if got := dueAt(t, "2026-11-24T10:00:00.000Z"); !slices.Contains(got, j.ID) {
			t.Errorf("not due at the time it was postponed to: %v", got)
		}
		stale := j
		stale.N = 5
		if ok, err := del.Postpone(ctx, stale, later); ok || err != nil {
			t.Errorf("Postpone of a job read with another attempt count = %v, %v; want false", ok, err)
		}
	})
	t.Run("StopDisablesWhatIsNotDone", func(t *testing.T) {
		if err := del.Stop(ctx, "acme", job.Webhook); err != nil {
			t.Fatal(err)
		}
		if got := dueAt(t, later); len(got) != 0 {
			t.Errorf("due after Stop: %v", got)
		}
		for id, want := range map[string]string{job.ID: webhooks.JobDelivered, "evt_e00000000000000000000001": webhooks.JobDisabled,
			"evt_e00000000000000000000002": webhooks.JobDisabled} {
			if j, _, _ := del.Job(ctx, "acme", job.Webhook, id); j.Done != want || j.Next != "" {
				t.Errorf("%s: done %q next %q after Stop, want %q", id, j.Done, j.Next, want)
			}
		}
	})
}

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
	// onlyCalls runs read and fails t unless its DynamoDB calls were want.
	onlyCalls := func(t *testing.T, want string, read func() error) {
		t.Helper()
		proxy.Take()
		if err := read(); err != nil {
			t.Fatal(err)
		}
		if got := env.Operations(proxy.Take()); got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
	}

	// Jobs of two webhooks: n attempts, done or not.
	type seed struct {
		hook string
		n    int
		done string
	}
	seeds := []seed{{"w1", 0, webhooks.JobDue}, {"w1", 1, webhooks.JobDue}, {"w1", 3, webhooks.JobDue}, {"w2", 7, webhooks.JobGaveUp},
		{"w2", 2, webhooks.JobDelivered}, {"w2", 2, webhooks.JobDue}, {"w1", 5, webhooks.JobDisabled}}
	want := map[int][]string{} // by min attempts: the event ids
	for i, s := range seeds {
		j := webhooks.Job{Owner: "acme", Webhook: s.hook, Pending: stampduty.Pending{ID: fmt.Sprintf("evt_e%023d", i),
			Type: stampduty.EventOrderCreated, At: order.CreatedAt, Order: order}, Seq: webhooks.Seq(order.DocumentID, int64(i+1), 0),
			N: s.n, Done: s.done}
		if s.n > 0 {
			j.First = "2026-11-23T10:00:00.000Z"
		}
		if s.done == webhooks.JobDue {
			j.Next = "2026-11-23T10:00:30.000Z"
		}
		if ok, err := del.Put(ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		for min := 0; min <= 4; min++ {
			if s.done == webhooks.JobDue && s.n >= min {
				want[min] = append(want[min], j.ID)
			}
		}
	}

	t.Run("JobsNotDoneWithEnoughAttempts", func(t *testing.T) {
		for min := 0; min <= 4; min++ {
			var js []webhooks.Job
			onlyCalls(t, "Query:DeliveriesTable/index/due=1", func() (err error) { js, err = del.Failing(ctx, min); return err })
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
				Events: []string{stampduty.EventOrderCreated}, Enabled: enabled, CreatedAt: "2026-11-23T10:00:00.000Z", Secret: webhooks.NewSecret()}
		}
		var full []webhooks.Webhook // ten webhooks, the last disabled: the filter looks past the first
		for i := range webhooks.MaxPerCaller {
			full = append(full, hook(int64(100+i), i != webhooks.MaxPerCaller-1))
		}
		for owner, set := range map[string]webhooks.Set{
			"acme": {Live: full},
			"bolt": {Live: []webhooks.Webhook{hook(1, false), hook(2, true), hook(3, false)}},
			"carl": {Live: []webhooks.Webhook{hook(4, true)}, Gone: []webhooks.Gone{{Webhook: hook(5, false), Deleted: "2026-11-23T11:00:00.000Z"}}},
			"dora": {},
		} {
			if err := hooks.SaveWebhooks(ctx, owner, set, 0); err != nil {
				t.Fatal(err)
			}
		}
		var ws []webhooks.Webhook
		onlyCalls(t, "Scan:WebhooksTable=1", func() (err error) { ws, err = hooks.Disabled(ctx); return err })
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
