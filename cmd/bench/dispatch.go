package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// Section 11: does the dispatch keep up with the API, and is it fair. In one
// run, over fresh tables: the creates a second of createCallers callers at
// concurrency createCallers; the drain of a backlog of drainEvents events
// of one caller to one webhook by the scheduled dispatch function; the
// change → first attempt latency with nothing queued; and the same for
// caller B while caller A's hangingHooks webhooks hang on hangingOrders
// orders.
const (
	createCallers  = 32
	createsEach    = 32 // orders per caller: 1,024 in all
	drainEvents    = 1000
	hangingHooks   = 10
	hangingOrders  = 12
	hangFor        = 30 * time.Second
	quietChanges   = 20 // B's changes with nothing queued
	loadedChanges  = 5  // B's changes while A's receivers hang
	keepUpDeadline = 120 * time.Second
)

// keepUp is section 11's results.
type keepUp struct {
	Creates       int // through the create-order function
	CreatesTook   time.Duration
	Events        int // orders with a pending event after the creates
	InProcess     int // the same, with orders.Creator in-process
	InProcessTook time.Duration
	DrainTook     time.Duration // from the first pass
	DrainCold     time.Duration // from the binary's start
	Quiet, Loaded durations
	HungAttempts  int // attempts A's receivers got while B's changes were made
}

// measureKeepUp is section 11.
func (b *bench) measureKeepUp() error {
	if err := b.measureCreates(); err != nil {
		return fmt.Errorf("keep up: creates: %w", err)
	}
	w, err := b.newListening("keepup-")
	if err != nil {
		return err
	}
	defer w.proxy.Close()
	names, proxy, table, direct, c := w.names, w.proxy, w.table, w.db, w.creator
	drain, quiet, hang := &arrivals{first: map[string]time.Time{}}, &arrivals{first: map[string]time.Time{}}, newHanging()
	for _, r := range []http.Handler{drain, quiet, hang} {
		srv := httptest.NewServer(r)
		defer srv.Close()
		switch r {
		case drain:
			err = register(b.ctx, direct, table, "bench-drain", srv.URL+"/drain", stampduty.EventOrderCreated)
		case quiet:
			err = register(b.ctx, direct, table, "bench-b", srv.URL+"/b", stampduty.EventOrderCreated)
		default:
			for i := 0; i < hangingHooks && err == nil; i++ {
				err = register(b.ctx, direct, table, "bench-a", fmt.Sprintf("%s/a%d", srv.URL, i), stampduty.EventOrderCreated)
			}
		}
		if err != nil {
			return fmt.Errorf("keep up: %w", err)
		}
	}
	defer hang.release()
	say("keep up: a backlog of %d events for one webhook…\n", drainEvents)
	for i := range drainEvents {
		if _, err := c.Create(b.ctx, "bench-drain", b.body, nil); err != nil {
			return fmt.Errorf("keep up: backlog: %w", err)
		}
		if (i+1)%100 == 0 {
			say("\rkeep up: %d/%d events stored", i+1, drainEvents)
		}
	}
	say("\n")
	cold := time.Now()
	_, stop, err := b.scheduledDispatch(names, proxy)
	if err != nil {
		return fmt.Errorf("keep up: %w", err)
	}
	defer stop()
	t0 := time.Now() // its first pass has begun
	if err := b.waitFor(drain, drainEvents, cold, "drained"); err != nil {
		return err
	}
	b.dispatch.KeepUp.DrainTook, b.dispatch.KeepUp.DrainCold = time.Since(t0), time.Since(cold)
	say("\nkeep up: %d changes of B with nothing queued…\n", quietChanges)
	if b.dispatch.KeepUp.Quiet, err = b.latencies(c, "bench-b", quiet, quietChanges); err != nil {
		return err
	}
	say("keep up: A's %d webhooks hang %s on %d orders…\n", hangingHooks, hangFor, hangingOrders)
	for range hangingOrders {
		if _, err := c.Create(b.ctx, "bench-a", b.body, nil); err != nil {
			return fmt.Errorf("keep up: A's orders: %w", err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); hang.count() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return b.withLog(errors.New("keep up: A's receivers got nothing within 10 s"), dispatchID)
		}
	}
	if b.dispatch.KeepUp.Loaded, err = b.latencies(c, "bench-b", quiet, loadedChanges); err != nil {
		return err
	}
	b.dispatch.KeepUp.HungAttempts = hang.count()
	return nil
}

