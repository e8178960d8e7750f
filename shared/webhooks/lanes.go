// The delivery side of a Dispatcher: the passes over the due jobs and each
// webhook's turn (its orders' chains, worked by lanes); attempt.go has the
// attempt, run.go the rest a run keeps (slots, rests, commits, held
// leases, fresh reads).

package webhooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"stampduty/shared/metrics"
	"stampduty/shared/stampduty"
)

// hookKey names one webhook: its owner and documentId.
type hookKey struct{ owner, webhook string }

// lanes is what a Dispatcher's passes share: the webhooks whose turn is
// running, those backing off, the slots in use, and the fresh reads of
// each caller's webhooks.
type lanes struct {
	mu      sync.Mutex
	turns   map[hookKey]*turn        // the turns running, by webhook
	rest    map[hookKey]time.Time    // webhooks backing off, until when
	callers map[string]chan struct{} // each caller's slots for attempts
	all     chan struct{}            // the run's slots for attempts
	writers map[string]chan struct{} // each caller's slots for the records' writes
	writing chan struct{}            // the run's slots for the records' writes
	reads   map[string]*ownerReads   // per caller
	running sync.WaitGroup           // the turns started, for Run to wait for
	wake    func()                   // Run's: read the due jobs again soon; nil outside Run
	stop    <-chan struct{}          // Run's: the turns its relay starts stop on it
	// held are the jobs this run's relay put leased to itself, by webhook
	// and event, with when their lease was taken; nil outside Run.
	held    map[hookKey]map[string]heldLease
	commits []commit // attempts ended, waiting for their write
	sweep   string   // where the relay's sweep of the outboxes goes on from
	// coming are the Nexts this run wrote (retries, postponements) that
	// its last read of the due jobs was too early for; nil outside Run.
	coming []string
	// failures counts the run's own failures (see failed), first is the
	// first of them; Run starts them afresh.
	failures int
	first    error
}

// lanes returns d's shared state, made on first use.
func (d *Dispatcher) lanes() *lanes {
	d.once.Do(func() {
		parallel := cmp.Or(d.Parallel, DefaultParallel)
		d.st = &lanes{turns: map[hookKey]*turn{}, rest: map[hookKey]time.Time{}, callers: map[string]chan struct{}{},
			all: make(chan struct{}, parallel), writers: map[string]chan struct{}{}, writing: make(chan struct{}, parallel*recordDepth),
			reads: map[string]*ownerReads{}}
	})
	return d.st
}

