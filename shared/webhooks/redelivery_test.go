package webhooks_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"stampduty/shared/webhooks"
)

// TestRetries: a failed delivery is retried on the schedule with the same
// event id, later events of its order wait for it without holding up other
// webhooks, and it is given up after the last attempt.
func TestRetries(t *testing.T) {
	t.Run("FailureRetriedAtTheScheduledTimeWithTheSameID", func(t *testing.T) {
		h := newHarness(t)
		rc := newReceiver(t, 500)
		h.hook("acme", "h", rc.URL, true, created)
		e := h.change("acme", "ord1", created)
		first := h.clock.Now()
		h.pass()
		h.clock.advance(29 * time.Second)
		if rep := h.pass(); rep.Attempts != 0 {
			t.Errorf("29 s after the first attempt: %d attempts, want none before the 30 s retry", rep.Attempts)
		}
		h.clock.advance(time.Second)
		h.pass()
		assertIDs(t, "the receiver", rc, e, e)
		as := assertAttempts(t, h, "acme", "h", 500, 200)
		if len(as) == 2 {
			if as[0].NextAttemptAt == nil || *as[0].NextAttemptAt != "2026-11-21T04:09:30.000Z" {
				t.Errorf("the failed attempt's next_attempt_at = %v, want 30 s after %s", as[0].NextAttemptAt, first)
			}
			if as[1].NextAttemptAt != nil || as[1].Attempt != 2 {
				t.Errorf("the delivered attempt = %+v, want attempt 2 and no next", as[1])
			}
		}
		if j := h.job("acme", "h", e); j.Done != webhooks.JobDelivered {
			t.Errorf("job done = %q, want delivered", j.Done)
		}
	})
	t.Run("LaterEventOfAnOrderWaitsForTheEarlier", func(t *testing.T) {
		h := newHarness(t)
		rc := newReceiver(t, 503)
		h.hook("acme", "h", rc.URL, true, created, changed)
		e1 := h.change("acme", "ord1", created)
		e2 := h.change("acme", "ord1", changed)
		h.pass()
		assertIDs(t, "after the first pass", rc, e1)
		h.clock.advance(30 * time.Second)
		h.pass()
		assertIDs(t, "after the retry", rc, e1, e1, e2)
	})
	t.Run("WaitingJobsDoNotCrowdOutOtherWebhooks", func(t *testing.T) {
		// A batch of 3: one order's first event fails at a dead receiver and
		// three later events of that order wait behind it; another webhook's
		// event must still go on the next pass, not after the retry.
		h := newHarness(t)
		h.d.Batch = 3
		dead, up := newReceiver(t, 500, 500, 500, 500, 500, 500, 500), newReceiver(t)
		h.hook("acme", "dead", dead.URL, true, created, changed)
		h.hook("other", "up", up.URL, true, created)
		e1 := h.change("acme", "ord1", created)
		for range 3 {
			h.change("acme", "ord1", changed)
		}
		h.clock.advance(time.Millisecond)
		e5 := h.change("other", "ord2", created)
		for range 2 {
			h.clock.advance(time.Second)
			h.pass()
		}
		assertIDs(t, "the dead receiver", dead, e1)
		assertIDs(t, "the other webhook", up, e5)
		for _, j := range h.jobs.All() {
			if j.Webhook == "dead" && j.ID != e1 && j.Next != h.job("acme", "dead", e1).Next {
				t.Errorf("waiting job %s is due at %s, want with the job it waits for", j.ID, j.Next)
			}
		}
	})
	t.Run("GivenUpAfterTheSeventhAttempt", func(t *testing.T) {
		h := newHarness(t)
		rc := newScripted(t, func(int, http.ResponseWriter) int { return 500 })
		h.hook("acme", "h", rc.URL, true, created)
		e := h.change("acme", "ord1", created)
		for range 60 { // 60 passes an hour apart: 2.5 days
			h.pass()
			h.clock.advance(time.Hour)
		}
		if got := len(rc.ids()); got != webhooks.MaxAttempts {
			t.Errorf("the receiver got %d attempts, want %d", got, webhooks.MaxAttempts)
		}
		as := assertAttempts(t, h, "acme", "h", 500, 500, 500, 500, 500, 500, 500)
		for i, a := range as {
			if last := i == len(as)-1; (a.NextAttemptAt == nil) != last || a.EventID != e {
				t.Errorf("attempt %d = %+v, want event %s and next_attempt_at null only on the last", a.Attempt, a, e)
			}
		}
		if j := h.job("acme", "h", e); j.Done != webhooks.JobGaveUp || j.N != webhooks.MaxAttempts {
			t.Errorf("job = done %q after %d attempts, want gave_up after %d", j.Done, j.N, webhooks.MaxAttempts)
		}
	})
}

