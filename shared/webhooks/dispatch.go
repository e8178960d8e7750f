package webhooks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// Defaults of a Dispatcher.
const (
	// DefaultParallel is how many webhooks are delivered to at once.
	DefaultParallel = 8
	// DefaultBatch is how many outboxes or due jobs one pass reads.
	DefaultBatch = 100
	// leaseMargin is how much longer than a delivery's timeout a lease lasts.
	leaseMargin = 5 * time.Second
)

// Dispatcher relays outboxes into jobs and delivers due jobs.
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
	// Parallel bounds the webhooks delivered to at once; 0 means DefaultParallel.
	Parallel int
	// Batch bounds what one pass reads; 0 means DefaultBatch.
	Batch int
	// Log receives a line per failure that a later pass retries; nil discards.
	Log io.Writer
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

// RelayReport says what one Relay pass did.
type RelayReport struct {
	// Jobs is how many jobs it stored (a job that existed is not counted).
	Jobs int
	// Relayed is how many outboxes it emptied of the events it read.
	Relayed int
	// Left is how many outboxes it left for a later pass (a failed put, a
	// version conflict on marking).
	Left int
}

// Relay copies the events of pending outboxes into one job per subscribed,
// enabled webhook, then removes them from their outbox. It removes an
// outbox's events only once every one of their jobs is stored; a job that
// exists already (an earlier pass died before removing) is not put twice;
// an outbox it could not finish (an error, or its order changed meanwhile)
// is left for the next pass, which reads it again.
func (d *Dispatcher) Relay(ctx context.Context) (RelayReport, error) {
	var rep RelayReport
	pending, err := d.Outbox.Pending(ctx, cmp.Or(d.Batch, DefaultBatch))
	if err != nil {
		return rep, fmt.Errorf("relay: %w", err)
	}
	hooks := map[string][]Webhook{}
	var errs []error
	for _, p := range pending {
		n, err := d.relay(ctx, p, hooks)
		rep.Jobs += n
		if err != nil {
			rep.Left++
			d.logf("relay order %s of %s: %v (left for the next pass)", p.DocumentID, p.Owner, err)
			if ctx.Err() != nil {
				errs = append(errs, err)
				break
			}
			continue
		}
		rep.Relayed++
	}
	return rep, errors.Join(errs...)
}

// relay relays one outbox, reading its owner's webhooks once per pass.
func (d *Dispatcher) relay(ctx context.Context, p orders.Stored, hooks map[string][]Webhook) (int, error) {
	hs, ok := hooks[p.Owner]
	if !ok {
		s, err := d.Hooks.Webhooks(ctx, p.Owner)
		if err != nil {
			return 0, err
		}
		hs = s.Live
		hooks[p.Owner] = hs
	}
	now := stampduty.FormatTime(d.now())
	stored := 0
	ids := make([]string, 0, len(p.Outbox))
	for i, c := range p.Outbox {
		for _, h := range hs {
			if !h.Subscribed(c.Type) { // enabled and subscribed to the type
				continue
			}
			put, err := d.Jobs.Put(ctx, Job{Owner: p.Owner, Webhook: h.DocumentID, Pending: c,
				Seq: Seq(p.DocumentID, p.Version, i), Next: now})
			if err != nil {
				return stored, fmt.Errorf("put the job of event %s for webhook %s: %w", c.ID, h.DocumentID, err)
			}
			if put {
				stored++
			}
		}
		ids = append(ids, c.ID)
	}
	if err := d.Outbox.Relayed(ctx, p, ids); err != nil {
		return stored, fmt.Errorf("mark %d events relayed: %w", len(ids), err)
	}
	return stored, nil
}

// DeliverReport says what one Deliver pass did.
type DeliverReport struct {
	// Attempts is how many attempts it made.
	Attempts int
	// Delivered, Retried, GaveUp and Disabled count the attempts by outcome.
	Delivered, Retried, GaveUp, Disabled int
	// Skipped counts due jobs it left: waiting on an earlier job of their
	// order, leased by another run, or stopped with their webhook.
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

// Deliver attempts the due jobs: a webhook's jobs one at a time in Seq
// order, up to Parallel webhooks at once. A job whose order has an earlier
// job for the same webhook not done yet waits for it; a job another run has
// leased is left to it. Each attempt is recorded, then the job is delivered,
// rescheduled (NextAttempt from the first attempt), given up after
// the last attempt, or, on 410 Gone, the webhook is disabled and its jobs
// stopped.
func (d *Dispatcher) Deliver(ctx context.Context) (DeliverReport, error) {
	var rep DeliverReport
	due, err := d.Jobs.Due(ctx, d.now(), cmp.Or(d.Batch, DefaultBatch))
	if err != nil {
		return rep, fmt.Errorf("deliver: %w", err)
	}
	type key struct{ owner, webhook string }
	groups := map[key][]Job{}
	var order []key
	for _, j := range due {
		k := key{j.Owner, j.Webhook}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], j)
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		sem  = make(chan struct{}, cmp.Or(d.Parallel, DefaultParallel))
	)
	for _, k := range order {
		jobs := groups[k]
		sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Seq < jobs[b].Seq })
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return rep, errors.Join(append(errs, ctx.Err())...)
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := d.deliverWebhook(ctx, k.owner, k.webhook, jobs)
			mu.Lock()
			defer mu.Unlock()
			rep.add(r)
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	return rep, errors.Join(errs...)
}