// measureCreates times createCallers callers making createsEach orders
// each through the create-order function on the local stack (section 13's,
// startLoadStack), createCallers requests at a time, each caller with a
// webhook on order.created, so each create stores its event as a real
// caller's does; then checks that every one did. Then, as a second figure,
// the same creates made in-process (measureCreatesInProcess).
func (b *bench) measureCreates() error {
	owners := callers("bench-create-", createCallers)
	s, stop, err := b.startLoadStack("creates-", owners)
	if err != nil {
		return err
	}
	defer stop()
	db := store.New(localdb.Client(b.endpoint))
	table := func(id string) string { return s.names[id] }
	for _, o := range owners {
		if err := register(b.ctx, db, table, o, "http://127.0.0.1:9/never", stampduty.EventOrderCreated); err != nil {
			return err
		}
	}
	if err := s.warmUp(owners); err != nil {
		return err
	}
	say("keep up: %d callers create %d orders each through the create-order function, %d at a time…\n", createCallers, createsEach, createCallers)
	t0 := time.Now()
	status, err := s.creates(owners, createCallers*createsEach, createCallers)
	if err != nil {
		return err
	}
	k := &b.dispatch.KeepUp
	k.Creates, k.CreatesTook = status[http.StatusOK], time.Since(t0)
	if k.Creates != createCallers*createsEach {
		return fmt.Errorf("keep up: creates answered %v, want %d × 200", status, createCallers*createsEach)
	}
	if k.Events, err = pendingEvents(b.ctx, db.Orders(table("OrdersTable"))); err != nil {
		return err
	}
	if want := k.Creates + len(owners); k.Events != want { // the warm-up's orders too
		return fmt.Errorf("keep up: %d orders with a pending event, want %d", k.Events, want)
	}
	return b.measureCreatesInProcess()
}

// pendingEvents counts the orders with a pending event among orders.
func pendingEvents(ctx context.Context, o *store.Orders) (int, error) {
	n := 0
	for cursor := ""; ; {
		page, next, err := o.Pending(ctx, webhooks.Poller{}, cursor, 1000)
		if err != nil {
			return 0, fmt.Errorf("keep up: the outbox: %w", err)
		}
		if n += len(page); next == "" {
			return n, nil
		}
		cursor = next
	}
}

// measureCreatesInProcess times the same creates made with the create-order
// workflow (orders.Creator) on the database directly, behind the proxy, one
// at a time per caller, all callers at once: the figure without the
// function's runtime, its HTTP edge and its token check.
func (b *bench) measureCreatesInProcess() error {
	w, err := b.newListening("creates-inproc-")
	if err != nil {
		return err
	}
	defer w.proxy.Close()
	table, db, c := w.table, w.db, w.creator
	for i := range createCallers {
		if err := register(b.ctx, db, table, fmt.Sprintf("bench-create-%02d", i), "http://127.0.0.1:9/never", stampduty.EventOrderCreated); err != nil {
			return err
		}
	}
	say("keep up: the same creates in-process…\n")
	var (
		wg   sync.WaitGroup
		made atomic.Int64
		errs = make([]error, createCallers)
	)
	t0 := time.Now()
	for i := range createCallers {
		wg.Go(func() {
			for range createsEach {
				if _, err := c.Create(b.ctx, fmt.Sprintf("bench-create-%02d", i), b.body, nil); err != nil {
					errs[i] = err
					return
				}
				made.Add(1)
			}
		})
	}
	wg.Wait()
	b.dispatch.KeepUp.InProcess, b.dispatch.KeepUp.InProcessTook = int(made.Load()), time.Since(t0)
	return errors.Join(errs...)
}

// listening is a copy of the template's tables behind a recording proxy
// (closed by the caller), and a creator of orders over it that stores the
// order.created event of each caller that listens to it.
type listening struct {
	names   map[string]string
	proxy   *storetest.Proxy
	table   func(string) string
	db      *store.DB
	creator *orders.Creator
}

// newListening returns fresh tables named prefix + logical id.
func (b *bench) newListening(prefix string) (*listening, error) {
	names, proxy, err := b.freshProxied(prefix)
	if err != nil {
		return nil, err
	}
	w := &listening{names: names, proxy: proxy, table: func(id string) string { return names[id] }, db: store.New(localdb.Client(proxy.URL))}
	w.creator = creator(w.db, w.table)
	w.creator.Listeners = w.db.Webhooks(w.table("WebhooksTable"))
	return w, nil
}

// waitFor waits until r got n orders' events, at most keepUpDeadline after
// t0, printing progress.
func (b *bench) waitFor(r *arrivals, n int, t0 time.Time, what string) error {
	for last := -1; r.count() < n; time.Sleep(50 * time.Millisecond) {
		if got := r.count(); got/100 != last/100 {
			say("\rkeep up: %d/%d %s in %.1f s", got, n, what, time.Since(t0).Seconds())
			last = got
		}
		if time.Since(t0) > keepUpDeadline || b.ctx.Err() != nil {
			return b.withLog(fmt.Errorf("keep up: %d of %d events not %s within %s", n-r.count(), n, what, keepUpDeadline), dispatchID)
		}
	}
	say("\rkeep up: %d/%d %s in %.1f s", n, n, what, time.Since(t0).Seconds())
	return nil
}

