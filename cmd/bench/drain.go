package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/webhooks"
)

// Section 15: one webhook's backlog, as a caller sees it from outside,
// against the API's create rate. Section 11 drains a backlog the bench
// stored in-process; here everything goes through the functions: a caller
// orders drainOrders papers through the create-order function,
// drainConcurrency at a time, and its one webhook's receiver counts what
// arrives, on the scheduled dispatch function's host binary. Three arms,
// each over the same tables with its own caller and receiver:
//   - backlog: the orders are made while no dispatcher runs, then it is
//     started: the drain of a standing backlog;
//   - backlog, slow receiver: the same with a receiver that takes
//     slowReceiver to answer (the common receiver does some work);
//   - backlog, receiver at its bound: a receiver that takes
//     boundReceiver, so that even the dispatch's PerWebhook attempts at
//     once take longer than a turn's budget to drain it (the case a slower
//     machine than this one meets at any receiver);
//   - live: the dispatcher runs while the orders are made, as on AWS: the
//     relay hands each new job straight to the webhook's turn.
const (
	drainOrders      = 1000
	drainConcurrency = 32
	slowReceiver     = 50 * time.Millisecond
	boundReceiver    = 200 * time.Millisecond
)

// drainArm is one arm's figures.
type drainArm struct {
	label       string
	delay       time.Duration  // the receiver's
	live        bool           // the dispatcher ran while the orders were made
	createsTook time.Duration  // the one caller's drainOrders creates
	drainTook   time.Duration  // backlog: the dispatcher's first pass → the last arrival; live: the first create → the last arrival
	lag         time.Duration  // the last create's answer → the last arrival
	calls       map[string]int // backlog: the dispatcher's DynamoDB calls through the drain, by operation
}

// measureDrain is section 15.
func (b *bench) measureDrain() error {
	if b.dispatch.KeepUp.Creates == 0 { // section 11 did not run: the same 32 callers' creates
		if err := b.measureCreates(); err != nil {
			return fmt.Errorf("drain: creates: %w", err)
		}
	}
	arms := []drainArm{
		{label: "backlog", delay: 0},
		{label: "backlog, slow receiver", delay: slowReceiver},
		{label: "backlog, receiver at its bound", delay: boundReceiver},
		{label: "live", delay: 0, live: true},
	}
	owners := []string{"drain-warm", "drain-0", "drain-1", "drain-2", "drain-3"}
	s, stop, err := b.startLoadStack("drain-", owners)
	if err != nil {
		return err
	}
	defer stop()
	db := store.New(localdb.Client(b.endpoint))
	table := func(id string) string { return s.names[id] }
	// The warm-up's caller has no webhook: the pool gets its instances
	// without an event to deliver.
	say("drain: warm-up, %d creates…\n", drainConcurrency)
	if _, err := s.creates(owners[:1], drainConcurrency, drainConcurrency); err != nil {
		return err
	}
	for i := range arms {
		a := &arms[i]
		owner := owners[i+1]
		r := &arrivals{first: map[string]time.Time{}}
		srv := httptest.NewServer(delayed(r, a.delay))
		defer srv.Close()
		if err := register(b.ctx, db, table, owner, srv.URL+"/hook", stampduty.EventOrderCreated); err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		if err := b.drainArm(s, a, owner, r); err != nil {
			return err
		}
	}
	b.drain = arms
	return nil
}

// drainArm runs arm a for owner, whose webhook's receiver is r.
func (b *bench) drainArm(s *loadStack, a *drainArm, owner string, r *arrivals) error {
	var stopDispatch func()
	start := func() error {
		_, stop, err := b.scheduledDispatch(s.names, s.proxy)
		stopDispatch = stop
		return err
	}
	if a.live {
		if err := start(); err != nil {
			return fmt.Errorf("drain: %w", err)
		}
	}
	say("drain: %s: %d orders of one caller through the create-order function, %d at a time…\n", a.label, drainOrders, drainConcurrency)
	t0 := time.Now()
	status, err := s.creates([]string{owner}, drainOrders, drainConcurrency)
	if err == nil && status[http.StatusOK] != drainOrders {
		err = fmt.Errorf("creates answered %v, want %d × 200", status, drainOrders)
	}
	if err != nil {
		if stopDispatch != nil {
			stopDispatch()
		}
		return fmt.Errorf("drain: %s: %w", a.label, err)
	}
	created := time.Now()
	a.createsTook = created.Sub(t0)
	from := t0
	if !a.live {
		s.proxy.Take()
		if err := start(); err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		from = time.Now() // its first pass has begun
	}
	defer stopDispatch()
	if err := b.waitFor(r, drainOrders, from, "delivered ("+a.label+")"); err != nil {
		return err
	}
	say("\n")
	last := r.last()
	a.drainTook, a.lag = last.Sub(from), last.Sub(created)
	if !a.live {
		a.calls = map[string]int{}
		for _, c := range s.proxy.Take() {
			a.calls[c.Operation]++
		}
	}
	return nil
}

