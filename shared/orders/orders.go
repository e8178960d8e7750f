// Package orders holds the order workflows: what happens, step by step, when
// a caller creates an order. It uses the rules of package stampduty and the
// stores it is given through the small interfaces below (DynamoDB's in the
// functions, fakes in tests), and knows nothing of HTTP or AWS.
package orders

import (
	"context"
	"errors"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// Articles finds the article of a (purpose, state), or an ENOTFOUND error.
type Articles interface {
	Get(ctx context.Context, purpose, state string) (stampduty.Article, error)
}

// IDs hands out unique integer ids: Reserve returns the first of n new ones.
type IDs interface {
	Reserve(ctx context.Context, n int64) (int64, error)
}

// NewIdentity returns the two identities of a new record (a file, a
// webhook): an id reserved from ids and a new documentId.
func NewIdentity(ctx context.Context, ids IDs) (int64, string, error) {
	id, err := ids.Reserve(ctx, 1)
	if err != nil {
		return 0, "", err
	}
	doc, err := stampduty.NewDocumentID()
	if err != nil {
		return 0, "", stampduty.Internal(err)
	}
	return id, doc, nil
}

// Store keeps orders.
type Store interface {
	// Reserve returns the seq owner's next order is to be stored at, taken
	// for it alone: concurrent creates of one caller never wait for each
	// other.
	Reserve(ctx context.Context, owner string) (int64, error)
	// Put stores o as owner's order number seq (from Reserve), with events
	// as its pending events (its outbox) in the same write, at most once
	// whatever the network does, and returns the seq it stored it at. A
	// seq that ends up holding no order is voided, so the list skips it. An
	// error that may hide a stored order wraps ErrOutcomeUnknown.
	Put(ctx context.Context, owner string, seq int64, o stampduty.Order, events ...stampduty.Pending) (int64, error)
	// Void marks owner's seq as holding no order, unless an order is
	// stored there (voided false): a create that reserved it and then
	// stores nothing (its hold refused) gives it up at once.
	Void(ctx context.Context, owner string, seq int64) (voided bool, err error)
	// Find returns the documentId of owner's order that doc names
	// (stampduty.SameOrderID) when it was created at or after since.
	Find(ctx context.Context, owner, doc string, since time.Time) (string, bool, error)
}

// Payments is what the order path does to its caller's account
// (accounts.md): hold an order's total when it is created, charge a paper
// when it reaches Procured, release what is still held when it is
// cancelled. *accounts.Ledger is one.
type Payments interface {
	// Hold holds o's total_amount on owner's account, or refuses the
	// create (EPAYMENT) when it does not fit.
	Hold(ctx context.Context, owner string, o stampduty.Order) (accounts.Applied, error)
	// Unhold releases the hold of o, which was certainly not stored.
	Unhold(ctx context.Context, owner string, o stampduty.Order) error
	// Charge charges paper ffDoc of o, which reached Procured, by by.
	Charge(ctx context.Context, owner string, o stampduty.Order, ffDoc, by string) error
	// Release releases what is still held for o, cancelled by by.
	Release(ctx context.Context, owner string, o stampduty.Order, by string) error
	// Account returns owner's account as it stands (a batch's dry run).
	Account(ctx context.Context, owner string) (accounts.Account, error)
}

// Listeners tells whether a caller listens to an event type: whether it
// has an enabled webhook subscribed to it.
type Listeners interface {
	Listens(ctx context.Context, owner, typ string) (bool, error)
}

// record returns the event of a change that l says owner listens to, or
// none: an event no webhook listens to could never be delivered, asked
// again (a redelivery needs a job of it) or seen, so it is not written. A
// nil l records every event. The check is read just before the change's
// write, so a webhook registered before a change starts gets its event; one
// registered while the change is being made may or may not.
func record(ctx context.Context, l Listeners, owner, typ string, ev func() (stampduty.Pending, error)) ([]stampduty.Pending, error) {
	if listens, err := listens(ctx, l, owner, typ); err != nil || !listens {
		return nil, err
	}
	p, err := ev()
	if err != nil {
		return nil, stampduty.Internal(err)
	}
	return []stampduty.Pending{p}, nil
}

// listens reports whether l says owner listens to typ; a nil l listens to
// everything.
func listens(ctx context.Context, l Listeners, owner, typ string) (bool, error) {
	if l == nil {
		return true, nil
	}
	return l.Listens(ctx, owner, typ)
}

// ErrOutcomeUnknown marks the failure of a write that may nevertheless have
// been applied: the request may have reached the store before the
// connection or the time ran out. errors.Is finds it in a store's errors.
var ErrOutcomeUnknown = errors.New("the write may have been applied")

// Keys keeps the Idempotency-Key records of callers.
type Keys interface {
	// Claim records that a request (body fingerprint fp, order orderID)
	// holds the key, unless a live record exists; it returns the record
	// now standing and whether this call made it.
	Claim(ctx context.Context, owner, key, fp, orderID string, now time.Time, lease, ttl time.Duration) (KeyRecord, bool, error)
	// Get returns the live record of the key; ok is false when there is none.
	Get(ctx context.Context, owner, key string, now time.Time) (rec KeyRecord, ok bool, err error)
	// Complete marks the key's order, orderID, as created.
	Complete(ctx context.Context, owner, key, orderID string) error
	// Release drops a pending claim of orderID, so a retry can go ahead.
	Release(ctx context.Context, owner, key, orderID string) error
	// TakeOver gives a pending claim whose lease ran out to the caller;
	// ok is false when another request took it first.
	TakeOver(ctx context.Context, owner, key string, rec KeyRecord, now time.Time, lease time.Duration) (ok bool, err error)
}

// The states of a KeyRecord.
const (
	// KeyPending: a request holds the key and is creating its order.
	KeyPending = "pending"
	// KeyDone: the order was created; replays answer with it.
	KeyDone = "done"
)

// KeyRecord is what an Idempotency-Key stands for.
type KeyRecord struct {
	// Fingerprint identifies the request body the key was first used with.
	Fingerprint string
	State       string
	// OrderID is the documentId of the key's order: while pending, the one
	// chosen before it is created, which the stored order's shares its
	// random part with (stampduty.SameOrderID); once done, the stored one.
	OrderID string
	// Claimed is when the request holding the key claimed it.
	Claimed time.Time
	// Lease is when a pending claim may be taken over: its holder is gone by then.
	Lease time.Time
	// Expires is when the record stops counting.
	Expires time.Time
}
