package webhooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"stampduty/shared/orders"
)

// Defaults of a Dispatcher.
const (
	// DefaultParallel is how many attempts are made at once, in all.
	DefaultParallel = 128
	// DefaultPerCaller is how many attempts to one caller's webhooks are
	// made at once: a caller whose receivers hang holds at most these
	// slots, and the others' attempts go on in the rest.
	DefaultPerCaller = 32
	// DefaultPerWebhook is how many attempts to one webhook are made at
	// once, each of another order (an order's events go one at a time).
	DefaultPerWebhook = 32
	// DefaultBatch is how many outboxes or due jobs one pass reads of each
	// shard.
	DefaultBatch = 100
	// DefaultBudget is how long a webhook's turn lasts: no new attempt to
	// it starts later in the turn, and its jobs left wait for the next pass.
	DefaultBudget = 5 * time.Second
	// DefaultBackoff is how long a webhook gets no attempt after one of
	// its attempts timed out (its jobs are postponed that long).
	DefaultBackoff = 30 * time.Second
	// DefaultIdle is how often an idle run reads the due jobs: the latest
	// a job written by another run or function (a redelivery) is read.
	DefaultIdle = 5 * time.Second
	// relayParallel is how many outboxes one relay pass hands on at once.
	relayParallel = 64
	// recordDepth is how many of a turn's lanes there are for each
	// attempt it may have under way (PerWebhook): an attempt's slots are
	// given back once the receiver has answered, and its lane then writes
	// the record while the others attempt, so a webhook's drain is not
	// bound by the write of its records (the receiver never has more than
	// PerWebhook attempts at once). A caller has as many record writes
	// under way at most (PerCaller × recordDepth), the run Parallel ×
	// recordDepth.
	recordDepth = 4
	// leaseMargin is how much longer than a delivery's timeout a lease lasts.
	leaseMargin = 5 * time.Second
)

// Dispatcher relays outboxes into jobs and delivers due jobs. It holds
// the state its passes share (which webhooks are being delivered to, which
// are backing off, the slots in use), so one Dispatcher is one run.
type Dispatcher struct {
	Outbox Outbox
	Hooks  Hooks
	Jobs   Jobs
	// Files makes the download addresses of an event's order when it is sent.
	Files orders.Files
	// Deliverer sends the events (its Guard checks every address).
	Deliverer Deliverer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Parallel bounds the attempts made at once; 0 means DefaultParallel.
	Parallel int
	// PerCaller bounds the attempts made at once to one caller's
	// webhooks; 0 means DefaultPerCaller.
	PerCaller int
	// PerWebhook bounds the attempts made at once to one webhook; 0 means
	// DefaultPerWebhook.
	PerWebhook int
	// Batch bounds what one pass reads of each shard; 0 means DefaultBatch.
	Batch int
	// Budget bounds a webhook's turn; 0 means DefaultBudget.
	Budget time.Duration
	// Backoff is how long a webhook whose attempt timed out rests; 0
	// means DefaultBackoff.
	Backoff time.Duration
	// Log receives a line per attempt recorded (its ids, status and
	// outcome: a webhook's delivery history) and per failure that a later
	// pass retries; nil discards.
	Log io.Writer
	// Poller is which of the pollers this run is; the zero value is the
	// only one. It reads only its part of the outboxes and due jobs.
	Poller Poller
	// Steps makes the steps of test orders that come due with the jobs;
	// a Dispatcher without a Stepper leaves them.
	Steps Steps
	// Idle is how often Run reads the due jobs while there are none (the
	// last read found none, and no job the run wrote is coming due); 0
	// means DefaultIdle.
	Idle time.Duration

	once sync.Once
	st   *lanes
}

// now returns the dispatcher's time.
func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// logf writes one line to the log.
func (d *Dispatcher) logf(format string, args ...any) {
	if d.Log != nil {
		fmt.Fprintf(d.Log, "webhooks: "+format+"\n", args...)
	}
}

// DeliverReport says what one Deliver pass did.
type DeliverReport struct {
	// Attempts is how many attempts it made.
	Attempts int
	// Delivered, Retried, GaveUp and Disabled count the attempts by outcome.
	Delivered, Retried, GaveUp, Disabled int
	// Skipped counts due jobs it left: waiting on an earlier job of their
	// order, leased by another run, stopped with their webhook, postponed
	// while their webhook backs off, or left for the next pass when their
	// webhook's turn ended.
	Skipped int
}

// add adds r to rep.
func (rep *DeliverReport) add(r DeliverReport) {
	rep.Attempts += r.Attempts
	rep.Delivered += r.Delivered
	rep.Retried += r.Retried
	rep.GaveUp += r.GaveUp
	rep.Disabled += r.Disabled
	rep.Skipped += r.Skipped
}

// Deliver attempts the due jobs and returns when every attempt it started
// is over. Each webhook has a turn: its jobs in Seq order, an order's one
// at a time, up to PerWebhook orders at once, each attempt in one of its
// caller's PerCaller slots and one of the Parallel slots of the run; a
// turn starts no attempt after Budget, nor after an attempt of it timed
// out (the webhook then backs off: its jobs are postponed by Backoff). A
// job whose order has an earlier job for the same webhook not done yet
// waits for it; a job another run has leased is left to it. Right before
// each attempt the webhook is read again (consistently, one read shared
// by the attempts that start together), so a webhook deleted or disabled
// gets no attempt after that change was answered, except one already
// being made. Each attempt is recorded, then the job is delivered,
// rescheduled (NextAttempt from the first attempt), given up after the
// last attempt, or, on 410 Gone, the webhook is disabled and its jobs
// stopped.
func (d *Dispatcher) Deliver(ctx context.Context) (DeliverReport, error) {
	rep, _, err := d.deliver(ctx, d.now(), ctx.Done(), true)
	return rep, err
}

