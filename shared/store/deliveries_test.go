package store_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// deliveriesFixture is a deliveries table and the job of order's event that
// TestDeliveries's steps put, lease, attempt, postpone and stop in turn.
type deliveriesFixture struct {
	ctx   context.Context
	env   *storetest.Env
	del   *store.Deliveries
	order stampduty.Order
	job   webhooks.Job
}

// later is a time after every job's next attempt.
const later = "2099-01-01T00:00:00.000Z"

// newDeliveriesFixture creates a test's tables and the job, not stored yet.
func newDeliveriesFixture(t *testing.T) *deliveriesFixture {
	env := storetest.New(t)
	db := env.DB()
	order := newOrder(t, db.IDs(env.Table("CountersTable"), 30), 1)
	order.StampDuty.UploadedDocument = &stampduty.File{ID: 9, DocumentID: "f000000000000000000000000", Name: "lease.pdf", Mime: stampduty.MimePDF,
		Size: 47, SHA256: "00", Key: "documents/x/f", CreatedAt: order.CreatedAt}
	status := stampduty.StatusPending
	job := webhooks.Job{Owner: "acme", Webhook: "w000000000000000000000000", Pending: stampduty.Pending{ID: "evt_e00000000000000000000000",
		Type: stampduty.EventOrderCreated, At: order.CreatedAt, Status: &status, Fulfillment: order.Fulfillments[0].DocumentID, Order: order},
		Seq: webhooks.Seq(order.DocumentID, 3, 0), Next: "2026-11-23T10:00:00.000Z"}
	return &deliveriesFixture{ctx: context.Background(), env: env, del: db.Deliveries(env.Table("DeliveriesTable")), order: order, job: job}
}

// jobIDs returns the ids of js.
func jobIDs(js []webhooks.Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}

// dueAt returns the ids of the jobs due at the time at.
func (f *deliveriesFixture) dueAt(t *testing.T, at string) []string {
	t.Helper()
	now, err := time.Parse(stampduty.TimeLayout, at)
	if err != nil {
		t.Fatal(err)
	}
	js, err := f.del.Due(f.ctx, webhooks.Poller{}, now, 100)
	if err != nil {
		t.Fatal(err)
	}
	return jobIDs(js)
}

// TestDeliveries: a job per event and webhook, due from its next attempt,
// leased by one dispatcher at a time, waiting for the earlier events of its
// order, moved by each attempt, and stopped with its webhook.
func TestDeliveries(t *testing.T) {
	f := newDeliveriesFixture(t)
	testkit.Steps(t, f.oneJobPerEventAndWebhook, f.dueFromItsNext, f.aDoneJobIsNotDue,
		f.waitingForAnEarlierEventOfTheOrder, f.oneLeaseAtATime, f.attemptedMovesTheJob, f.attemptsNewestFirst,
		f.postponeMovesADueJob, f.stopDisablesWhatIsNotDone)
}

func (f *deliveriesFixture) oneJobPerEventAndWebhook(t *testing.T) {
	for i, want := range []bool{true, false} {
		if ok, err := f.del.Put(f.ctx, f.job); ok != want || err != nil {
			t.Errorf("Put #%d = %v, %v, want %v", i+1, ok, err, want)
		}
	}
	got, ok, err := f.del.Job(f.ctx, "acme", f.job.Webhook, f.job.ID)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if !reflect.DeepEqual(got, f.job) {
		t.Errorf("Job = %+v\nwant %+v", got, f.job)
	}
}

func (f *deliveriesFixture) dueFromItsNext(t *testing.T) {
	if got := f.dueAt(t, "2026-11-23T09:59:59.999Z"); len(got) != 0 {
		t.Errorf("due a moment before its next: %v", got)
	}
	js, err := f.del.Due(f.ctx, webhooks.Poller{}, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), 100)
	if err != nil || len(js) != 1 || !reflect.DeepEqual(js[0], f.job) {
		t.Errorf("due at its next: %+v, %v; want the job as put", js, err)
	}
}

