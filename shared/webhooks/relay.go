package webhooks

// This file holds the relay side of a Dispatcher: the passes that copy the
// events of pending outboxes into one job per subscribed webhook.

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"stampduty/shared/metrics"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// RelayReport says what one Relay pass did.
type RelayReport struct {
	// Jobs is how many jobs it stored (a job that existed is not counted).
	Jobs int
	// Relayed is how many outboxes it emptied of the events it read.
	Relayed int
	// Left is how many outboxes it left for a later pass (a failed put, a
	// version conflict on marking).
	Left int
	// More is set when the sweep of the outboxes has more to read: Run's
	// next pass reads on at once.
	More bool
}

// Relay copies the events of pending outboxes into one job per subscribed,
// enabled webhook, then removes them from their outbox. A pass reads one
// page (Batch outboxes at most) of the Poller's part of the outbox index,
// on from where the Dispatcher's last pass stopped: the passes sweep the
// index to its end, then start again at its beginning, so every outbox
// pending when a sweep starts is relayed within that sweep however many
// arrive meanwhile (no order starves behind newer ones). It removes an
// outbox's events only once every one of their jobs is stored; a job that
// exists already (an earlier pass died before removing) is not put twice;
// an outbox it could not finish (an error, or its order changed meanwhile)
// is left for the next pass, which reads it again. Outboxes are relayed
// relayParallel at once (each order's events in one job write after
// another), and a caller's webhooks are read once per pass.
func (d *Dispatcher) Relay(ctx context.Context) (RelayReport, error) {
	pending, more, err := d.relayRead(ctx)
	if err != nil {
		return RelayReport{}, err
	}
	rep := d.relayPage(ctx, pending, more)
	if err := ctx.Err(); err != nil && rep.Left > 0 {
		return rep, fmt.Errorf("relay: %d outboxes left: %w", rep.Left, err)
	}
	return rep, nil
}

// relayRead reads the next page of the sweep of the outboxes and moves
// the sweep on past it; more is set when the sweep has more to read.
func (d *Dispatcher) relayRead(ctx context.Context) (pending []orders.Stored, more bool, err error) {
	st := d.lanes()
	st.mu.Lock()
	cursor := st.sweep
	st.mu.Unlock()
	pending, next, err := d.Outbox.Pending(ctx, d.Poller, cursor, cmp.Or(d.Batch, DefaultBatch))
	if err != nil { // the next pass reads the same page again
		return nil, false, fmt.Errorf("relay: %w", err)
	}
	st.mu.Lock()
	st.sweep = next
	st.mu.Unlock()
	return pending, next != "", nil
}

// relayPage relays the outboxes of a page the sweep read (see Relay);
// its failures are logged and noted, and left for the next pass.
func (d *Dispatcher) relayPage(ctx context.Context, pending []orders.Stored, more bool) RelayReport {
	rep := RelayReport{More: more}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		sem   = make(chan struct{}, relayParallel)
		hooks = &passHooks{hooks: d.Hooks, sets: map[string]*hookRead{}}
	)
	for _, p := range pending {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			n, err := d.relay(ctx, p, hooks)
			mu.Lock()
			defer mu.Unlock()
			rep.Jobs += n
			if err == nil {
				rep.Relayed++
				return
			}
			rep.Left++
			d.logf("relay order %s of %s: %v (left for the next pass)", p.DocumentID, p.Owner, err)
			d.failed(ctx, err)
		})
	}
	wg.Wait()
	return rep
}

// passHooks reads each caller's webhooks once for a relay pass.
type passHooks struct {
	hooks Hooks
	mu    sync.Mutex
	sets  map[string]*hookRead
}

// hookRead is one read of a caller's webhooks; done is closed when it is.
type hookRead struct {
	done chan struct{}
	set  Set
	err  error
}

// get returns owner's webhooks, read by the first to ask in the pass.
func (p *passHooks) get(ctx context.Context, owner string) ([]Webhook, error) {
	p.mu.Lock()
	r, ok := p.sets[owner]
	if !ok {
		r = &hookRead{done: make(chan struct{})}
		p.sets[owner] = r
	}
	p.mu.Unlock()
	if !ok {
		r.set, r.err = p.hooks.Webhooks(ctx, owner)
		close(r.done)
	}
	<-r.done
	return r.set.Live, r.err
}

// relay relays one outbox.
func (d *Dispatcher) relay(ctx context.Context, p orders.Stored, hooks *passHooks) (int, error) {
	hs, err := hooks.get(ctx, p.Owner)
	if err != nil {
		return 0, err
	}
	st, at := d.lanes(), d.now()
	now, hold := stampduty.FormatTime(at), ""
	if st.holding() {
		hold = stampduty.FormatTime(at.Add(cmp.Or(d.Deliverer.Timeout, Timeout) + leaseMargin))
	}
	stored, relayed := 0, 0
	ids := make([]string, 0, len(p.Outbox))
	held := map[string][]Job{} // by webhook: the jobs put leased to this run
	for i, c := range p.Outbox {
		listened := false
		for _, h := range hs {
			if !h.Subscribed(c.Type) { // enabled and subscribed to the type
				continue
			}
			listened = true
			j := Job{Owner: p.Owner, Webhook: h.DocumentID, Pending: c, Seq: eventSeq(p, c, i), Next: now, Lease: hold}
			put, err := d.Jobs.Put(ctx, j)
			if err != nil {
				return stored, fmt.Errorf("put the job of event %s for webhook %s: %w", c.ID, h.DocumentID, err)
			}
			if put {
				stored++
				if hold != "" {
					st.hold(j, at)
					held[h.DocumentID] = append(held[h.DocumentID], j)
				}
			}
		}
		ids = append(ids, c.ID)
		if listened {
			relayed++
		}
	}
	for webhook, jobs := range held { // Run's delivery starts on them at once
		d.offer(ctx, hookKey{p.Owner, webhook}, jobs)
	}
	if err := d.Outbox.Relayed(ctx, p, ids); err != nil {
		return stored, fmt.Errorf("mark %d events relayed: %w", len(ids), err)
	}
	metrics.Add(ctx, metrics.EventsRelayed, float64(relayed))
	return stored, nil
}
