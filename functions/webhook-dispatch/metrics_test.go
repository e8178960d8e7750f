package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/metrics"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// The tests of this file drive the failures the dispatcher's alarms watch
// on the local engines (dynalite through the stack's proxy, loopback
// receivers) and read the metrics it writes, as CloudWatch would: EMF
// lines parsed back by metrics.Read.

// reading is what one flush of a Set held: each metric's values summed
// by its dimensions' values (Attempts by Outcome), and the values of
// OldestDueAge as written.
type reading struct {
	sums map[metrics.Name]map[string]float64
	ages []float64
}

// sum returns the sum of name's values with dimension value dim ("" for
// a metric without dimensions).
func (r reading) sum(name metrics.Name, dim string) float64 { return r.sums[name][dim] }

// metered runs f with a Set in its context, flushes the Set and reads
// what it wrote.
func metered(t *testing.T, f func(ctx context.Context)) reading {
	t.Helper()
	s := metrics.NewSet(map[string]string{metrics.FunctionName: "WebhookDispatchFunction"})
	f(metrics.With(context.Background(), s))
	var out bytes.Buffer
	if err := s.Flush(&out, "StampDuty/test", time.Now()); err != nil {
		t.Fatal(err)
	}
	return read(t, out.String())
}

// read parses the EMF lines of out (other lines are skipped).
func read(t *testing.T, out string) reading {
	t.Helper()
	r := reading{sums: map[metrics.Name]map[string]float64{}}
	for line := range strings.Lines(out) {
		ps, ok, err := metrics.Read([]byte(line))
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if !ok {
			continue
		}
		for _, p := range ps {
			dim := p.Dimensions[metrics.Outcome]
			if r.sums[p.Name] == nil {
				r.sums[p.Name] = map[string]float64{}
			}
			for _, v := range p.Values {
				r.sums[p.Name][dim] += v
			}
			if p.Name == metrics.OldestDueAge {
				r.ages = append(r.ages, p.Values...)
			}
		}
	}
	return r
}