// Run relays and delivers every `every`, and starts no pass later than
// `until` before ctx's deadline (or until ctx ends, when it has none): the
// loop of the scheduled dispatch function, whose run starts every minute, so
// that an event's first attempt is made within about `every` of its change.
// The relay and the delivery are two loops side by side: a relay pass whose
// sweep has more to read is followed at once by the next, and the jobs it
// stores, leased to the run, go straight to their webhook's turn (joining
// the one running or starting one), without waiting for the due index.
// The delivery reads the due jobs (retries, jobs of other runs, what a
// turn left, redeliveries) every `every` while the last read found some,
// and every Idle while it found none; at the first `every` after a job the
// run wrote itself (a retry, a postponement) comes due; and again as soon
// as a turn that made attempts ends (at most every `every`/8). A delivery
// pass starts the turns of the webhooks with due jobs that have none
// running, and never waits for a slow one, so the relay and the first
// attempts of other webhooks go on while a receiver hangs. No attempt
// starts later than `until` before the deadline, so `until` must leave
// room for a delivery's timeout; Run returns once the attempts it started
// are over. A pass's errors are logged and the next pass tries again; Run
// returns ctx's error when ctx ends, and otherwise an error when any pass
// or attempt failed for a reason of the service's own (see failed), once
// its whole run is over.
func (d *Dispatcher) Run(ctx context.Context, every, until time.Duration) error {
	if !d.Poller.Valid() {
		return fmt.Errorf("dispatch: poller %d of %d does not exist", d.Poller.Index, d.Poller.Count)
	}
	stop := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		stop, cancel = context.WithDeadline(ctx, deadline.Add(-until))
		defer cancel()
	}
	st := d.lanes()
	wake := make(chan struct{}, 1)
	st.mu.Lock()
	st.failures, st.first = 0, nil
	st.held = map[hookKey]map[string]heldLease{}
	st.stop = stop.Done()
	st.wake = func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	st.mu.Unlock()
	var relays sync.WaitGroup
	relays.Go(func() { d.relays(ctx, stop, every) })
	d.deliveries(ctx, stop, every, wake)
	relays.Wait()
	st.running.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("dispatch: %w", ctx.Err())
	}
	st.mu.Lock()
	n, first := st.failures, st.first
	st.mu.Unlock()
	if n > 0 {
		return fmt.Errorf("dispatch: %d failures of the service's own in this run (each left for a later pass); the first: %w", n, first)
	}
	return nil
}

// failed notes a failure of the run's own: a read or write of its tables,
// a download address it could not sign. Run ends with an error when it
// noted any, so that Lambda counts the invocation in AWS/Lambda's Errors,
// which the dispatcher's alarm watches: a dispatcher whose tables are
// unreachable (or whose grants are missing) relays and delivers nothing,
// though every pass's error was only logged and retried. Not failures: a
// receiver's (those are attempts, by outcome), a race lost to another
// writer (orders.ErrChanged: the next pass relays the outbox), and
// anything after the run's context ended (Run returns that instead).
func (d *Dispatcher) failed(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil || errors.Is(err, orders.ErrChanged) {
		return
	}
	st := d.lanes()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failures++; st.first == nil {
		st.first = err
	}
}

// relays is Run's relay loop (see Run): a page of the sweep of the
// outboxes every `every`, and while the sweep has more to read, the next
// page read at once, while the page before it is being relayed (one page
// relayed at a time), until stop.
func (d *Dispatcher) relays(ctx, stop context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var relaying sync.WaitGroup // the page being relayed
	defer relaying.Wait()
	for stop.Err() == nil {
		pending, more, err := d.relayRead(ctx)
		relaying.Wait()
		if err != nil {
			d.logf("%v", err)
			d.failed(ctx, err)
		} else {
			relaying.Go(func() { d.relayPage(ctx, pending, more) })
		}
		if !more {
			relaying.Wait() // a new sweep starts after the last page is relayed
			select {
			case <-stop.Done():
			case <-t.C:
			}
		}
	}
}

// deliveries is Run's delivery loop (see Run): it reads the due jobs at
// once, then each `every` while the last read found some, each Idle while
// it found none, at the first `every` after a job the run wrote comes due,
// and every/8 after a turn that made attempts ended (wake), until stop.
func (d *Dispatcher) deliveries(ctx, stop context.Context, every time.Duration, wake <-chan struct{}) {
	st := d.lanes()
	idle := max(1, int(cmp.Or(d.Idle, DefaultIdle)/every)) // in ticks
	t := time.NewTicker(every)
	defer t.Stop()
	read, busy, ticks, last := true, false, 0, time.Time{}
	for stop.Err() == nil {
		if read {
			now := d.now()
			last = time.Now()
			_, found, err := d.deliver(ctx, now, stop.Done(), false)
			if err != nil {
				d.logf("%v", err)
				d.failed(ctx, err)
			}
			busy, ticks = err != nil || found > 0, 0
			st.read(now)
		}
		select {
		case <-stop.Done():
		case <-t.C:
			ticks++
			read = busy || ticks >= idle || st.comingDue(d.now())
		case <-wake:
			select { // at most every every/8
			case <-stop.Done():
			case <-time.After(every/8 - time.Since(last)):
			}
			read = true
		}
	}
}