// deliverWebhook attempts one webhook's due jobs, in Seq order.
func (d *Dispatcher) deliverWebhook(ctx context.Context, owner, doc string, jobs []Job) (DeliverReport, error) {
	var rep DeliverReport
	s, err := d.Hooks.Webhooks(ctx, owner)
	if err != nil {
		return rep, fmt.Errorf("deliver to webhook %s: %w", doc, err)
	}
	var hook *Webhook
	for i := range s.Live {
		if s.Live[i].DocumentID == doc {
			hook = &s.Live[i]
		}
	}
	if hook == nil || !hook.Enabled {
		// Deleted or disabled since the jobs were put: nothing more goes out.
		rep.Skipped += len(jobs)
		if err := d.Jobs.Stop(ctx, owner, doc); err != nil {
			return rep, fmt.Errorf("stop the jobs of webhook %s: %w", doc, err)
		}
		return rep, nil
	}
	var errs []error
	for i, j := range jobs {
		if ctx.Err() != nil {
			return rep, errors.Join(append(errs, ctx.Err())...)
		}
		r, err := d.attempt(ctx, *hook, j)
		rep.add(r)
		if err != nil {
			errs = append(errs, err)
			d.logf("deliver event %s to webhook %s: %v", j.ID, doc, err)
		}
		if r.Disabled > 0 {
			rep.Skipped += len(jobs) - i - 1
			break
		}
	}
	return rep, errors.Join(errs...)
}

// attempt makes one attempt of job j to webhook h, if j is not waiting on
// an earlier job of its order and this run gets its lease.
func (d *Dispatcher) attempt(ctx context.Context, h Webhook, j Job) (DeliverReport, error) {
	var rep DeliverReport
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
	timeout := cmp.Or(d.Deliverer.Timeout, Timeout)
	start := d.now()
	leased, err := d.Jobs.Lease(ctx, j, start, start.Add(timeout+leaseMargin))
	if err != nil {
		return rep, err
	}
	if !leased {
		rep.Skipped++
		return rep, nil
	}
	body, err := d.body(ctx, j)
	if err != nil {
		return rep, err // the lease runs out and a later pass tries again
	}
	res := d.Deliverer.Deliver(ctx, h.URL, h.Secret, j.ID, body)
	first := start
	if j.First != "" {
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
	}
	if err := d.Jobs.Attempted(ctx, j, rec); err != nil {
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

// Run relays then delivers every `every`, and starts no pass later than
// `until` before ctx's deadline (or until ctx ends, when it has none): the
// loop of the scheduled dispatch function, whose run starts every minute, so
// that an event's first attempt is made within about `every` of its change.
// A pass runs under ctx, so `until` must leave room for a delivery's
// timeout. A pass's errors are logged and the next pass tries again; Run
// returns ctx's error only when ctx ends.
func (d *Dispatcher) Run(ctx context.Context, every, until time.Duration) error {
	stop := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		stop, cancel = context.WithDeadline(ctx, deadline.Add(-until))
		defer cancel()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := d.Relay(ctx); err != nil {
			d.logf("%v", err)
		}
		if _, err := d.Deliver(ctx); err != nil {
			d.logf("%v", err)
		}
		select {
		case <-stop.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("dispatch: %w", ctx.Err())
			}
			return nil
		case <-t.C:
		}
	}
}

// disable turns owner's webhook doc off (its receiver answered 410 Gone);
// a webhook deleted or disabled meanwhile is left as it is.
func disable(ctx context.Context, hooks Hooks, owner, doc string) error {
	return update(ctx, hooks, owner, func(s Set, _ bool) (Set, bool, error) {
		i := slices.IndexFunc(s.Live, func(w Webhook) bool { return w.DocumentID == doc })
		if i < 0 || !s.Live[i].Enabled {
			return s, true, nil
		}
		s.Live = slices.Clone(s.Live)
		s.Live[i].Enabled = false
		return s, false, nil
	})
}

// body returns the JSON of j's event, its order as its caller sees it with
// download addresses signed now.
func (d *Dispatcher) body(ctx context.Context, j Job) ([]byte, error) {
	o, err := orders.ForCaller(ctx, d.Files, j.Order)
	if err != nil {
		return nil, fmt.Errorf("render the order of event %s: %w", j.ID, err)
	}
	order, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode the order of event %s: %w", j.ID, err)
	}
	b, err := json.Marshal(NewEvent(j.Pending, order))
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", j.ID, err)
	}
	return b, nil
}