// TestAttemptsAreMeteredByOutcome: receivers that answer 204, 404 and
// 500, one that hangs past the timeout, one whose port is closed and one
// at an address the guard refuses (the Runtime API's) are attempted on
// the retry schedule, on the test's clock; each pass counts each attempt
// under its outcome (2xx, 4xx, 5xx, timeout, refused), the first pass the
// events it relayed, and the pass of the last attempt the five events
// given up. The alarms on EventsGivenUp and the dashboard's attempts by
// outcome watch these.
func TestAttemptsAreMeteredByOutcome(t *testing.T) {
	const timeout = 300 * time.Millisecond
	schedule := retrySchedule()
	w := newWorld(t)
	w.subscribers() // /all, /created, /other: 5 successful deliveries of the 4 events
	w.register(localdb.DevOwner, "/bad", stampduty.EventOrderCreated)
	w.rc.On("/bad", func(rw http.ResponseWriter, _ *http.Request, _ int) { rw.WriteHeader(http.StatusNotFound) })
	w.register(localdb.DevOwner, "/fail", stampduty.EventOrderCreated)
	w.rc.On("/fail", func(rw http.ResponseWriter, _ *http.Request, _ int) { rw.WriteHeader(http.StatusInternalServerError) })
	w.register(localdb.DevOwner, "/hang", stampduty.EventOrderCreated)
	w.rc.On("/hang", func(_ http.ResponseWriter, req *http.Request, _ int) {
		select {
		case <-req.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	closed := newReceiver(t)
	w.registerURL(localdb.DevOwner, closed.URL+"/closed", stampduty.EventOrderCreated)
	closed.Close()
	guarded := newReceiver(t)
	w.registerURL(localdb.DevOwner, guarded.URL+"/guarded", stampduty.EventOrderCreated)
	evs := w.changes()
	d := w.dispatcher(timeout)
	d.Deliverer.Guard.RuntimeAPI = guarded.Listener.Addr().String() // refused even locally

	total := map[string]float64{}
	for i, at := range schedule {
		got := metered(t, func(ctx context.Context) {
			if _, _, err := w.pass(ctx, d, at); err != nil {
				t.Fatalf("pass %d: %v", i+1, err)
			}
		})
		failing := map[string]float64{webhooks.Outcome4xx: 1, webhooks.Outcome5xx: 1, webhooks.OutcomeTimeout: 1, webhooks.OutcomeRefused: 2}
		for outcome, want := range failing {
			if got := got.sum(metrics.Attempts, outcome); got != want {
				t.Errorf("pass %d (attempt %d of the failing ones): Attempts{%s} = %v, want %v", i+1, i+1, outcome, got, want)
			}
		}
		for outcome, v := range got.sums[metrics.Attempts] {
			total[outcome] += v
		}
		wantGivenUp := 0.0
		if i == len(schedule)-1 {
			wantGivenUp = 5 // /bad, /fail, /hang, /closed, /guarded
		}
		if got := got.sum(metrics.EventsGivenUp, ""); got != wantGivenUp {
			t.Errorf("pass %d: EventsGivenUp = %v, want %v", i+1, got, wantGivenUp)
		}
		wantRelayed := 0.0
		if i == 0 {
			wantRelayed = float64(len(evs))
		}
		if got := got.sum(metrics.EventsRelayed, ""); got != wantRelayed {
			t.Errorf("pass %d: EventsRelayed = %v, want %v", i+1, got, wantRelayed)
		}
		if len(got.ages) != 1 || got.ages[0] != 0 {
			t.Errorf("pass %d, made when its jobs came due: OldestDueAge %v, want one 0", i+1, got.ages)
		}
	}
	want := map[string]float64{webhooks.Outcome2xx: 5, webhooks.Outcome4xx: 7, webhooks.Outcome5xx: 7,
		webhooks.OutcomeTimeout: 7, webhooks.OutcomeRefused: 14}
	if !maps.Equal(total, want) {
		t.Errorf("attempts by outcome over the schedule: %v, want %v", total, want)
	}
	w.expectAll(evs)
	if j := w.job(localdb.DevOwner, w.hookAt(t, "/fail"), w.received("/fail")[0].id); j.Done != webhooks.JobGaveUp {
		t.Errorf("/fail's job is %q after the schedule, want given up", j.Done)
	}
}

// hookAt returns the documentId of dev's webhook whose URL ends with path.
func (w *world) hookAt(t *testing.T, path string) string {
	t.Helper()
	hooks, err := w.reg.List(context.Background(), localdb.DevOwner)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		if strings.HasSuffix(h.URL, path) {
			return h.DocumentID
		}
	}
	t.Fatalf("no webhook at %s", path)
	return ""
}

// TestOldestDueAge: a delivery left due (its retry due 30 s after the
// first attempt, and no pass for 11 minutes more) shows as OldestDueAge
// 660 s in the next pass, over the alarm's 10 minutes; a pass with nothing
// due shows 0. The age comes from the due read each pass makes anyway: a
// pass with the metrics makes exactly the DynamoDB calls of one without.
func TestOldestDueAge(t *testing.T) {
	const alarm = 10 * time.Minute // the template's "oldest due delivery" threshold
	w := newWorld(t)
	w.subscribers()
	w.register(localdb.DevOwner, "/fail", stampduty.EventOrderCreated)
	var failing atomic.Bool
	failing.Store(true)
	w.rc.On("/fail", func(rw http.ResponseWriter, _ *http.Request, _ int) {
		if failing.Load() {
			rw.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	w.changes()
	d := w.dispatcher(0)
	first := metered(t, func(ctx context.Context) { w.pass(ctx, d, 0) })
	if first.ages == nil || first.ages[0] != 0 {
		t.Errorf("the first pass, its jobs just put: OldestDueAge %v, want 0", first.ages)
	}
	failing.Store(false)
	late := 30*time.Second + 11*time.Minute
	got := metered(t, func(ctx context.Context) { w.pass(ctx, d, late) })
	if len(got.ages) != 1 || got.ages[0] != (11*time.Minute).Seconds() {
		t.Fatalf("a pass 11 minutes after the retry was due: OldestDueAge %v, want 660", got.ages)
	}
	if got.ages[0] <= alarm.Seconds() {
		t.Errorf("OldestDueAge %v does not reach the alarm's %v", got.ages[0], alarm)
	}

	// Nothing is due now: the same idle pass with and without a Set.
	calls := func(ctx context.Context) map[string]int {
		w.s.Proxy.Take()
		w.pass(ctx, d, late+time.Minute)
		n := map[string]int{}
		for _, c := range w.s.Proxy.Take() {
			n[c.Operation+" "+c.Index]++
		}
		return n
	}
	plain := calls(context.Background())
	var withMetrics map[string]int
	idle := metered(t, func(ctx context.Context) { withMetrics = calls(ctx) })
	if !maps.Equal(plain, withMetrics) {
		t.Errorf("DynamoDB calls of an idle pass: %v without metrics, %v with", plain, withMetrics)
	}
	// An idle dispatcher writes no metric: no custom metric is billed
	// while the stack is idle, and the alarm reads missing data as fine.
	if len(idle.ages) != 0 {
		t.Errorf("an idle pass: OldestDueAge %v, want none written", idle.ages)
	}
	t.Logf("an idle pass's DynamoDB calls, metered or not: %v", plain)
}

// TestRunIsMetered: the function's own run, wrapped as function.Scheduled
// wraps it (MeasuredRun, as functest.NewScheduled does), carries its Set to
// the relay and delivery loops and to the turns they start: its EMF lines
// show the events relayed and the attempts of one run.
func TestRunIsMetered(t *testing.T) {
	w := newWorld(t)
	w.subscribers()
	w.register(localdb.DevOwner, "/fail", stampduty.EventOrderCreated)
	w.rc.On("/fail", func(rw http.ResponseWriter, _ *http.Request, _ int) { rw.WriteHeader(http.StatusBadGateway) })
	evs := w.changes()
	ctx, cancel := context.WithTimeout(context.Background(), Margin+2*time.Second)
	defer cancel()
	if err := w.run(ctx, json.RawMessage(`{}`)); err != nil {
		t.Fatalf("run: %v", err)
	}
	out := w.s.Metrics
	got := read(t, out.String())
	if g := got.sum(metrics.EventsRelayed, ""); g != float64(len(evs)) {
		t.Errorf("EventsRelayed = %v, want %d", g, len(evs))
	}
	want := map[string]float64{webhooks.Outcome2xx: 5, webhooks.Outcome5xx: 1}
	if !maps.Equal(got.sums[metrics.Attempts], want) {
		t.Errorf("Attempts by outcome = %v, want %v", got.sums[metrics.Attempts], want)
	}
	// Every delivery of the run is attempted within a pass of its relay,
	// and the failed one's retry comes after the run: a due read that
	// found one (a job put due now, before its turn) saw it due for less
	// than a pass or two. TestOldestDueAge shows an idle pass writes none.
	for _, age := range got.ages {
		if age > 5 {
			t.Errorf("OldestDueAge %v in a run whose deliveries were all attempted at once; want under 5 s", got.ages)
			break
		}
	}
	t.Logf("one run's EMF lines:\n%s", out.String())
}

// TestFailingRunIsAnError: a run whose tables are unreachable (the
// proxy refuses every connection), or whose every DynamoDB call is
// throttled past the SDK's retries, ends with an error once its whole run
// is over, so that Lambda counts it in AWS/Lambda Errors, which the
// dispatcher's alarm watches (the local runtime writes that metric too:
// cmd/internal/runtimeapi's TestLambdaMetrics). A run that only meets
// failing receivers is no error.
func TestFailingRunIsAnError(t *testing.T) {
	w := newWorld(t)
	w.subscribers()
	w.register(localdb.DevOwner, "/fail", stampduty.EventOrderCreated)
	w.rc.On("/fail", func(rw http.ResponseWriter, _ *http.Request, _ int) { rw.WriteHeader(http.StatusInternalServerError) })
	w.changes()
	runOnce := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), Margin+2*time.Second)
		defer cancel()
		return w.run(ctx, nil)
	}
	if err := runOnce(); err != nil {
		t.Fatalf("a run that met only a failing receiver: %v, want no error", err)
	}
	for _, tc := range []struct {
		name  string
		start func()
	}{
		{"TablesUnreachable", func() { w.s.Proxy.Refuse(true) }},
		{"Throttled", func() {
			w.s.Proxy.SetFault(func(storetest.ProxyCall) *storetest.Fault {
				return &storetest.Fault{Status: 400, Type: "ThrottlingException"}
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.start()
			defer func() { w.s.Proxy.Refuse(false); w.s.Proxy.SetFault(nil) }()
			err := runOnce()
			if err == nil {
				t.Fatal("the run ended with no error: Lambda would count no Errors, and the alarm never trips")
			}
			if !strings.Contains(err.Error(), "failures of the service's own") {
				t.Errorf("error %q does not say the run failed", err)
			}
			t.Logf("%v", fmt.Sprint(err))
		})
	}
}
