// The delivery side of a Dispatcher: each webhook's turn, the slots that
// keep one caller's slow receivers from holding the others back, and the
// back-off of a webhook that timed out (run.go has the rest a run keeps).

package webhooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stampduty/shared/stampduty"
)

// hookKey names one webhook: its owner and documentId.
type hookKey struct{ owner, webhook string }

// lanes is what a Dispatcher's passes share: the webhooks whose turn is
// running, those backing off, the slots in use, and the fresh reads of
// each caller's webhooks.
type lanes struct {
	mu      sync.Mutex
	busy    map[hookKey]bool         // webhooks whose turn is running
	rest    map[hookKey]time.Time    // webhooks backing off, until when
	callers map[string]chan struct{} // each caller's slots
	all     chan struct{}            // the run's slots
	reads   map[string]*ownerReads   // per caller
	running sync.WaitGroup           // the turns started, for Run to wait for
	wake    func()                   // Run's: read the due jobs again soon; nil outside Run
	// held are the jobs this run's relay put leased to itself, by webhook
	// and event, with when their lease was taken; nil outside Run.
	held    map[hookKey]map[string]time.Time
	commits []commit // attempts ended, waiting for their write
}

// pokeFor wakes Run's delivery loop for a new job of webhook k, unless
// k's turn is running: it will have the due jobs read again when it ends,
// and reading them meanwhile would only read its jobs again.
func (st *lanes) pokeFor(k hookKey) {
	st.mu.Lock()
	busy := st.busy[k]
	st.mu.Unlock()
	if !busy {
		st.poke()
	}
}

// poke wakes Run's delivery loop, if one runs.
func (st *lanes) poke() {
	st.mu.Lock()
	wake := st.wake
	st.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// lanes returns d's shared state, made on first use.
func (d *Dispatcher) lanes() *lanes {
	d.once.Do(func() {
		d.st = &lanes{busy: map[hookKey]bool{}, rest: map[hookKey]time.Time{}, callers: map[string]chan struct{}{},
			all: make(chan struct{}, cmp.Or(d.Parallel, DefaultParallel)), reads: map[string]*ownerReads{}}
	})
	return d.st
}

// deliver reads the due jobs and starts the turn of each webhook among
// them that has none running; it waits for the turns when wait is set. No
// turn starts an attempt once stop is closed.
func (d *Dispatcher) deliver(ctx context.Context, stop <-chan struct{}, wait bool) (DeliverReport, error) {
	var rep DeliverReport
	due, err := d.Jobs.Due(ctx, d.now(), cmp.Or(d.Batch, DefaultBatch))
	if err != nil {
		return rep, fmt.Errorf("deliver: %w", err)
	}
	groups := map[hookKey][]Job{}
	var order []hookKey
	for _, j := range due {
		k := hookKey{j.Owner, j.Webhook}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], j)
	}
	st := d.lanes()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for _, k := range order {
		jobs := groups[k]
		st.mu.Lock()
		busy := st.busy[k]
		st.busy[k] = true
		st.mu.Unlock()
		if busy { // its running turn has these jobs, or the next pass will
			rep.Skipped += len(jobs)
			continue
		}
		wg.Add(1)
		st.running.Add(1)
		go func() {
			defer func() {
				st.mu.Lock()
				delete(st.busy, k)
				st.mu.Unlock()
				wg.Done()
				st.running.Done()
			}()
			r, err := d.turn(ctx, stop, k, jobs)
			if r.Attempts > 0 {
				st.poke() // there may be more
			}
			mu.Lock()
			defer mu.Unlock()
			rep.add(r)
			if err != nil {
				errs = append(errs, err)
				if !wait {
					d.logf("%v", err)
				}
			}
		}()
	}
	if !wait {
		return DeliverReport{}, nil
	}
	wg.Wait()
	return rep, errors.Join(errs...)
}

// turn is one webhook's turn at its due jobs.
type turn struct {
	end    time.Time     // no attempt starts after it (the budget)
	ended  atomic.Bool   // the webhook is gone, disabled or backing off
	stop   sync.Once     // its jobs are stopped once
	opened chan struct{} // closed once the receiver answered: the other lanes start
	open   sync.Once
}

