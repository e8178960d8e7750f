package webhooks_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/webhooks"
)

func TestSeq(t *testing.T) {
	cases := map[string]struct{ a, b string }{
		"LaterVersionAfter":         {webhooks.Seq("ord", 9, 0), webhooks.Seq("ord", 10, 0)},
		"LaterEventOfOneWriteAfter": {webhooks.Seq("ord", 10, 1), webhooks.Seq("ord", 10, 2)},
		"LaterVersionAfterAnyIndex": {webhooks.Seq("ord", 10, 999), webhooks.Seq("ord", 11, 0)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.a >= tc.b {
				t.Errorf("%q sorts at or after %q", tc.a, tc.b)
			}
			if got := webhooks.OrderOf(tc.a); got != "ord" {
				t.Errorf("OrderOf(%q) = %q, want ord", tc.a, got)
			}
		})
	}
}

// TestRelayAndDeliver: each change reaches every enabled webhook of its
// owner subscribed to its type, once, signed, in order per order; a
// deleted webhook gets nothing.
func TestRelayAndDeliver(t *testing.T) {
	t.Run("OncePerSubscribedWebhookWithTheSameIDAndASignature", func(t *testing.T) {
		h := newHarness(t)
		both, onlyChanged, off, other := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
		h.hook("acme", "both", both.URL, true, created, changed)
		h.hook("acme", "changed", onlyChanged.URL, true, changed)
		h.hook("acme", "off", off.URL, false, created, changed)
		h.hook("globex", "other", other.URL, true, created, changed)
		e1 := h.change("acme", "ord1", created)
		e2 := h.change("acme", "ord1", changed)
		for range 3 {
			h.pass()
		}
		assertIDs(t, "a webhook of both types", both, e1, e2)
		assertIDs(t, "a webhook of status changes", onlyChanged, e2)
		assertIDs(t, "a disabled webhook", off)
		assertIDs(t, "another caller's webhook", other)
		for _, g := range both.requests() {
			if g.header != g.event.ID || g.order != "ord1" {
				t.Errorf("delivery of %s: header id %q, order %q", g.event.ID, g.header, g.order)
			}
		}
		if n := h.out.Left(); n != 0 {
			t.Errorf("%d events left in the outbox", n)
		}
	})
	t.Run("SignatureVerifiesUnderTheWebhooksSecret", func(t *testing.T) {
		h := newHarness(t)
		var verr atomic.Value
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b := make([]byte, 1<<16)
			n, _ := r.Body.Read(b)
			for n < len(b) {
				k, err := r.Body.Read(b[n:])
				n += k
				if err != nil {
					break
				}
			}
			verr.Store(errString(webhooks.Verify(r.Header.Get(webhooks.HeaderSignature), "whsec_h-secret-secret-secret-secret", b[:n], time.Now(), 0)))
		}))
		t.Cleanup(rc.Close)
		h.hook("acme", "h", rc.URL, true, created)
		h.change("acme", "ord1", created)
		h.pass()
		if got, _ := verr.Load().(string); got != "ok" {
			t.Errorf("the receiver's verification: %s", got)
		}
	})
	t.Run("InOrderPerOrderWhenAllSucceed", func(t *testing.T) {
		h := newHarness(t)
		rc := newReceiver(t)
		h.hook("acme", "h", rc.URL, true, created, changed)
		var want []string
		for i := range 4 {
			for _, doc := range []string{"ordA", "ordB"} {
				typ := changed
				if i == 0 {
					typ = created
				}
				want = append(want, h.change("acme", doc, typ))
			}
			if i%2 == 1 {
				h.pass() // some changes relayed in one pass, some in the next
			}
		}
		h.pass()
		perOrder := map[string][]string{}
		for _, g := range rc.requests() {
			perOrder[g.order] = append(perOrder[g.order], g.event.ID)
		}
		for k, doc := range []string{"ordA", "ordB"} {
			var w []string
			for i := k; i < len(want); i += 2 {
				w = append(w, want[i])
			}
			if got := perOrder[doc]; !equal(got, w) {
				t.Errorf("%s's events arrived as %v, want %v", doc, got, w)
			}
		}
	})
	t.Run("DeletedWebhookGetsNothing", func(t *testing.T) {
		h := newHarness(t)
		rc := newReceiver(t)
		h.hook("acme", "h", rc.URL, true, created)
		e := h.change("acme", "ord1", created)
		if _, err := h.d.Relay(context.Background()); err != nil {
			t.Fatal(err)
		}
		h.hooks.Delete("acme", "h")
		h.pass()
		assertIDs(t, "the deleted webhook's receiver", rc)
		if j := h.job("acme", "h", e); j.Done != webhooks.JobDisabled {
			t.Errorf("job done = %q, want disabled", j.Done)
		}
	})
}

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