// latencies makes n changes of owner (creates, 100–400 ms apart) and
// returns the time from each create's start to r's first request of its
// event.
func (b *bench) latencies(c *orders.Creator, owner string, r *arrivals, n int) (durations, error) {
	changed := map[string]time.Time{}
	for range n {
		time.Sleep(latencyGap[0] + rand.N(latencyGap[1]-latencyGap[0]))
		t0 := time.Now()
		doc, err := c.Create(b.ctx, owner, b.body, nil)
		if err != nil {
			return nil, fmt.Errorf("keep up: %s's change: %w", owner, err)
		}
		changed[doc] = t0
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		var out durations
		for doc, t0 := range changed {
			if at, ok := r.first[doc]; ok {
				out = append(out, at.Sub(t0))
			}
		}
		bad := r.bad
		r.mu.Unlock()
		if bad != nil {
			return nil, fmt.Errorf("keep up: %w", bad)
		}
		if len(out) == n {
			return out, nil
		}
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			return nil, b.withLog(fmt.Errorf("keep up: %d of %s's %d events did not arrive within 30 s", n-len(out), owner, n), dispatchID)
		}
	}
}

// hangingReceiver holds every request hangFor (or until released) and
// counts them.
type hangingReceiver struct {
	n    atomic.Int64
	done chan struct{}
	once sync.Once
}

func newHanging() *hangingReceiver { return &hangingReceiver{done: make(chan struct{})} }

func (h *hangingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.n.Add(1)
	select {
	case <-time.After(hangFor):
	case <-h.done:
	case <-r.Context().Done():
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *hangingReceiver) count() int { return int(h.n.Load()) }

// release lets every held request go.
func (h *hangingReceiver) release() { h.once.Do(func() { close(h.done) }) }

// keepUpTable is section 11.
func (b *bench) keepUpTable() (*table, error) {
	k := b.dispatch.KeepUp
	if k.Creates == 0 || k.InProcess == 0 || k.DrainTook == 0 || len(k.Quiet) == 0 || len(k.Loaded) == 0 {
		return nil, errors.New("section 11 has no measurements")
	}
	creates := float64(k.Creates) / k.CreatesTook.Seconds()
	drain := float64(drainEvents) / k.DrainTook.Seconds()
	quietMed, _, quietP90 := k.Quiet.stats()
	loadedMed := k.Loaded.median()
	worst := slices.Max(k.Loaded)
	t := &table{
		Title:  "11. Webhook dispatch: keeping up with the API, and fairness (local stack)",
		Header: []string{"what", "measured", "bar"},
	}
	label := scheduledLabels[dispatchID]
	inProcess := float64(k.InProcess) / k.InProcessTook.Seconds()
	t.add(fmt.Sprintf("creates a second through the create-order function, %d callers at concurrency %d (%d orders, each with its event)", createCallers, createCallers, k.Creates), fmt.Sprintf("%.1f", creates), "—")
	t.add(fmt.Sprintf("%s: a backlog of %d events for one webhook drained, events a second from its first pass", label, drainEvents), fmt.Sprintf("%.1f", drain), "—")
	t.add("drain ÷ creates through the function", fmt.Sprintf("%.2f×", drain/creates), "≥ 1×")
	t.add("in-process, for comparison: the same creates with orders.Creator on the database directly, a second; drain ÷ those", fmt.Sprintf("%.1f; %.2f×", inProcess, drain/inProcess), "—")
	t.add("the same drain from the function's start (its cold start included), events a second; ÷ creates",
		fmt.Sprintf("%.1f; %.2f×", float64(drainEvents)/k.DrainCold.Seconds(), float64(drainEvents)/k.DrainCold.Seconds()/creates), "—")
	t.add(fmt.Sprintf("change → first attempt, nothing queued: median (p90) ms, %d changes", len(k.Quiet)), fmt.Sprintf("%s (%s)", ms(quietMed), ms(quietP90)), "≤ 1000")
	t.add(fmt.Sprintf("B's change → first attempt while A's %d webhooks hang on %d orders: median (worst) ms, %d changes", hangingHooks, hangingOrders, len(k.Loaded)),
		fmt.Sprintf("%s (%s)", ms(loadedMed), ms(worst)), "—")
	t.add("B's worst delay over its unloaded median, ms", ms(worst-quietMed), "≤ 2000")
	t.note("all in one run, each part over fresh tables behind the recording proxy: the creates through the create-order function on section 13's stack (its host build on a warm pool, through the local Runtime API, tokens checked), %d callers with a webhook each on order.created (so each create stores its event, as the backlog's did: %d orders with a pending event counted after), %d creates %d at a time after a warm-up of each caller's first order; no dispatcher runs on those tables", createCallers, k.Events, k.Creates, createCallers)
	t.note("the in-process row makes the same creates with the create-order workflow (orders.Creator) in the bench's process, each caller's %d one after another, all callers at once: it leaves out the function's runtime, HTTP edge and token check, so it is not what the bar compares", createsEach)
	t.note("the drain: %d orders of one caller created first (one at a time), each with its order.created event, for one webhook at a loopback receiver answering 204; then %s's host binary is started by the local schedule (its template rate, as make local runs it) and the time runs from its first pass (seen at the proxy: on AWS a run is always polling) to the receiver's %d-th event; the row below counts from the binary's start instead", drainEvents, dispatchID, drainEvents)
	t.note("latencies: start of the create's call → the receiver's first request of its event, changes %v–%v apart; A's receivers hold each request %s (the delivery is cut at its 10 s timeout), and got %d attempts while B's changes were made", latencyGap[0], latencyGap[1], hangFor, k.HungAttempts)
	return t, nil
}
