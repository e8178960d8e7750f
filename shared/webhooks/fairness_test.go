package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/webhooks"
)

// hanging returns a script that holds every request past the harness's
// 200 ms delivery timeout.
func hanging(int, http.ResponseWriter) int {
	time.Sleep(400 * time.Millisecond)
	return http.StatusOK
}

// run runs the harness's dispatcher (Run, polling every `every`) until the
// test ends.
func (h *harness) run(every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.d.Run(ctx, every, 0) }()
	h.t.Cleanup(func() { cancel(); <-done })
}

// firstArrival waits up to limit for r's first request and returns how
// long after since it came; limit when none did.
func firstArrival(r *receiver, since time.Time, limit time.Duration) time.Duration {
	for time.Since(since) < limit {
		if len(r.ids()) > 0 {
			return time.Since(since)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return limit
}

// TestSlowCallerHoldsNoOneElseBack: caller A's ten webhooks to receivers
// that hang, with twelve orders, do not delay caller B's first attempt:
// the relay and B's turn go on beside A's hanging attempts.
func TestSlowCallerHoldsNoOneElseBack(t *testing.T) {
	h := newHarness(t)
	h.d.Now = nil // the real clock: Run polls
	var slow []*receiver
	for i := range 10 {
		r := newScripted(t, hanging)
		slow = append(slow, r)
		h.hook("a", fmt.Sprintf("a%d", i), r.URL, true, created)
	}
	fast := newReceiver(t)
	h.hook("b", "b0", fast.URL, true, created)
	h.run(20 * time.Millisecond)
	for i := range 12 {
		h.change("a", fmt.Sprintf("orda%d", i), created)
	}
	// B's change comes once A's attempts hang.
	for deadline := time.Now().Add(2 * time.Second); len(slow[0].ids()) == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	h.change("b", "ordb", created)
	if took := firstArrival(fast, t0, 3*time.Second); took > 300*time.Millisecond {
		t.Errorf("B's first attempt came %s after its change while A's receivers hang, want within 300 ms (a pass is 20 ms)", took)
	}
	// Each of A's webhooks got one attempt of its turn, then backs off.
	time.Sleep(500 * time.Millisecond)
	for i, r := range slow {
		if n := len(r.ids()); n != 1 {
			t.Errorf("A's webhook %d got %d attempts within 0.5 s of hanging, want 1 (then it backs off)", i, n)
		}
	}
}

// TestHangingWebhookBacksOff: a webhook whose receiver hangs gets one
// attempt of its turn, not one per due job, and its other due jobs are
// postponed by the back-off.
func TestHangingWebhookBacksOff(t *testing.T) {
	h := newHarness(t)
	r := newScripted(t, hanging)
	h.hook("acme", "h", r.URL, true, created)
	var ids []string
	for i := range 5 {
		ids = append(ids, h.change("acme", fmt.Sprintf("ord%d", i), created))
	}
	start := time.Now()
	h.pass()
	if took := time.Since(start); took > time.Second {
		t.Errorf("the pass took %s: five hanging attempts one after another", took)
	}
	if n := len(r.ids()); n != 1 {
		t.Errorf("the hanging receiver got %d attempts in a pass, want 1", n)
	}
	h.pass()                                    // the webhook rests: its due jobs move to the end of the rest
	rest := h.clock.Now().Add(30 * time.Second) // webhooks.DefaultBackoff
	for _, id := range ids {
		j := h.job("acme", "h", id)
		if j.N == 0 && j.Next < rest.Add(-time.Second).Format("2006-01-02T15:04:05.000Z") {
			t.Errorf("job %s is due at %s while its webhook rests until %s", id, j.Next, rest)
		}
	}
	if n := len(r.ids()); n != 1 {
		t.Errorf("the hanging receiver got %d attempts, want still 1 while it rests", n)
	}
}

// TestNoAttemptAfterDelete: once a DELETE has answered, its webhook gets no
// new attempt; only those already being made go on. With attempts to the
// webhook made two at a time, the one in the other lane when the DELETE
// answers may still reach the receiver after it (its check of the webhook
// came first: on a loaded machine its request can arrive late), never more:
// a dispatcher that went on with the webhook it had read would send the
// dozen orders left.
func TestNoAttemptAfterDelete(t *testing.T) {
	for _, tc := range []struct {
		name  string
		at    int // the request during which the webhook is deleted
		lanes int // attempts to the webhook at once
	}{{"DuringTheFirstAttempt", 0, 1}, {"WhileOrdersGoInParallel", 6, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.d.Deliverer.Timeout = 5 * time.Second
			h.d.PerWebhook = tc.lanes
			var deleted atomic.Int64 // unix nanoseconds
			var mu sync.Mutex
			var after int
			r := newScripted(t, func(n int, _ http.ResponseWriter) int {
				if d := deleted.Load(); d != 0 && time.Now().UnixNano() > d {
					mu.Lock()
					after++
					mu.Unlock()
				}
				if n == tc.at {
					time.Sleep(50 * time.Millisecond) // the DELETE comes while this one is being made
					h.hooks.Delete("acme", "h")
					deleted.Store(time.Now().UnixNano())
					time.Sleep(100 * time.Millisecond)
					return http.StatusOK
				}
				time.Sleep(30 * time.Millisecond)
				return http.StatusOK
			})
			h.hook("acme", "h", r.URL, true, created, changed)
			for i := range 20 {
				h.change("acme", fmt.Sprintf("ord%02d", i), created)
			}
			h.pass()
			h.pass()
			if inFlight := tc.lanes - 1; after > inFlight {
				t.Errorf("%d attempts reached the receiver after the DELETE answered (of %d in all); want at most the %d of the other lanes, already being made", after, len(r.ids()), inFlight)
			}
			if len(r.ids()) < tc.at+1 {
				t.Fatalf("the receiver got %d requests, want at least %d before the delete", len(r.ids()), tc.at+1)
			}
			for _, j := range h.jobs.All() {
				if j.Done == webhooks.JobDue {
					t.Errorf("job of %s still due after its webhook was deleted", j.ID)
				}
			}
		})
	}
}

// TestParallelDeliveryKeepsPerOrderOrder: one webhook's orders go at once
// (more than one attempt in flight), each order's events still in the
// order of its changes, also when one of them is retried.
func TestParallelDeliveryKeepsPerOrderOrder(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	inFlight, most := 0, 0
	var first3 string // ord3's first event, which fails once
	var rc *receiver
	rc = newScripted(t, func(n int, _ http.ResponseWriter) int {
		if rc.requests()[n].event.ID == first3 && n == slices.Index(rc.ids(), first3) {
			return http.StatusInternalServerError
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return http.StatusOK
	})
	h.hook("acme", "h", rc.URL, true, created, changed)
	want := map[string][]string{}
	for i := range 4 {
		for k := range 8 {
			doc, typ := fmt.Sprintf("ord%d", k), changed
			if i == 0 {
				typ = created
			}
			id := h.change("acme", doc, typ)
			if doc == "ord3" && i == 0 {
				first3 = id
				want[doc] = append(want[doc], id) // failed, then retried
			}
			want[doc] = append(want[doc], id)
		}
	}
	h.pass()
	h.pass()
	h.clock.advance(30 * time.Second)
	for range 3 {
		h.pass()
	}
	got := map[string][]string{}
	for _, g := range rc.requests() {
		got[g.order] = append(got[g.order], g.event.ID)
	}
	for doc, w := range want {
		if !equal(got[doc], w) {
			t.Errorf("%s's events arrived as %v, want %v", doc, got[doc], w)
		}
	}
	if most < 2 {
		t.Errorf("at most %d attempt in flight to the webhook, want its orders at once", most)
	}
}

// laggingJobs is a Jobs whose due index shows nothing yet (a global
// index's lag on AWS).
type laggingJobs struct{ *Jobs }

func (laggingJobs) Due(context.Context, webhooks.Poller, time.Time, int) ([]webhooks.Job, error) {
	return nil, nil
}

// TestFirstAttemptDoesNotWaitForTheDueIndex: in Run, the jobs the relay
// puts go straight to their webhook's turn, so the first attempt does not
// wait for the due index (here one that never shows them).
func TestFirstAttemptDoesNotWaitForTheDueIndex(t *testing.T) {
	h := newHarness(t)
	h.d.Now = nil // the real clock: Run polls
	h.d.Jobs = laggingJobs{h.jobs}
	rc := newReceiver(t)
	h.hook("acme", "h", rc.URL, true, created)
	h.run(20 * time.Millisecond)
	t0 := time.Now()
	e := h.change("acme", "ord1", created)
	if took := firstArrival(rc, t0, 2*time.Second); took > 300*time.Millisecond {
		t.Fatalf("the first attempt came %s after the change, want within 300 ms without the due index", took)
	}
	assertIDs(t, "the receiver", rc, e)
	for deadline := time.Now().Add(time.Second); h.job("acme", "h", e).Done != webhooks.JobDelivered; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the job is %q a second after its delivery, want delivered", h.job("acme", "h", e).Done)
		}
	}
}