// answered opens the turn's other lanes.
func (t *turn) answered() { t.open.Do(func() { close(t.opened) }) }

// over reports whether the turn starts no more attempts.
func (t *turn) over(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
	}
	return t.ended.Load() || time.Now().After(t.end)
}

// turn attempts k's due jobs: in Seq order, each order's one after
// another, up to PerWebhook orders at once, until the budget is spent or
// the webhook ends (gone, disabled, or timed out: then it backs off). A
// turn starts with one attempt at a time and opens its other lanes once
// the receiver has answered one (any status): a receiver that hangs, is
// down or answers 410 gets one attempt of the turn, never PerWebhook. A
// webhook backing off has its due jobs postponed to the end of its rest.
func (d *Dispatcher) turn(ctx context.Context, stop <-chan struct{}, k hookKey, jobs []Job) (DeliverReport, error) {
	var rep DeliverReport
	if until, ok := d.lanes().resting(k, d.now()); ok {
		next := stampduty.FormatTime(until)
		for _, j := range jobs {
			rep.Skipped++
			if j.Next >= next {
				continue
			}
			if _, err := d.Jobs.Postpone(ctx, j, next); err != nil {
				return rep, fmt.Errorf("postpone event %s of webhook %s while it backs off: %w", j.ID, k.webhook, err)
			}
		}
		return rep, nil
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Seq < jobs[b].Seq })
	var chains [][]Job
	at := map[string]int{}
	for _, j := range jobs {
		o := OrderOf(j.Seq)
		i, ok := at[o]
		if !ok {
			i, at[o] = len(chains), len(chains)
			chains = append(chains, nil)
		}
		chains[i] = append(chains[i], j)
	}
	var (
		t    = &turn{end: time.Now().Add(cmp.Or(d.Budget, DefaultBudget)), opened: make(chan struct{})}
		feed = make(chan []Job)
		fed  = make(chan struct{})
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for lane := range min(cmp.Or(d.PerWebhook, DefaultPerWebhook), len(chains)) {
		wg.Go(func() {
			if lane > 0 {
				select {
				case <-t.opened:
				case <-fed:
				}
			}
			for chain := range feed {
				for i, j := range chain {
					if t.over(stop) {
						mu.Lock()
						rep.Skipped += len(chain) - i
						mu.Unlock()
						break
					}
					r, err := d.attempt(ctx, k, j, t)
					mu.Lock()
					rep.add(r)
					if err != nil {
						errs = append(errs, err)
						d.logf("deliver event %s to webhook %s: %v", j.ID, k.webhook, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, c := range chains {
		feed <- c
	}
	close(feed)
	close(fed)
	wg.Wait()
	return rep, errors.Join(errs...)
}

// firstOfOrder reports whether seq is the first event its order ever
// recorded (the outbox's first at version 1): no job of its order can come
// before it, so it need not look for one.
func firstOfOrder(seq string) bool { return strings.HasSuffix(seq, "#0000000001#000") }

// attempt makes one attempt of job j to webhook k, if j is not waiting on
// an earlier job of its order, a slot is free for it, this run gets its
// lease, and the webhook, read again right before the attempt, is still
// live and enabled.
func (d *Dispatcher) attempt(ctx context.Context, k hookKey, j Job, t *turn) (DeliverReport, error) {
	var rep DeliverReport
	if !firstOfOrder(j.Seq) {
		behind, err := d.Jobs.Waiting(ctx, j)
		if err != nil {
			return rep, err
		}
		if behind != "" {
			// j cannot go before the job it waits for: make it due then, so
			// that a long wait (a receiver failing an order's first event for
			// hours) does not keep it at the head of the due jobs, where a
			// batch of such jobs would crowd every other webhook out.
			rep.Skipped++
			if behind > j.Next {
				if _, err := d.Jobs.Postpone(ctx, j, behind); err != nil {
					return rep, fmt.Errorf("postpone event %s: %w", j.ID, err)
				}
			}
			return rep, nil
		}
	}
	st := d.lanes()
	release, err := st.acquire(ctx, k.owner, cmp.Or(d.PerCaller, DefaultPerCaller))
	if err != nil {
		return rep, err
	}
	defer release()
	timeout := cmp.Or(d.Deliverer.Timeout, Timeout)
	start := d.now()
	leased := st.holds(j, start) // put leased to this run by its relay: the attempt ends before the lease
	if !leased {
		if leased, err = d.Jobs.Lease(ctx, j, start, start.Add(timeout+leaseMargin)); err != nil {
			return rep, err
		}
	}
	if !leased {
		rep.Skipped++
		return rep, nil
	}
	body, err := d.body(ctx, j)
	if err != nil {
		return rep, err // the lease runs out and a later pass tries again
	}
	h, err := d.current(ctx, k.owner, k.webhook)
	if err != nil {
		return rep, err // the lease runs out and a later pass tries again
	}
	if h == nil || !h.Enabled {
		// Deleted or disabled since the job was put: nothing more goes out.
		t.ended.Store(true)
		rep.Skipped++
		t.stop.Do(func() { err = d.Jobs.Stop(ctx, k.owner, k.webhook) })
		if err != nil {
			return rep, fmt.Errorf("stop the jobs of webhook %s: %w", k.webhook, err)
		}
		return rep, nil
	}
	res := d.Deliverer.Deliver(ctx, h.URL, h.Secret, j.ID, body)
	if res.Status != 0 && res.Status != http.StatusGone {
		t.answered()
	}
	if res.Status == 0 && res.Duration >= timeout*9/10 {
		// It hung: rest the webhook rather than spend more slots on it.
		t.ended.Store(true)
		st.backOff(k, start.Add(cmp.Or(d.Backoff, DefaultBackoff)))
	}
	return d.record(ctx, h, j, start, res, t)
}

// record stores the attempt of j to h that started at start and got res,
// and the job after it; on 410 Gone it disables the webhook and stops its
// jobs.
func (d *Dispatcher) record(ctx context.Context, h *Webhook, j Job, start time.Time, res Result, t *turn) (DeliverReport, error) {
	var rep DeliverReport
	first := start
	if j.First != "" {
		var err error
		if first, err = parseTime(j.First); err != nil {
			return rep, err
		}
	}
	rec, outcome := Record(Event{ID: j.ID, Type: j.Type}, j.N+1, first, start, res)
	j.N++
	j.First = stampduty.FormatTime(first)
	j.Next = ""
	rep.Attempts++
	switch outcome {
	case Delivered:
		j.Done = JobDelivered
		rep.Delivered++
	case Retry:
		j.Next = *rec.NextAttemptAt
		rep.Retried++
	case GiveUp:
		j.Done = JobGaveUp
		rep.GaveUp++
	case Disable:
		j.Done = JobDisabled
		rep.Disabled++
		t.ended.Store(true)
	}
	if err := d.commit(ctx, AttemptDone{Job: j, Attempt: rec}); err != nil {
		return rep, fmt.Errorf("record attempt %d: %w", j.N, err)
	}
	if outcome == Disable {
		if err := disable(ctx, d.Hooks, j.Owner, j.Webhook); err != nil {
			return rep, fmt.Errorf("disable webhook %s: %w", h.DocumentID, err)
		}
		if err := d.Jobs.Stop(ctx, j.Owner, j.Webhook); err != nil {
			return rep, fmt.Errorf("stop the jobs of webhook %s: %w", h.DocumentID, err)
		}
	}
	return rep, nil
}

// acquire takes one of owner's per slots, then one of the run's; release
// gives both back.
func (st *lanes) acquire(ctx context.Context, owner string, per int) (release func(), err error) {
	st.mu.Lock()
	c, ok := st.callers[owner]
	if !ok {
		c = make(chan struct{}, per)
		st.callers[owner] = c
	}
	st.mu.Unlock()
	select {
	case c <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case st.all <- struct{}{}:
	case <-ctx.Done():
		<-c
		return nil, ctx.Err()
	}
	return func() { <-st.all; <-c }, nil
}

// backOff rests webhook k until until.
func (st *lanes) backOff(k hookKey, until time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if until.After(st.rest[k]) {
		st.rest[k] = until
	}
}

// resting returns until when webhook k rests, ok false when it does not at now.
func (st *lanes) resting(k hookKey, now time.Time) (until time.Time, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	until, ok = st.rest[k]
	if ok && !now.Before(until) {
		delete(st.rest, k)
		return time.Time{}, false
	}
	return until, ok
}
