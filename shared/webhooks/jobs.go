// The webhook workflows' jobs and the stores they work over: a Job is
// the delivery of one event to one webhook; Outbox, Hooks and Jobs are the
// small interfaces the store adapter satisfies.

package webhooks

import (
	"context"
	"fmt"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// The values of Job.Done.
const (
	// JobDue: not delivered yet; another attempt is due at Job.Next.
	JobDue = ""
	// JobDelivered: a receiver answered 2xx.
	JobDelivered = "delivered"
	// JobGaveUp: the last attempt of the schedule failed.
	JobGaveUp = "gave_up"
	// JobDisabled: the webhook was disabled (410 Gone) or deleted.
	JobDisabled = "disabled"
)

// Job is the delivery of one event to one webhook (a DeliveriesTable item
// `job#<eventId>` under `<owner>#<webhook documentId>`).
type Job struct {
	Owner string
	// Webhook is the webhook's documentId.
	Webhook string
	// Pending is the event; its Order is the order right after the change,
	// with its files' keys: addresses are pre-signed when it is sent.
	stampduty.Pending
	// Seq orders the jobs of one webhook: an order's events go out in the
	// order of Seq (see Seq), and an account's (AccountSeq).
	Seq string
	// Body is an account event's body, rendered when it was published
	// (Publisher); nil for an order event, rendered when it is sent.
	Body []byte
	// First is when the first attempt was made, "" until it is.
	First string
	// N is how many attempts were made.
	N int
	// Next is when the next attempt is due (stampduty.TimeLayout), "" when none is.
	Next string
	// Done is JobDue, JobDelivered, JobGaveUp or JobDisabled.
	Done string
	// Lease is until when a run holds the job (stampduty.TimeLayout), ""
	// when none does. Put stores it: a run's relay puts the jobs it will
	// attempt first already leased to itself.
	Lease string
}

// OrderOf returns the order documentId of a Seq.
func OrderOf(seq string) string {
	for i := 0; i < len(seq); i++ {
		if seq[i] == '#' {
			return seq[:i]
		}
	}
	return seq
}

// Seq returns the Seq of the i-th event (from 0) of the outbox of order
// doc read at version v: "<doc>#<v, 10 digits>#<i, 3 digits>". Versions
// only grow and the outbox keeps its events in the order of their changes,
// so the Seqs of an order's jobs sort as its changes happened, also when an
// outbox is relayed in several runs.
func Seq(doc string, v int64, i int) string {
	return fmt.Sprintf("%s#%010d#%03d", doc, v, i)
}

// AttemptDone is an attempt made and its job after it.
type AttemptDone struct {
	Job     Job
	Attempt Attempt
}

// Outbox is where the orders' pending events are (the OrdersTable's
// `outbox` index and items; store.Orders).
type Outbox interface {
	// Pending returns up to limit orders whose outbox is not empty, of
	// poller p's part of them, read on from cursor ("" from the start),
	// and the cursor to read on from next time ("" once p's part was read
	// to its end: the next call starts a new sweep). A sweep returns every
	// order pending when it starts that is still pending when the sweep
	// reaches it; no order is in two pollers' parts.
	Pending(ctx context.Context, p Poller, cursor string, limit int) (ps []orders.Stored, next string, err error)
	// Relayed removes the events ids from o's outbox if the order is still
	// as read (its version and outbox); otherwise it fails with
	// orders.ErrChanged (wrapped): the events stay and are relayed again,
	// which puts no job twice.
	Relayed(ctx context.Context, o orders.Stored, ids []string) error
}

// Hooks keeps each caller's webhooks (the WebhooksTable): one Set per
// caller, changed only as a whole, conditioned on its version.
type Hooks interface {
	// Webhooks returns owner's set (V 0 and no webhooks when none is stored).
	Webhooks(ctx context.Context, owner string) (Set, error)
	// SaveWebhooks stores s as owner's set at version v+1 if the stored one
	// is still at version v (v 0: none stored); otherwise it fails with
	// ErrRaced and stores nothing.
	SaveWebhooks(ctx context.Context, owner string, s Set, v int64) error
}

// Jobs keeps the delivery jobs and attempts of webhooks (the
// DeliveriesTable), filed under their webhook: owner and documentId.
type Jobs interface {
	// Put stores j unless the webhook has a job of j's event already, and
	// reports whether it stored it. A job with Done JobDue is due at Next.
	Put(ctx context.Context, j Job) (bool, error)
	// Job returns the job of event eventID for the webhook, ok false when
	// there is none.
	Job(ctx context.Context, owner, webhook, eventID string) (j Job, ok bool, err error)
	// Redeliver makes the job of event eventID for the webhook due at now,
	// delivered or given up or not; ok is false when there is no such job.
	Redeliver(ctx context.Context, owner, webhook, eventID string, now time.Time) (ok bool, err error)
	// Attempts returns the newest limit attempts of the webhook, newest first.
	Attempts(ctx context.Context, owner, webhook string, limit int) ([]Attempt, error)
	// Due returns up to limit jobs not done whose Next is at or before now,
	// soonest first, of poller p's part of them (no job is in two pollers'
	// parts).
	Due(ctx context.Context, p Poller, now time.Time, limit int) ([]Job, error)
	// Waiting returns the Next of the earliest job of j's webhook and
	// order with a smaller Seq that is not done yet, which j must wait for;
	// "" when there is none.
	Waiting(ctx context.Context, j Job) (string, error)
	// Postpone makes j, still as read (same N, not done), due at next
	// instead; false when it moved on meanwhile.
	Postpone(ctx context.Context, j Job, next string) (bool, error)
	// Lease claims j until until, if it is still as read (same N, not done)
	// and no unexpired lease holds it, or the lease it holds is j.Lease
	// when that is not "" (the caller's own, which it takes again: a run
	// whose relay put the job leased to it); false when another run has
	// it. A lease is the time it runs out, so once another run has taken
	// a job over (after that time) it holds another value.
	Lease(ctx context.Context, j Job, now, until time.Time) (bool, error)
	// Attempted stores the records of attempts, then their jobs after them
	// (N, First, Next, Done), releasing their leases: every record before
	// any job, so that no attempt goes unrecorded.
	Attempted(ctx context.Context, done ...AttemptDone) error
	// Stop marks every job of owner's webhook doc that is not done JobDisabled.
	Stop(ctx context.Context, owner, doc string) error
	// Stepped stores a test order's step job j after a step, releasing
	// its lease: due at j.Next with j.N, or j.Done when j.Next is "".
	Stepped(ctx context.Context, j Job) error
}

// parseTime reads a time in stampduty.TimeLayout.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(stampduty.TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("read time %q: %w", s, err)
	}
	return t, nil
}

// eventSeq returns the Seq of c, the i-th event of outbox p: by the
// version its change was stored at when the store kept it (the events of
// an order of several papers are in several items' outboxes, whose
// versions order them across items), else by p's version and i.
func eventSeq(p orders.Stored, c stampduty.Pending, i int) string {
	if c.Version > 0 {
		return Seq(p.DocumentID, c.Version, 0)
	}
	return Seq(p.DocumentID, p.Version, i)
}