func (f *deliveriesFixture) aDoneJobIsNotDue(t *testing.T) {
	j := f.job
	j.ID, j.Seq, j.Done, j.N, j.First = "evt_e00000000000000000000001", webhooks.Seq(f.order.DocumentID, 4, 0), webhooks.JobGaveUp, 7, f.job.Next
	if ok, err := f.del.Put(f.ctx, j); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := f.dueAt(t, later); len(got) != 1 {
		t.Errorf("due = %v, want only the first job", got)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	if ok, err := f.del.Redeliver(f.ctx, "acme", j.Webhook, j.ID, now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	got, _, _ := f.del.Job(f.ctx, "acme", j.Webhook, j.ID)
	if got.Done != webhooks.JobDue || got.Next != "2026-11-23T12:00:00.000Z" || got.N != 7 || got.First != j.First {
		t.Errorf("redelivered job %+v: want due now, its attempts kept", got)
	}
	if got := f.dueAt(t, later); len(got) != 2 {
		t.Errorf("due = %v, want both jobs", got)
	}
	if w, err := f.del.Waiting(f.ctx, got); w != f.job.Next || err != nil {
		t.Errorf("Waiting of the redelivered later event = %q, %v; want behind the first, due at %s", w, err, f.job.Next)
	}
	if ok, err := f.del.Redeliver(f.ctx, "acme", "w000000000000000000000001", j.ID, now); ok || err != nil {
		t.Errorf("Redeliver of no job = %v, %v, want false", ok, err)
	}
	if _, ok, err := f.del.Job(f.ctx, "acme", "w000000000000000000000001", j.ID); ok || err != nil {
		t.Errorf("Job under another webhook = %v, %v", ok, err)
	}
}

func (f *deliveriesFixture) waitingForAnEarlierEventOfTheOrder(t *testing.T) {
	if w, err := f.del.Waiting(f.ctx, f.job); w != "" || err != nil {
		t.Errorf("Waiting of the order's first event = %v, %v", w, err)
	}
	other := f.job
	other.ID, other.Seq = "evt_e00000000000000000000002", webhooks.Seq("o999999999999999999999999", 1, 0)
	if ok, err := f.del.Put(f.ctx, other); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if w, err := f.del.Waiting(f.ctx, other); w != "" || err != nil {
		t.Errorf("Waiting of another order's event = %v, %v; want false", w, err)
	}
}

func (f *deliveriesFixture) oneLeaseAtATime(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	until := now.Add(15 * time.Second)
	for i, c := range []struct {
		j    webhooks.Job
		at   time.Time
		want bool
	}{{f.job, now, true}, {f.job, now.Add(time.Second), false}, {f.job, until, true}} {
		if ok, err := f.del.Lease(f.ctx, c.j, c.at, c.at.Add(15*time.Second)); ok != c.want || err != nil {
			t.Errorf("Lease #%d at %s = %v, %v; want %v", i+1, c.at, ok, err, c.want)
		}
	}
	// A run takes again the lease it holds (its relay put the job with it),
	// never one another run took after its own ran out.
	held := until.Add(15 * time.Second) // the third lease's
	for _, c := range []struct {
		name  string
		lease time.Time
		want  bool
	}{{"a lease the job no longer holds", until, false}, {"the lease the job holds", held, true}} {
		j := f.job
		j.Lease = stampduty.FormatTime(c.lease)
		if ok, err := f.del.Lease(f.ctx, j, until.Add(time.Second), until.Add(20*time.Second)); ok != c.want || err != nil {
			t.Errorf("Lease again with %s = %v, %v; want %v", c.name, ok, err, c.want)
		}
	}
	stale := f.job
	stale.N = 1
	if ok, err := f.del.Lease(f.ctx, stale, now.Add(time.Hour), now.Add(time.Hour)); ok || err != nil {
		t.Errorf("Lease of a job read with another attempt count = %v, %v; want false", ok, err)
	}
}

func (f *deliveriesFixture) attemptedMovesTheJob(t *testing.T) {
	j, next := f.job, "2026-11-23T10:00:30.000Z"
	j.N, j.First, j.Next = 1, f.job.Next, next
	a := webhooks.Attempt{EventID: j.ID, Type: j.Type, Attempt: 1, Status: 500, At: f.job.Next, DurationMS: 12, NextAttemptAt: &next}
	if err := f.del.Attempted(f.ctx, webhooks.AttemptDone{Job: j, Attempt: a}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := f.del.Job(f.ctx, "acme", j.Webhook, j.ID)
	if !reflect.DeepEqual(got, j) {
		t.Errorf("after a failed attempt: %+v\nwant %+v", got, j)
	}
	if got := f.dueAt(t, "2026-11-23T10:00:29.999Z"); slices.Contains(got, j.ID) {
		t.Errorf("due before its retry: %v", got)
	}
	if ok, err := f.del.Lease(f.ctx, j, time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC), time.Date(2026, 11, 23, 10, 0, 45, 0, time.UTC)); !ok || err != nil {
		t.Errorf("the lease was not released: %v, %v", ok, err)
	}
	j.N, j.Next, j.Done = 2, "", webhooks.JobDelivered
	a.Attempt, a.Status, a.At, a.NextAttemptAt = 2, 204, next, nil
	if err := f.del.Attempted(f.ctx, webhooks.AttemptDone{Job: j, Attempt: a}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := f.del.Job(f.ctx, "acme", j.Webhook, j.ID); !reflect.DeepEqual(got, j) {
		t.Errorf("after delivery: %+v\nwant %+v", got, j)
	}
	if got := f.dueAt(t, later); len(got) != 2 || got[0] == f.job.ID || got[1] == f.job.ID {
		t.Errorf("due = %v, want the delivered job gone", got)
	}
	redelivered, _, _ := f.del.Job(f.ctx, "acme", f.job.Webhook, "evt_e00000000000000000000001")
	if w, err := f.del.Waiting(f.ctx, redelivered); w != "" || err != nil {
		t.Errorf("Waiting once the earlier event is delivered = %v, %v", w, err)
	}
}

func (f *deliveriesFixture) attemptsNewestFirst(t *testing.T) {
	got, err := f.del.Attempts(f.ctx, "acme", f.job.Webhook, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Attempt != 2 || got[0].Status != 204 || got[0].NextAttemptAt != nil {
		t.Errorf("Attempts(1) = %+v, want attempt 2", got)
	}
	if got, _ := f.del.Attempts(f.ctx, "acme", f.job.Webhook, 100); len(got) != 2 || got[1].Attempt != 1 || got[1].DurationMS != 12 {
		t.Errorf("Attempts = %+v, want attempts 2 and 1", got)
	}
	if got, _ := f.del.Attempts(f.ctx, "acme", "w000000000000000000000001", 100); len(got) != 0 {
		t.Errorf("another webhook's attempts: %+v", got)
	}
}

func (f *deliveriesFixture) postponeMovesADueJob(t *testing.T) {
	j, _, _ := f.del.Job(f.ctx, "acme", f.job.Webhook, "evt_e00000000000000000000002")
	if ok, err := f.del.Postpone(f.ctx, j, "2026-11-24T10:00:00.000Z"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := f.dueAt(t, "2026-11-24T09:59:59.999Z"); slices.Contains(got, j.ID) {
		t.Errorf("due before the time it was postponed to: %v", got)
	}
	if got := f.dueAt(t, "2026-11-24T10:00:00.000Z"); !slices.Contains(got, j.ID) {
		t.Errorf("not due at the time it was postponed to: %v", got)
	}
	stale := j
	stale.N = 5
	if ok, err := f.del.Postpone(f.ctx, stale, later); ok || err != nil {
		t.Errorf("Postpone of a job read with another attempt count = %v, %v; want false", ok, err)
	}
}

func (f *deliveriesFixture) stopDisablesWhatIsNotDone(t *testing.T) {
	if err := f.del.Stop(f.ctx, "acme", f.job.Webhook); err != nil {
		t.Fatal(err)
	}
	if got := f.dueAt(t, later); len(got) != 0 {
		t.Errorf("due after Stop: %v", got)
	}
	for id, want := range map[string]string{f.job.ID: webhooks.JobDelivered, "evt_e00000000000000000000001": webhooks.JobDisabled,
		"evt_e00000000000000000000002": webhooks.JobDisabled} {
		if j, _, _ := f.del.Job(f.ctx, "acme", f.job.Webhook, id); j.Done != want || j.Next != "" {
			t.Errorf("%s: done %q next %q after Stop, want %q", id, j.Done, j.Next, want)
		}
	}
}
