package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/cmd/internal/schedule"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// Section 8 times latencyChanges changes, each made after a pause drawn
// uniformly from latencyGap, so that they fall anywhere in the
// dispatcher's 1 s poll.
const latencyChanges = 100

var latencyGap = [2]time.Duration{100 * time.Millisecond, 400 * time.Millisecond}

// arrivals records when a receiver first got the event of each order, by
// the order's documentId, and answers 204.
type arrivals struct {
	mu    sync.Mutex
	first map[string]time.Time
	bad   error
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	var ev webhooks.Event
	var o stampduty.Order
	err := json.NewDecoder(r.Body).Decode(&ev)
	if err == nil {
		err = json.Unmarshal(ev.Data.Order, &o)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, seen := a.first[o.DocumentID]; err == nil && o.DocumentID != "" && !seen {
		a.first[o.DocumentID] = at
	} else if (err != nil || o.DocumentID == "") && a.bad == nil {
		a.bad = fmt.Errorf("a delivery without its order: %v", err)
	}
	w.WriteHeader(http.StatusNoContent)
}

// last returns when the last order's first event arrived.
func (a *arrivals) last() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	var last time.Time
	for _, at := range a.first {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// count returns how many orders' events arrived.
func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.first)
}

// measureLatency is section 8: the dispatch function's host binary, run by
// the local schedule on its template rate as make local runs it, over fresh
// tables behind a recording proxy; orders are created with their event
// (orders.Creator on the database directly) for a caller with one webhook
// at a loopback receiver; each latency is from the start of the create's
// call to the receiver's first request of its event.
func (b *bench) measureLatency() error {
	say("webhook dispatch: latency of %d changes…\n", latencyChanges)
	names, proxy, err := b.freshProxied("latency-")
	if err != nil {
		return err
	}
	defer proxy.Close()
	table := func(id string) string { return names[id] }
	arr := &arrivals{first: map[string]time.Time{}}
	rc := httptest.NewServer(arr)
	defer rc.Close()
	direct := store.New(localdb.Client(b.endpoint))
	const owner = "bench-latency"
	if err := register(b.ctx, direct, table, owner, rc.URL+"/hook", stampduty.EventOrderCreated); err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	f, stop, err := b.scheduledDispatch(names, proxy)
	if err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	defer stop()
	c := creator(direct, table)
	proxy.Take()
	began, changed := time.Now(), map[string]time.Time{}
	for i := range latencyChanges {
		time.Sleep(latencyGap[0] + rand.N(latencyGap[1]-latencyGap[0]))
		t0 := time.Now()
		doc, err := c.Create(b.ctx, owner, b.body, nil)
		if err != nil {
			return fmt.Errorf("latency: change %d: %w", i+1, err)
		}
		if changed[doc] = t0; (i+1)%10 == 0 {
			say("\rlatency: %d/%d changes", i+1, latencyChanges)
		}
	}
	say("\n")
	for deadline := time.Now().Add(20 * time.Second); arr.count() < len(changed); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			return b.withLog(fmt.Errorf("latency: %d of %d events did not reach the receiver within 20 s of the last change", len(changed)-arr.count(), len(changed)), dispatchID)
		}
	}
	arr.mu.Lock()
	defer arr.mu.Unlock()
	if arr.bad != nil {
		return fmt.Errorf("latency: %w", arr.bad)
	}
	var last time.Time
	b.dispatch.Latency = nil
	for doc, t0 := range changed {
		at := arr.first[doc]
		if b.dispatch.Latency = append(b.dispatch.Latency, at.Sub(t0)); at.After(last) {
			last = at
		}
	}
	b.dispatch.PollsPerSecond = float64(outboxPolls(proxy.Take())) / last.Sub(began).Seconds()
	b.dispatch.LatencyNote = fmt.Sprintf("%s's host binary run by the local schedule (cmd/internal/schedule, %s, as make local runs it) through the local Runtime API, "+
		"against dynalite through a recording proxy; %d orders created with their order.created event (orders.Creator on the database directly), %v–%v apart (uniformly random); "+
		"one webhook at a loopback receiver; latency = start of the create's call → the receiver's first request of its event; %s in all",
		dispatchID, f.Schedules[0].Expression, latencyChanges, latencyGap[0], latencyGap[1], last.Sub(began).Round(100*time.Millisecond))
	return nil
}

// outboxPolls counts the relay passes among calls: a pass is one Scan of
// the outbox index (a page of its sweep).
func outboxPolls(calls []storetest.ProxyCall) int {
	return len(slices.DeleteFunc(calls, func(c storetest.ProxyCall) bool { return c.Index != store.OutboxIndex || c.Operation != "Scan" }))
}

// scheduledDispatch starts the dispatch function's host binary, run by the
// local schedule on its template rate as make local runs it, over the
// tables names behind proxy, and waits for its first run to poll. stop
// ends it.
func (b *bench) scheduledDispatch(names map[string]string, proxy *storetest.Proxy) (f samtemplate.Function, stop func(), err error) {
	f, ok := b.tmpl.Function(dispatchID)
	if !ok || len(f.Schedules) == 0 {
		return f, nil, fmt.Errorf("template.yaml has no scheduled %s", dispatchID)
	}
	every, err := schedule.Rate(f.Schedules[0].Expression)
	if err != nil {
		return f, nil, err
	}
	fn, err := localstack.Function(b.tmpl, f, b.bins[dispatchID], localstack.Engines{DynamoDB: proxy.URL, S3: b.s3Endpoint, Tables: names}, b.logs[dispatchID])
	if err != nil {
		return f, nil, err
	}
	pool := runtimeapi.NewPool(fn)
	ctx, cancel := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		schedule.Run(ctx, []schedule.Job{{Function: dispatchID, Rule: f.Schedules[0].Name, Every: every, Target: pool}}, localdb.Region, b.logs[dispatchID])
	})
	stop = func() { cancel(); wg.Wait(); pool.Close() }
	// The first run has started once it polls.
	for deadline := time.Now().Add(30 * time.Second); outboxPolls(proxy.All()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			stop()
			return f, nil, b.withLog(errors.New("the scheduled dispatch did not poll within 30 s"), dispatchID)
		}
	}
	return f, stop, nil
}

// latencyTable is section 8.
func (b *bench) latencyTable() (*table, error) {
	t := &table{
		Title:  "8. Webhook latency: stored change → first delivery attempt (local stack)",
		Header: []string{"what", "changes", "median ms", "p90 ms", "worst ms", "best ms"},
	}
	l := b.dispatch.Latency
	if len(l) == 0 {
		return nil, errors.New("section 8 has no latencies")
	}
	med, best, p90 := l.stats()
	t.add(scheduledLabels[dispatchID]+": order.created, 1 webhook", fmt.Sprint(len(l)), ms(med), ms(p90), ms(slices.Max(l)), ms(best))
	t.note("%s", b.dispatch.LatencyNote)
	t.note("the dispatcher relays and delivers once a pass, %.2f passes a second measured (each run polls every second), so a change waits up to a second for the next pass, then the pass's relay and delivery; on AWS the outbox is read from a global index, whose lag (typically well under a second) adds to it, and a cold start (section 1) to the first pass of a run", b.dispatch.PollsPerSecond)
	return t, nil
}
