// What a run keeps between its attempts besides its turns: the group
// commit of the attempts that end together, the jobs its relay holds the
// lease of, the fresh read of a caller's webhooks right before each
// attempt, the slots, and the webhooks backing off.

package webhooks

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"stampduty/shared/stampduty"
)

// commit is an attempt waiting for the write of its record and job; the
// write's outcome comes on result.
type commit struct {
	ctx    context.Context // the attempt's: once it ends, the attempt is not written
	done   AttemptDone
	result chan error
}

// Group commit of the attempts' records: an attempt's record and job wait
// up to commitWait for others that end meanwhile, and commitBatch of them
// are written in one Jobs.Attempted (two BatchWriteItems instead of two
// writes each).
const (
	commitWait  = 5 * time.Millisecond
	commitBatch = 25
)

// commit writes done with the attempts that end with it and returns the
// write's outcome.
func (d *Dispatcher) commit(ctx context.Context, done AttemptDone) error {
	st := d.lanes()
	c := commit{ctx: ctx, done: done, result: make(chan error, 1)}
	st.mu.Lock()
	st.commits = append(st.commits, c)
	n := len(st.commits)
	st.mu.Unlock()
	switch {
	case n >= commitBatch:
		go d.flush(ctx)
	case n == 1:
		time.AfterFunc(commitWait, func() { d.flush(ctx) })
	}
	select {
	case err := <-c.result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush writes the attempts waiting. The write outlives the context of the
// attempt that started it (others wait for it), bounded by a delivery's
// timeout.
func (d *Dispatcher) flush(ctx context.Context) {
	st := d.lanes()
	st.mu.Lock()
	batch := st.commits
	st.commits = nil
	st.mu.Unlock()
	var (
		all  []AttemptDone
		live []commit
	)
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil { // its run ended: as if it had died
			c.result <- err
			continue
		}
		all, live = append(all, c.done), append(live, c)
	}
	if len(all) == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(d.Deliverer.Timeout, Timeout))
	defer cancel()
	err := d.Jobs.Attempted(wctx, all...)
	for _, c := range live {
		c.result <- err
	}
}

// holding reports whether the relay puts its jobs leased to this run (in
// Run, whose delivery attempts them).
func (st *lanes) holding() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.held != nil
}

// heldLease is a lease this run's relay took: when, and its Lease.
type heldLease struct {
	at    time.Time
	until string
}

// hold notes that this run holds j's lease since at.
func (st *lanes) hold(j Job, at time.Time) {
	if j.Lease == "" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	k := hookKey{j.Owner, j.Webhook}
	if st.held[k] == nil {
		st.held[k] = map[string]heldLease{}
	}
	st.held[k][j.ID] = heldLease{at: at, until: j.Lease}
}

// holds reports whether this run holds j's lease for a delivery starting
// at now: one its relay took at most leaseMargin ago, before any attempt,
// so that the attempt ends before it does. mine is the lease when the
// relay took it longer ago (a turn whose budget ran out left the job):
// the run claims it again with Jobs.Lease, as its own, rather than wait
// for it to run out (up to 15 s of a backlog's drain). Both are forgotten
// once asked.
func (st *lanes) holds(j Job, now time.Time) (ok bool, mine string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	k := hookKey{j.Owner, j.Webhook}
	h, held := st.held[k][j.ID]
	delete(st.held[k], j.ID)
	if len(st.held[k]) == 0 {
		delete(st.held, k)
	}
	if !held || j.N != 0 {
		return false, ""
	}
	if now.Sub(h.at) < leaseMargin {
		return true, ""
	}
	return false, h.until
}

// ownerReads are the reads of one caller's webhooks: the one being made,
// and the next, which the attempts that asked meanwhile wait for.
type ownerReads struct{ inflight, next *freshRead }

// freshRead is one read of a caller's webhooks; done is closed when it is over.
type freshRead struct {
	done chan struct{}
	set  Set
	err  error
}

