package accounts

// This file holds the account events (accounts.md, Events): what a change
// tells the caller's webhooks, decided here and handed to a Sink that
// keeps them until they are delivered.
//
//   - account.credited: a credit, or an adjustment up.
//   - account.low_balance: available crossed below the caller's threshold,
//     once per crossing: the account's Low flag is set by the one writer
//     whose MarkLow changes it (of the changes that cross together, one
//     tells), and cleared, silently, once available is back at or above
//     the threshold, which arms the next crossing.
//
// An event's id is made from the owner and the entry it tells of, so a
// change notified twice (a retry, the reconciler) is one event to its
// receivers: delivered at least once, always with the same id.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// The account event types (accounts.md, Events), beside the order events.
const (
	EventCredited   = "account.credited"
	EventLowBalance = "account.low_balance"
)

// Event is an account event: its body is {"id", "type", "createdAt",
// "data": {"account": <the account as GET /api/account answers it>,
// "entry": <the entry that moved it>}}.
type Event struct {
	ID        string
	Type      string
	CreatedAt time.Time
	Account   Account
	Entry     Entry
}

// Sink keeps account events until they are delivered to the owner's
// webhooks subscribed to their type (signed and retried as order events
// are). Publish must be idempotent by the event's id.
type Sink interface {
	Publish(ctx context.Context, owner string, ev Event) error
}

// IsLow says whether a's available is below its threshold: never when
// either is unset (an unlimited account has no available).
func IsLow(a Account) bool {
	avail := a.Available()
	return avail != nil && a.Threshold != nil && *avail < *a.Threshold
}

// Credited says whether e tells account.credited: a credit or an
// adjustment up.
func Credited(e Entry) bool {
	return e.Type == TypeCredit || e.Type == TypeAdjustment && e.Amount > 0
}

// Notify tells sink what the change a, just applied to owner's account,
// tells the caller: account.credited for a credit or an adjustment up,
// account.low_balance when it took available below the threshold and this
// call is the one that marked the account low. A change that brings
// available back to the threshold or above clears the mark silently. The
// Ledger's changes call it once applied (holds, credits, adjustments);
// a replayed change is notified again with the same event ids. Settings
// changes (a new limit or threshold) call NotifySettings.
func (l *Ledger) Notify(ctx context.Context, owner string, a Applied, sink Sink) error {
	if sink == nil {
		return nil
	}
	if Credited(a.Entry) {
		if err := sink.Publish(ctx, owner, newEvent(owner, EventCredited, a.Account, a.Entry)); err != nil {
			return err
		}
	}
	return l.markLow(ctx, owner, a.Account, a.Entry, sink)
}

// NotifySettings tells sink of account.low_balance when owner's account,
// its limit or threshold just changed to after, is now below its
// threshold and this call marked it low; entry is its newest entry (the
// event's "entry"), nil when it has none.
func (l *Ledger) NotifySettings(ctx context.Context, owner string, after Account, newest *Entry, sink Sink) error {
	if sink == nil {
		return nil
	}
	var e Entry
	if newest != nil {
		e = *newest
	}
	return l.markLow(ctx, owner, after, e, sink)
}

// markLow moves the account's Low flag to what a says, and publishes
// account.low_balance when this call set it. A publish that fails clears
// the flag again, so that the next change that finds the account low
// tells it (the crossing is told late rather than never); only when that
// clearing fails too does the crossing go untold.
func (l *Ledger) markLow(ctx context.Context, owner string, a Account, e Entry, sink Sink) error {
	low := IsLow(a)
	if low == a.Low {
		return nil
	}
	changed, err := l.Store.MarkLow(ctx, owner, low)
	if err != nil || !changed || !low {
		return err
	}
	a.Low = true
	if err := sink.Publish(ctx, owner, newEvent(owner, EventLowBalance, a, e)); err != nil {
		if _, uerr := l.Store.MarkLow(ctx, owner, false); uerr != nil {
			return errors.Join(err, fmt.Errorf("clear the low flag of %s again: %w", owner, uerr))
		}
		return err
	}
	return nil
}

// newEvent returns the event of type typ telling of entry e of owner's
// account a, its id made from them (EventID).
func newEvent(owner, typ string, a Account, e Entry) Event {
	at := e.CreatedAt
	if at.IsZero() {
		at = a.UpdatedAt
	}
	return Event{ID: EventID(owner, typ, a.Seq, e.ID), Type: typ, CreatedAt: at, Account: a, Entry: e}
}

// EventID is the id of the event of type typ about owner's account at seq
// and its entry entryID: "evt_" and 24 characters of [a-z0-9], the first
// a letter (the shape of every event id), the same for the same change.
func EventID(owner, typ string, seq int64, entryID string) string {
	sum := sha256.Sum256([]byte(owner + "\x00" + typ + "\x00" + entryID + "\x00" + big.NewInt(seq).String()))
	s := new(big.Int).SetBytes(sum[:]).Text(36)
	for len(s) < 23 {
		s = "0" + s
	}
	return "evt_" + string(rune('a'+sum[0]%26)) + s[:23]
}
