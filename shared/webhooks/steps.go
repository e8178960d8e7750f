package webhooks

// This file holds the steps of test orders as the dispatcher makes them
// (test-mode.md, "Test orders fulfil themselves"): a test order's step job
// (orders.StepsHook) sits in the due index with the delivery jobs, so the
// reads of due jobs a run makes anyway find it when it is due, and its
// turn steps the order instead of sending anything. While no test order is
// in flight there is no step job: test mode adds no read, no write and no
// invocation to an idle stack.

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// Stepper makes one step of a test order (orders.Fulfiller.Step).
type Stepper interface {
	// Step makes the next step of owner's test order doc and reports
	// whether another follows.
	Step(ctx context.Context, owner, doc string) (more bool, err error)
}

// Steps are a test order's steps as a Dispatcher makes them.
type Steps struct {
	Stepper Stepper
	// Every is how far apart the steps are; 0 means
	// stampduty.DefaultStepEvery.
	Every time.Duration
}

// stepTries is how many times a failing step is tried (after Every, 2×,
// 4×… Every) before its order is left where it is.
const stepTries = 6

// stepLease is how long a run holds a step job: longer than a step of 20
// papers takes.
const stepLease = 30 * time.Second

// step makes the step job j is due for: it leases j, steps the order, and
// stores j due again Every after the step's end when another follows, or
// done. A failed step is tried again after Every, then twice as long each
// time, and given up after stepTries tries (its order stays where it is;
// the log says why).
func (d *Dispatcher) step(ctx context.Context, j Job, t *turn) (DeliverReport, error) {
	var rep DeliverReport
	if d.Steps.Stepper == nil { // a run that does not step leaves them
		rep.Skipped++
		return rep, nil
	}
	start := d.now()
	if !stampduty.IsTestOwner(j.Owner) { // never a live order's: end the job
		d.logf("step job of order %s of %s: not a test order; ended", j.ID, j.Owner)
		j.Lease, j.Next, j.Done = "", "", JobGaveUp
		rep.GaveUp++
		return rep, d.Jobs.Stepped(ctx, j)
	}
	leased, err := d.Jobs.Lease(ctx, j, start, start.Add(stepLease))
	if err != nil || !leased {
		rep.Skipped++
		return rep, err
	}
	t.answered() // the other lanes may step other orders meanwhile
	every := cmp.Or(d.Steps.Every, stampduty.DefaultStepEvery)
	more, serr := d.Steps.Stepper.Step(ctx, j.Owner, j.ID)
	rep.Attempts++
	j.Lease, j.Next = "", ""
	switch {
	case serr != nil:
		j.N++
		if j.N >= stepTries {
			j.Done = JobGaveUp
			rep.GaveUp++
		} else {
			j.Next = stampduty.FormatTime(d.now().Add(every << (j.N - 1)))
			rep.Retried++
		}
		d.logf("step test order %s of %s (try %d): %v", j.ID, j.Owner, j.N, serr)
	case more:
		j.Next = stampduty.FormatTime(d.now().Add(every))
		rep.Delivered++
	default:
		j.Done = JobDelivered
		rep.Delivered++
	}
	if err := d.Jobs.Stepped(ctx, j); err != nil {
		return rep, fmt.Errorf("store the step job of test order %s: %w", j.ID, err)
	}
	if j.Next != "" {
		d.lanes().wrote(j.Next)
	}
	return rep, nil
}

// isStep reports whether k is the step jobs' webhook.
func (k hookKey) isStep() bool { return k.webhook == orders.StepsHook }