// TestReceiverFailures: a hanging receiver, a redirect and a receiver that
// is down are failed attempts, retried; a hang or an endless answer holds a
// pass no longer than the delivery timeout; 410 Gone disables the webhook.
func TestReceiverFailures(t *testing.T) {
	t.Run("HangRetried", func(t *testing.T) {
		h := newHarness(t)
		release := make(chan struct{})
		rc := newScripted(t, func(n int, _ http.ResponseWriter) int {
			if n == 0 {
				<-release
			}
			return 200
		})
		t.Cleanup(func() { close(release) })
		h.hook("acme", "h", rc.URL, true, created)
		e := h.change("acme", "ord1", created)
		h.quickPass("a hanging receiver")
		h.clock.advance(30 * time.Second)
		h.pass()
		assertIDs(t, "the receiver", rc, e, e)
		assertAttempts(t, h, "acme", "h", 0, 200)
	})
	t.Run("RedirectIsAFailure", func(t *testing.T) {
		h := newHarness(t)
		target := newReceiver(t)
		rc := newScripted(t, func(n int, w http.ResponseWriter) int {
			if n == 0 {
				w.Header().Set("Location", target.URL)
				return http.StatusFound
			}
			return 200
		})
		h.hook("acme", "h", rc.URL, true, created)
		e := h.change("acme", "ord1", created)
		h.pass()
		h.clock.advance(30 * time.Second)
		h.pass()
		assertIDs(t, "the receiver", rc, e, e)
		assertIDs(t, "the redirect's target", target)
		assertAttempts(t, h, "acme", "h", 302, 200)
	})
	t.Run("TenMegabyteAnswerCut", func(t *testing.T) {
		h := newHarness(t)
		rc := newScripted(t, func(_ int, w http.ResponseWriter) int {
			w.WriteHeader(200)
			chunk := make([]byte, 32<<10)
			for n := 0; n < 10<<20; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					break
				}
			}
			return 0
		})
		h.hook("acme", "h", rc.URL, true, created)
		e := h.change("acme", "ord1", created)
		h.quickPass("a 10 MB answer")
		if j := h.job("acme", "h", e); j.Done != webhooks.JobDelivered {
			t.Errorf("job done = %q, want delivered (a 200 in time)", j.Done)
		}
	})
	t.Run("ConnectionRefusedRetried", func(t *testing.T) {
		h := newHarness(t)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // the receiver is down
		h.hook("acme", "h", "http://"+addr+"/hooks", true, created)
		e := h.change("acme", "ord1", created)
		h.pass()
		rc := &receiver{script: func(int, http.ResponseWriter) int { return 200 }}
		if l, err = net.Listen("tcp", addr); err != nil {
			t.Skipf("cannot listen on %s again: %v", addr, err)
		}
		rc.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(rc.serve)}}
		rc.Start()
		t.Cleanup(rc.Close)
		h.clock.advance(30 * time.Second)
		h.pass()
		assertIDs(t, "the receiver, back up", rc, e)
		assertAttempts(t, h, "acme", "h", 0, 200)
	})
	t.Run("GoneDisablesTheWebhookAndStopsItsJobs", func(t *testing.T) {
		h := newHarness(t)
		rc := newReceiver(t, http.StatusGone)
		h.hook("acme", "h", rc.URL, true, created, changed)
		e1 := h.change("acme", "ord1", created)
		e2 := h.change("acme", "ord2", created)
		h.pass()
		h.change("acme", "ord1", changed)
		for range 3 {
			h.clock.advance(time.Hour)
			h.pass()
		}
		assertIDs(t, "the receiver", rc, e1)
		hs, _ := h.hooks.Webhooks(context.Background(), "acme")
		if hs.Live[0].Enabled {
			t.Error("the webhook is still enabled after a 410")
		}
		for _, e := range []string{e1, e2} {
			if j := h.job("acme", "h", e); j.Done != webhooks.JobDisabled {
				t.Errorf("job of %s done = %q, want disabled", e, j.Done)
			}
		}
		if as := assertAttempts(t, h, "acme", "h", 410); len(as) == 1 && as[0].NextAttemptAt != nil {
			t.Errorf("the 410's next_attempt_at = %s, want null", *as[0].NextAttemptAt)
		}
	})
}