// delayed answers as h does after d.
func delayed(h http.Handler, d time.Duration) http.Handler {
	if d == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		time.Sleep(d)
		h.ServeHTTP(w, req)
	})
}

// drainTable is section 15.
func (b *bench) drainTable() (*table, error) {
	k := b.dispatch.KeepUp
	if k.Creates == 0 || len(b.drain) == 0 {
		return nil, errors.New("section 15 has no measurements")
	}
	creates := float64(k.Creates) / k.CreatesTook.Seconds()
	t := &table{
		Title:  "15. One webhook's backlog against the API's create rate, from outside (local stack)",
		Header: []string{"what", "measured", "bar"},
	}
	t.add(fmt.Sprintf("creates a second through the create-order function, %d callers at concurrency %d (section 11's)", createCallers, createCallers), fmt.Sprintf("%.1f", creates), "—")
	for _, a := range b.drain {
		one := float64(drainOrders) / a.createsTook.Seconds()
		rate := float64(drainOrders) / a.drainTook.Seconds()
		receiver := "answering at once"
		if a.delay > 0 {
			receiver = fmt.Sprintf("answering after %s", a.delay)
		}
		if a.live {
			t.add(fmt.Sprintf("live: %d orders of one caller, %d at a time, while the dispatcher runs, its receiver %s: creates a second; events a second from the first create to the last arrival", drainOrders, drainConcurrency, receiver),
				fmt.Sprintf("%.1f; %.1f", one, rate), "—")
			t.add("live: the last event's arrival after the last create's answer, ms", ms(a.lag), "≤ 2000")
			continue
		}
		t.add(fmt.Sprintf("%s: %d events for one webhook (its receiver %s) drained, events a second from the dispatcher's first pass", a.label, drainOrders, receiver), fmt.Sprintf("%.1f", rate), "—")
		if a.delay >= boundReceiver {
			bound := float64(webhooks.DefaultPerWebhook) / a.delay.Seconds()
			t.add(fmt.Sprintf("%s: drain ÷ its bound, %d attempts at once of %s each (%.0f a second)", a.label, webhooks.DefaultPerWebhook, a.delay, bound), fmt.Sprintf("%.2f×", rate/bound), "—")
			continue
		}
		t.add(fmt.Sprintf("%s: drain ÷ the %d callers' creates", a.label, createCallers), fmt.Sprintf("%.2f×", rate/creates), "≥ 1×")
	}
	t.note("one stack of the create-order function (section 13's: its host build on a warm pool, through the local Runtime API, tokens checked) over fresh tables behind the recording proxy, warmed by %d creates of a caller without a webhook; each arm a caller of its own with one webhook on order.created at a loopback receiver; the dispatch function's host binary started by the local schedule (its template rate, as make local runs it)", drainConcurrency)
	t.note("backlog arms: the %d orders are made first (creates a second of one caller: %s), then the dispatcher is started and the time runs from its first pass to the receiver's %d-th event", drainOrders, armRates(b.drain), drainOrders)
	if c := b.drain[0].calls; c != nil {
		t.note("DynamoDB calls of the first arm's drain at the proxy, a delivered event: %s", drainCalls(c))
	}
	return t, nil
}

// drainCalls lists calls by operation, each a delivered event, most first.
func drainCalls(calls map[string]int) string {
	ops := slices.Collect(maps.Keys(calls))
	slices.SortFunc(ops, func(a, b string) int { return cmp.Or(calls[b]-calls[a], strings.Compare(a, b)) })
	var parts []string
	total := 0
	for _, op := range ops {
		total += calls[op]
		parts = append(parts, fmt.Sprintf("%s %.2f", op, float64(calls[op])/drainOrders))
	}
	return fmt.Sprintf("%.2f in all (%s)", float64(total)/drainOrders, strings.Join(parts, ", "))
}

// armRates lists the backlog arms' creates a second.
func armRates(arms []drainArm) string {
	s := ""
	for _, a := range arms {
		if a.live {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s %.1f", a.label, float64(drainOrders)/a.createsTook.Seconds())
	}
	return s
}
