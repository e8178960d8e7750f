// Package notify moves the events of stored changes to the receivers of the
// webhooks that listen to them (webhooks.md): the relay copies each event
// an order item's outbox holds into one delivery job per subscribed webhook,
// and the dispatcher delivers the due jobs, signed, retried on the schedule
// of shared/webhooks, one at a time per webhook and in order per order. It
// is pure Go over small interfaces (Outbox, Hooks, Jobs, Renderer) that the
// store and files adapters satisfy; it imports no AWS package. The
// scheduled dispatch function runs Dispatcher.Run.
package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"stampduty/shared/rules"
	"stampduty/shared/webhooks"
)

// Snapshot is the order right after a change in the store's own form (the
// outbox's and a job's `o`): notify carries it from the outbox to the jobs
// unchanged and hands it to a Renderer at sending time, so that file URLs
// are pre-signed then and not when the change was made.
type Snapshot any

// Change is one pending event of an order's outbox: what changed, when, and
// the order right after.
type Change struct {
	// ID is the event id (webhooks.NewEventID), the same on every attempt.
	ID string
	// Type is one of the webhooks event types.
	Type string
	// At is when the change was made, in rules.TimeLayout.
	At string
	// Previous and Status are the statuses the change moved between; nil
	// when the event has none.
	Previous, Status *string
	// Order is the order right after the change.
	Order Snapshot
}

// Pending is an order item whose outbox holds events not yet relayed.
type Pending struct {
	Owner string
	// Order is the order's documentId.
	Order string
	// Version is the order item's version `v` when it was read: marking the
	// events relayed is conditioned on it.
	Version int64
	// Changes are the outbox's events, oldest first.
	Changes []Change
}

// The values of Job.Done.
const (
	// Due: not delivered yet; another attempt is due at Job.Next.
	Due = ""
	// Delivered: a receiver answered 2xx.
	Delivered = "delivered"
	// GaveUp: the last attempt of the schedule failed.
	GaveUp = "gave_up"
	// Disabled: the webhook was disabled (410 Gone) or deleted.
	Disabled = "disabled"
)

// Job is the delivery of one event to one webhook (a DeliveriesTable item
// `job#<eventId>` under `<owner>#<webhook documentId>`).
type Job struct {
	Owner string
	// Webhook is the webhook's documentId.
	Webhook string
	Change
	// Seq orders the jobs of one webhook: an order's events go out in the
	// order of Seq (Seq).
	Seq string
	// First is when the first attempt was made, "" until it is.
	First string
	// N is how many attempts were made.
	N int
	// Next is when the next attempt is due (rules.TimeLayout).
	Next string
	// Done is Due, Delivered, GaveUp or Disabled.
	Done string
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

// Outbox is where the orders' pending events are (the OrdersTable's
// `outbox` index and items).
type Outbox interface {
	// Pending returns up to limit order items whose outbox is not empty,
	// oldest pending event first.
	Pending(ctx context.Context, limit int) ([]Pending, error)
	// Relayed removes the events ids from p's outbox if the item's version
	// is still p.Version; a changed version is an error (the events stay
	// and are relayed again, which puts no job twice).
	Relayed(ctx context.Context, p Pending, ids []string) error
}

// Hooks is where the callers' webhooks are (the WebhooksTable).
type Hooks interface {
	// Webhooks returns owner's live webhooks, secrets included.
	Webhooks(ctx context.Context, owner string) ([]webhooks.Webhook, error)
	// Disable turns owner's webhook doc off (a receiver answered 410).
	Disable(ctx context.Context, owner, doc string) error
}

// Jobs is where the delivery jobs and attempts are (the DeliveriesTable).
type Jobs interface {
	// Put stores j unless a job of the same webhook and event exists, and
	// reports whether it stored it.
	Put(ctx context.Context, j Job) (bool, error)
	// Due returns up to limit jobs not done whose Next is at or before now.
	Due(ctx context.Context, now time.Time, limit int) ([]Job, error)
	// Waiting reports whether a job of j's webhook and order with a smaller
	// Seq is not done yet: j must wait for it.
	Waiting(ctx context.Context, j Job) (bool, error)
	// Lease claims j until until, if it is still as read (same N, not done)
	// and no unexpired lease holds it; false when another run has it.
	Lease(ctx context.Context, j Job, now, until time.Time) (bool, error)
	// Attempted stores the record of an attempt and the job after it (N,
	// First, Next, Done), and releases the lease.
	Attempted(ctx context.Context, j Job, a webhooks.Attempt) error
	// Stop marks every job of owner's webhook doc that is not done Disabled.
	Stop(ctx context.Context, owner, doc string) error
}

// Renderer renders an order snapshot as the caller sees it, file URLs
// pre-signed now.
type Renderer interface {
	Render(ctx context.Context, o Snapshot) (json.RawMessage, error)
}

// body returns the JSON of j's event, its order rendered now.
func (d *Dispatcher) body(ctx context.Context, j Job) ([]byte, error) {
	order, err := d.Renderer.Render(ctx, j.Order)
	if err != nil {
		return nil, fmt.Errorf("render the order of event %s: %w", j.ID, err)
	}
	b, err := json.Marshal(webhooks.Event{ID: j.ID, Type: j.Type, CreatedAt: j.At,
		Data: webhooks.EventData{Order: order, PreviousStatus: j.Previous, OrderStatus: j.Status}})
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", j.ID, err)
	}
	return b, nil
}

// parseTime reads a time in rules.TimeLayout.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(rules.TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("read time %q: %w", s, err)
	}
	return t, nil
}