func TestRelayFaults(t *testing.T) {
	t.Run("DiedBetweenPuttingAndMarking", func(t *testing.T) {
		h := newHarness(t)
		rc := newReceiver(t)
		h.hook("acme", "h", rc.URL, true, created)
		h.hook("acme", "h2", rc.URL, true, created)
		e := h.change("acme", "ord1", created)
		h.out.Deaths = 1
		rep, err := h.d.Relay(context.Background())
		if err != nil || rep.Jobs != 2 || rep.Left != 1 || h.out.Left() != 1 {
			t.Fatalf("the dying pass: %+v, %v, %d left; want 2 jobs put and the outbox left", rep, err, h.out.Left())
		}
		rep, err = h.d.Relay(context.Background())
		if err != nil || rep.Jobs != 0 || rep.Relayed != 1 || h.out.Left() != 0 {
			t.Errorf("the next pass: %+v, %v, %d left; want no job put twice and the outbox emptied", rep, err, h.out.Left())
		}
		h.pass()
		assertIDs(t, "the receiver of both webhooks", rc, e, e)
		if n := len(h.jobs.All()); n != 2 {
			t.Errorf("%d jobs, want 2", n)
		}
	})
	t.Run("VersionConflictOnMarkRetried", func(t *testing.T) {
		h := newHarness(t)
		rc := newReceiver(t)
		h.hook("acme", "h", rc.URL, true, created)
		e := h.change("acme", "ord1", created)
		h.out.Conflicts = 2
		for range 3 {
			h.pass()
		}
		if n := h.out.Left(); n != 0 {
			t.Errorf("%d events left after the conflicts", n)
		}
		assertIDs(t, "the receiver", rc, e)
	})
}

func TestOverlappingRuns(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	inFlight, most := map[string]int{}, 0
	rc := newScripted(t, func(int, http.ResponseWriter) int { return 200 })
	slow := rc.Config.Handler
	rc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Path + " " + r.Header.Get(webhooks.HeaderEventID) // one event per webhook
		mu.Lock()
		inFlight[id]++
		most = max(most, inFlight[id])
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		slow.ServeHTTP(w, r)
		mu.Lock()
		inFlight[id]--
		mu.Unlock()
	})
	h.hook("acme", "h1", rc.URL+"/h1", true, created)
	h.hook("acme", "h2", rc.URL+"/h2", true, created)
	var want int
	for i := range 12 {
		h.change("acme", string(rune('a'+i%4))+"ord", created)
		want += 2
	}
	if _, err := h.d.Relay(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		d := h.dispatcher()
		wg.Go(func() {
			for range 3 {
				if _, err := d.Deliver(context.Background()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("an event was attempted %d times at once, want one at a time", most)
	}
	seen := map[string]int{}
	for _, id := range rc.ids() {
		seen[id]++
	}
	if got := len(rc.ids()); got != want {
		t.Errorf("the receiver got %d deliveries, want %d (12 events × 2 webhooks, once each)", got, want)
	}
	for id, n := range seen {
		if n != 2 {
			t.Errorf("event %s delivered %d times, want once per webhook", id, n)
		}
	}
}

func TestRun(t *testing.T) {
	h := newHarness(t)
	h.d.Now = nil // the real clock: Run polls
	rc := newReceiver(t)
	h.hook("acme", "h", rc.URL, true, created)
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.d.Run(ctx, 20*time.Millisecond, 300*time.Millisecond) }()
	time.Sleep(100 * time.Millisecond)
	e := h.change("acme", "ord1", created)
	time.Sleep(100 * time.Millisecond)
	assertIDs(t, "the receiver, 100 ms after the change", rc, e)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil when it stops before the deadline", err)
		}
		if ctx.Err() != nil {
			t.Error("Run ran past `until` before the deadline")
		}
	case <-time.After(time.Second):
		t.Fatal("Run did not stop")
	}
}