// deliver reads the Poller's due jobs at now and starts the turn of each
// webhook among them that has none running; it waits for the turns when
// wait is set. It returns how many jobs were due. No turn starts an
// attempt once stop is closed.
func (d *Dispatcher) deliver(ctx context.Context, now time.Time, stop <-chan struct{}, wait bool) (DeliverReport, int, error) {
	var rep DeliverReport
	due, err := d.Jobs.Due(ctx, d.Poller, now, cmp.Or(d.Batch, DefaultBatch))
	if err != nil {
		return rep, 0, fmt.Errorf("deliver: %w", err)
	}
	if age, ok := dueAge(due, now); ok { // from the read just made: no call of its own
		metrics.Add(ctx, metrics.OldestDueAge, age)
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
	var started []*turn
	st.mu.Lock()
	for _, k := range order {
		if st.turns[k] != nil { // its running turn has these jobs, or the next pass will
			rep.Skipped += len(groups[k])
			continue
		}
		started = append(started, d.startTurn(ctx, stop, k, chainsOf(groups[k])))
	}
	st.mu.Unlock()
	if !wait {
		return DeliverReport{}, len(due), nil
	}
	var errs []error
	for _, t := range started {
		<-t.done
		rep.add(t.rep)
		errs = append(errs, t.errs...)
	}
	return rep, len(due), errors.Join(errs...)
}

// offer gives the run's delivery the jobs of webhook k that its relay has
// just put leased to the run, one order's in Seq order: they join k's
// running turn, or start one, without waiting for the due index.
func (d *Dispatcher) offer(ctx context.Context, k hookKey, chain []Job) {
	st := d.lanes()
	st.mu.Lock()
	defer st.mu.Unlock()
	if t := st.turns[k]; t != nil {
		t.queue = append(t.queue, chain)
		d.grow(ctx, t)
		return
	}
	d.startTurn(ctx, st.stop, k, [][]Job{chain})
}

// chainsOf returns jobs (a webhook's) as its orders' chains: each order's
// jobs in Seq order, the orders in the order of their first job.
func chainsOf(jobs []Job) [][]Job {
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
	return chains
}

// turn is one webhook's turn at its jobs: its queue of chains (each an
// order's jobs, one after another), worked by lanes.
type turn struct {
	k      hookKey
	stop   <-chan struct{} // the run's: no attempt starts once closed
	end    time.Time       // no attempt starts after it (the budget)
	ended  atomic.Bool     // the webhook is gone, disabled or backing off
	halt   sync.Once       // its jobs are stopped once
	opened chan struct{}   // closed once the receiver answered: the other lanes start
	// sending holds a slot per attempt to the webhook under way, from the
	// claim to the receiver's answer: PerWebhook of them.
	sending chan struct{}
	open    sync.Once
	done    chan struct{} // closed when its last lane ends
	// Guarded by the lanes' lock:
	queue [][]Job
	lanes int
	// Guarded by mu:
	mu   sync.Mutex
	rep  DeliverReport
	errs []error
}

// answered opens the turn's other lanes.
func (t *turn) answered() { t.open.Do(func() { close(t.opened) }) }

// isOpen reports whether the turn's other lanes may start.
func (t *turn) isOpen() bool {
	select {
	case <-t.opened:
		return true
	default:
		return false
	}
}

// over reports whether the turn starts no more attempts.
func (t *turn) over() bool {
	select {
	case <-t.stop:
		return true
	default:
	}
	return t.ended.Load() || time.Now().After(t.end)
}

// add adds an attempt's report and error to the turn's.
func (t *turn) add(r DeliverReport, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rep.add(r)
	if err != nil {
		t.errs = append(t.errs, err)
	}
}

// startTurn starts k's turn at chains (the lanes' lock is held): its jobs
// in Seq order, each order's one after another, up to PerWebhook ×
// recordDepth orders at once with at most PerWebhook attempts under way
// (the other lanes write their records meanwhile), until the budget is
// spent or the webhook ends (gone, disabled, or timed out: then it backs
// off). A turn starts with one lane and opens the others once the receiver
// has answered an attempt (any status but 410): a receiver that hangs, is
// down or answers 410 gets one attempt of the turn, never PerWebhook. A
// webhook backing off has its jobs postponed to the end of its rest
// instead.
func (d *Dispatcher) startTurn(ctx context.Context, stop <-chan struct{}, k hookKey, chains [][]Job) *turn {
	st := d.st
	t := &turn{k: k, stop: stop, end: time.Now().Add(cmp.Or(d.Budget, DefaultBudget)), opened: make(chan struct{}),
		sending: make(chan struct{}, cmp.Or(d.PerWebhook, DefaultPerWebhook)), done: make(chan struct{}), queue: chains, lanes: 1}
	st.turns[k] = t
	st.running.Add(1)
	if until, ok := st.restingLocked(k, d.now()); ok {
		go d.rest(ctx, t, until)
		return t
	}
	go d.lane(ctx, t)
	return t
}

// grow starts another lane of t when it is open, has chains waiting and
// fewer than PerWebhook × recordDepth lanes, PerWebhook for test orders'
// steps (the lanes' lock is held).
func (d *Dispatcher) grow(ctx context.Context, t *turn) {
	most := cmp.Or(d.PerWebhook, DefaultPerWebhook)
	if !t.k.isStep() { // a test order's step is one write, no attempt
		most *= recordDepth
	}
	if t.lanes > 0 && t.lanes < most && len(t.queue) > 0 && t.isOpen() && !t.over() {
		t.lanes++
		go d.lane(ctx, t)
	}
}

// lane works t's chains until none is left or the turn is over; the last
// lane to end ends the turn.
func (d *Dispatcher) lane(ctx context.Context, t *turn) {
	st := d.st
	for {
		st.mu.Lock()
		if len(t.queue) == 0 || t.over() {
			left := 0
			for _, c := range t.queue {
				left += len(c)
			}
			t.queue = nil
			t.add(DeliverReport{Skipped: left}, nil)
			if t.lanes--; t.lanes == 0 {
				d.endTurn(t)
			}
			st.mu.Unlock()
			return
		}
		chain := t.queue[0]
		t.queue = t.queue[1:]
		d.grow(ctx, t)
		st.mu.Unlock()
		for i, j := range chain {
			if t.over() {
				t.add(DeliverReport{Skipped: len(chain) - i}, nil)
				break
			}
			var (
				r   DeliverReport
				err error
			)
			if t.k.isStep() { // a test order's step: nothing is sent
				r, err = d.step(ctx, j, t)
			} else {
				r, err = d.attempt(ctx, t.k, j, t)
			}
			if err != nil {
				d.logf("deliver event %s to webhook %s: %v", j.ID, t.k.webhook, err)
				d.failed(ctx, err)
			}
			t.add(r, err)
			st.mu.Lock()
			d.grow(ctx, t) // the receiver may have answered
			st.mu.Unlock()
		}
	}
}

// endTurn ends t (the lanes' lock is held): a turn that made attempts has
// the due jobs read again, as there may be more.
func (d *Dispatcher) endTurn(t *turn) {
	st := d.st
	if st.turns[t.k] == t {
		delete(st.turns, t.k)
	}
	t.mu.Lock()
	attempted := t.rep.Attempts > 0
	t.mu.Unlock()
	if attempted && st.wake != nil {
		st.wake()
	}
	close(t.done)
	st.running.Done()
}

// rest postpones t's jobs to until, the end of its webhook's rest, and
// ends t.
func (d *Dispatcher) rest(ctx context.Context, t *turn, until time.Time) {
	next := stampduty.FormatTime(until)
	st := d.st
	for {
		st.mu.Lock()
		if len(t.queue) == 0 {
			t.lanes = 0
			d.endTurn(t)
			st.mu.Unlock()
			return
		}
		chain := t.queue[0]
		t.queue = t.queue[1:]
		st.mu.Unlock()
		for _, j := range chain {
			t.add(DeliverReport{Skipped: 1}, nil)
			if j.Next >= next {
				continue
			}
			if _, err := d.Jobs.Postpone(ctx, j, next); err != nil {
				err = fmt.Errorf("postpone event %s of webhook %s while it backs off: %w", j.ID, t.k.webhook, err)
				t.add(DeliverReport{}, err)
				d.failed(ctx, err)
			}
			st.wrote(next)
		}
	}
}