// current returns owner's webhook doc as a read of the webhooks that
// started after the call did (nil when it is not live): consistent, so a
// deletion or a 410's disabling answered before the call is seen. Calls
// made while a read is under way share the next read, so the attempts of
// a caller that start together cost one read.
func (d *Dispatcher) current(ctx context.Context, owner, doc string) (*Webhook, error) {
	st := d.lanes()
	st.mu.Lock()
	o := st.reads[owner]
	if o == nil {
		o = &ownerReads{}
		st.reads[owner] = o
	}
	r := o.next
	if r == nil {
		r = &freshRead{done: make(chan struct{})}
		o.next = r
	}
	if o.inflight == nil {
		d.startRead(ctx, owner, o)
	}
	st.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.err != nil {
		return nil, fmt.Errorf("read the webhooks of %s: %w", owner, r.err)
	}
	for _, w := range r.set.Live {
		if w.DocumentID == doc {
			return &w, nil
		}
	}
	return nil, nil
}

// startRead starts o's next read; d's lanes' lock is held. The read
// outlives the context of the attempt that started it (others wait for
// it), bounded by the delivery timeout.
func (d *Dispatcher) startRead(ctx context.Context, owner string, o *ownerReads) {
	r := o.next
	o.inflight, o.next = r, nil
	go func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(d.Deliverer.Timeout, Timeout))
		defer cancel()
		set, err := d.Hooks.Webhooks(rctx, owner)
		st := d.lanes()
		st.mu.Lock()
		defer st.mu.Unlock()
		r.set, r.err = set, err
		close(r.done)
		o.inflight = nil
		if o.next != nil {
			d.startRead(ctx, owner, o)
		}
	}()
}

// acquire takes a slot of t's attempts under way, then one of owner's per
// slots, then one of the run's: an attempt holds them until its receiver
// has answered. release gives them back.
func (st *lanes) acquire(ctx context.Context, t *turn, owner string, per int) (release func(), err error) {
	return take(ctx, t.sending, st.slots(st.callers, owner, per), st.all)
}

// acquireWrite takes one of owner's per × recordDepth slots for the
// write of an attempt's record, then one of the run's.
func (st *lanes) acquireWrite(ctx context.Context, owner string, per int) (release func(), err error) {
	return take(ctx, st.slots(st.writers, owner, per*recordDepth), st.writing)
}

// slots returns owner's slots in m, n of them, made on first use.
func (st *lanes) slots(m map[string]chan struct{}, owner string, n int) chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	c, ok := m[owner]
	if !ok {
		c = make(chan struct{}, n)
		m[owner] = c
	}
	return c
}

// take takes a slot of each of cs in turn, giving back those it took when
// ctx ends first; release gives them all back.
func take(ctx context.Context, cs ...chan struct{}) (release func(), err error) {
	for i, c := range cs {
		select {
		case c <- struct{}{}:
		case <-ctx.Done():
			for _, t := range cs[:i] {
				<-t
			}
			return nil, ctx.Err()
		}
	}
	return func() {
		for _, c := range cs {
			<-c
		}
	}, nil
}

// backOff rests webhook k until until.
func (st *lanes) backOff(k hookKey, until time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if until.After(st.rest[k]) {
		st.rest[k] = until
	}
}

// restingLocked returns until when webhook k rests, ok false when it does
// not at now (the lanes' lock is held).
func (st *lanes) restingLocked(k hookKey, now time.Time) (until time.Time, ok bool) {
	until, ok = st.rest[k]
	if ok && !now.Before(until) {
		delete(st.rest, k)
		return time.Time{}, false
	}
	return until, ok
}

// wrote notes that the run made a job due at next (a retry, a
// postponement), so that Run reads the due jobs once it is (outside Run,
// nothing is noted).
func (st *lanes) wrote(next string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.wake != nil {
		st.coming = append(st.coming, next)
	}
}

// read notes that the due jobs were read at now: what the run wrote due
// by then was among them.
func (st *lanes) read(now time.Time) {
	at := stampduty.FormatTime(now)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.coming = slices.DeleteFunc(st.coming, func(next string) bool { return next <= at })
}

// comingDue reports whether a job the run wrote is due at now and was not
// due at the last read.
func (st *lanes) comingDue(now time.Time) bool {
	at := stampduty.FormatTime(now)
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.ContainsFunc(st.coming, func(next string) bool { return next <= at })
}
