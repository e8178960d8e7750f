package webhooks

// This file holds one delivery attempt: the checks before it (the order's
// earlier jobs, a slot, the lease, the webhook read again), the body in the
// webhook's format, and the record of what the receiver answered.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"stampduty/shared/metrics"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// firstOfOrder reports whether seq is the first event its order ever
// recorded (the outbox's first at version 1): no job of its order can come
// before it, so it need not look for one.
func firstOfOrder(seq string) bool { return strings.HasSuffix(seq, "#0000000001#000") }

// attempt makes one attempt of job j to webhook k, if j is not waiting on
// an earlier job of its order, a slot is free for it, this run gets its
// lease, and the webhook, read again right before the attempt, is still
// live and enabled; the body is rendered then, in that webhook's format.
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
				d.lanes().wrote(behind)
			}
			return rep, nil
		}
	}
	st := d.lanes()
	slots, err := st.acquire(ctx, t, k.owner, cmp.Or(d.PerCaller, DefaultPerCaller))
	if err != nil {
		return rep, err
	}
	release := sync.OnceFunc(slots)
	defer release()
	timeout := cmp.Or(d.Deliverer.Timeout, Timeout)
	start := d.now()
	leased, mine := st.holds(j, start) // put leased to this run by its relay: the attempt ends before the lease
	if !leased {
		j.Lease = mine // "" but for a lease this run's relay took: the claim takes it again
		if leased, err = d.Jobs.Lease(ctx, j, start, start.Add(timeout+leaseMargin)); err != nil {
			return rep, err
		}
	}
	if !leased {
		rep.Skipped++
		return rep, nil
	}
	h, err := d.current(ctx, k.owner, k.webhook)
	if err != nil {
		return rep, err // the lease runs out and a later pass tries again
	}
	if h == nil || !h.Enabled {
		// Deleted or disabled since the job was put: nothing more goes out.
		t.ended.Store(true)
		rep.Skipped++
		t.halt.Do(func() { err = d.Jobs.Stop(ctx, k.owner, k.webhook) })
		if err != nil {
			return rep, fmt.Errorf("stop the jobs of webhook %s: %w", k.webhook, err)
		}
		return rep, nil
	}
	body, err := d.body(ctx, j, h.Format)
	if err != nil {
		return rep, err // the lease runs out and a later pass tries again
	}
	res := d.Deliverer.Deliver(ctx, *h, j.ID, body)
	// The receiver has answered: the slots go to the next attempt while
	// this lane writes the record (the write is bounded by acquireWrite).
	release()
	if ctx.Err() == nil { // an attempt cut by the run's own end is neither counted nor recorded
		countAttempt(ctx, res)
	}
	if res.Status != 0 && res.Status != http.StatusGone {
		t.answered()
		st.mu.Lock()
		d.grow(ctx, t) // the other lanes start now, not once this record is written
		st.mu.Unlock()
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
	j.Lease = "" // the record releases it: a redelivery need not wait for it
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
	wrote, err := d.lanes().acquireWrite(ctx, j.Owner, cmp.Or(d.PerCaller, DefaultPerCaller))
	if err != nil {
		return rep, fmt.Errorf("record attempt %d: %w", j.N, err)
	}
	err = d.commit(ctx, AttemptDone{Job: j, Attempt: rec})
	wrote()
	if err != nil {
		return rep, fmt.Errorf("record attempt %d: %w", j.N, err)
	}
	// One line per attempt recorded, for a webhook's delivery history in
	// the logs (the README's Logs Insights queries): ids, the status and
	// the outcome; never the address, the body, the signature or the
	// receiver's answer.
	d.logf("attempt webhook=%s event=%s order=%s caller=%s type=%s n=%d status=%d outcome=%s ms=%d",
		j.Webhook, j.ID, cmp.Or(j.Order.DocumentID, OrderOf(j.Seq)), j.Owner, j.Type, j.N, res.Status, outcome, rec.DurationMS)
	if outcome == GiveUp {
		metrics.Add(ctx, metrics.EventsGivenUp, 1)
	}
	if j.Next != "" {
		d.lanes().wrote(j.Next)
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

// body returns the JSON of j's event in format (a Webhook's Format): an
// account event's Body as published; an order event's with its
// order as its caller sees it with download addresses signed now: the
// Event for FormatStampduty (or ""), originalBody for FormatOriginal.
func (d *Dispatcher) body(ctx context.Context, j Job, format string) ([]byte, error) {
	if j.Body != nil { // an account event, rendered whole when published
		if format == FormatOriginal {
			return nil, fmt.Errorf("event %s: an account event has no original format", j.ID)
		}
		return j.Body, nil
	}
	o, err := orders.ForCaller(ctx, d.Files, j.Order)
	if err != nil {
		return nil, fmt.Errorf("render the order of event %s: %w", j.ID, err)
	}
	if format == FormatOriginal {
		return originalBody(j.ID, o, j.Fulfillment)
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
