package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/webhooks"
)

// gatedJobs is Jobs whose writes of attempts wait until open is closed.
type gatedJobs struct {
	*Jobs
	open chan struct{}
}

func (g gatedJobs) Attempted(ctx context.Context, done ...webhooks.AttemptDone) error {
	<-g.open
	return g.Jobs.Attempted(ctx, done...)
}

// concurrent returns a receiver script that answers after d and the most
// requests it held at once.
func concurrent(d time.Duration) (script func(int, http.ResponseWriter) int, most func() int64) {
	var now, top atomic.Int64
	return func(int, http.ResponseWriter) int {
			n := now.Add(1)
			for {
				t := top.Load()
				if n <= t || top.CompareAndSwap(t, n) {
					break
				}
			}
			time.Sleep(d)
			now.Add(-1)
			return http.StatusOK
		}, func() int64 {
			return top.Load()
		}
}

// waitFor waits up to limit for r to have got n requests and returns how
// many it got.
func waitFor(r *receiver, n int, limit time.Duration) int {
	for deadline := time.Now().Add(limit); len(r.ids()) < n && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return len(r.ids())
}

// TestDeliveriesGoOnWhileRecordsAreWritten: a webhook's attempts do not
// wait for the writes of the records before them (issue 33: one webhook's
// backlog drained at half the create rate, each of its lanes idle while
// its record was written), and the receiver still never has more than
// PerWebhook attempts at once.
func TestDeliveriesGoOnWhileRecordsAreWritten(t *testing.T) {
	h := newHarness(t)
	script, most := concurrent(20 * time.Millisecond)
	r := newScripted(t, script)
	h.hook("acme", "h", r.URL, true, created)
	const perWebhook, orders = 2, 12
	gate := gatedJobs{Jobs: h.jobs, open: make(chan struct{})}
	h.d.Jobs, h.d.PerWebhook = gate, perWebhook
	for i := range orders {
		h.change("acme", fmt.Sprintf("ord%02d", i), created)
	}
	if _, err := h.d.Relay(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan webhooks.DeliverReport, 1)
	go func() {
		rep, err := h.d.Deliver(context.Background())
		if err != nil {
			t.Errorf("Deliver: %v", err)
		}
		done <- rep
	}()
	// No record can be written yet: the lanes that wait for theirs must
	// not hold the others back.
	if got, want := waitFor(r, perWebhook+1, 2*time.Second), perWebhook; got <= want {
		t.Errorf("the receiver got %d attempts while the records were being written, want more than PerWebhook (%d)", got, want)
	}
	close(gate.open)
	rep := <-done
	if got := waitFor(r, orders, 2*time.Second); got != orders {
		t.Errorf("the receiver got %d events, want %d (report %+v)", got, orders, rep)
	}
	if got, want := most(), int64(perWebhook); got > want {
		t.Errorf("the receiver held %d attempts at once, want at most PerWebhook (%d)", got, want)
	}
	if got, want := len(h.jobs.Log("acme", "h")), orders; got != want {
		t.Errorf("%d attempts recorded, want %d", got, want)
	}
}

// TestRunClaimsAgainTheJobsItsRelayHeld: a job the run's relay put leased
// to the run, which its webhook's turn did not reach within the lease's
// margin (a long backlog), is attempted by the same run at once, claimed
// again as its own, not left until the lease runs out (10 s + 5 s here).
func TestRunClaimsAgainTheJobsItsRelayHeld(t *testing.T) {
	h := newHarness(t)
	first := make(chan struct{})
	var once sync.Once
	r := newScripted(t, func(n int, _ http.ResponseWriter) int {
		if n == 0 {
			<-first // the clock moves on while the first attempt is under way
		}
		return http.StatusOK
	})
	t.Cleanup(func() { once.Do(func() { close(first) }) })
	h.hook("acme", "h", r.URL, true, created)
	h.d.Deliverer.Timeout, h.d.PerWebhook = 10*time.Second, 1
	const orders = 8
	for i := range orders {
		h.change("acme", fmt.Sprintf("ord%02d", i), created)
	}
	h.run(20 * time.Millisecond)
	if got := waitFor(r, 1, 2*time.Second); got != 1 {
		t.Fatalf("the receiver got %d attempts, want the first", got)
	}
	if got, want := len(h.jobs.All()), orders; got != want {
		t.Fatalf("%d jobs stored, want %d", got, want)
	}
	h.clock.advance(6 * time.Second) // past the margin, within the relay's lease
	once.Do(func() { close(first) })
	if got := waitFor(r, orders, 3*time.Second); got != orders {
		t.Errorf("the receiver got %d of %d events: the run left the jobs its relay had leased to it", got, orders)
	}
}

// TestBacklogHoldsNoOneElseBack: while caller A's one webhook drains a
// backlog with all its lanes, caller B's change reaches B's receiver as
// soon as when nothing is queued: A's record writes, bounded per caller,
// leave B's attempt its slots.
func TestBacklogHoldsNoOneElseBack(t *testing.T) {
	h := newHarness(t)
	h.d.Now = nil // the real clock: Run polls
	script, _ := concurrent(50 * time.Millisecond)
	a := newScripted(t, script)
	h.hook("a", "a0", a.URL, true, created)
	b := newReceiver(t)
	h.hook("b", "b0", b.URL, true, created)
	const backlog = 600
	for i := range backlog {
		h.change("a", fmt.Sprintf("orda%03d", i), created)
	}
	h.run(20 * time.Millisecond)
	if got := waitFor(a, 50, 3*time.Second); got < 50 {
		t.Fatalf("A's receiver got %d events within 3 s", got)
	}
	t0 := time.Now()
	h.change("b", "ordb", created)
	if took := firstArrival(b, t0, 3*time.Second); took > 300*time.Millisecond {
		t.Errorf("B's first attempt came %s after its change while A's backlog drains, want within 300 ms (a pass is 20 ms)", took)
	}
	if got := len(a.ids()); got >= backlog {
		t.Errorf("A's backlog was drained (%d events) before B's change was measured: the test measured nothing", got)
	}
}
