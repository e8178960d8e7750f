package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"stampduty/shared/stampduty"
)

// Change is one entry to append to an account's ledger: the Entry without
// its Seq, after-values and totals, which the store fills in as it applies
// it, and the conditions it is applied on.
type Change struct {
	Entry Entry
	// Guard refuses the change (ErrNoRoom) when the account has a limit and
	// the change would leave available below zero: holds and adjustments
	// down (accounts.md's invariant). Charges and releases never lower
	// available, credits raise it.
	Guard bool
	// IfSeq, when not nil, applies the change only while the account's
	// newest entry is *IfSeq (ErrChanged otherwise): the staff's changes,
	// read and checked first, are applied on what they read.
	IfSeq *int64
}

// Applied is the outcome of a change: the entry as written and the account
// right after it. Replayed says the entry had been applied already (a
// retry, a replay) and nothing more was written.
type Applied struct {
	Entry    Entry
	Account  Account
	Replayed bool
}

// The store's refusals.
var (
	// ErrNoRoom: a guarded change did not fit; the error wraps it in a
	// *NoRoomError carrying the account as it stood.
	ErrNoRoom = errors.New("the account cannot cover the change")
	// ErrChanged: the account changed since IfSeq was read.
	ErrChanged = errors.New("the account changed since it was read")
	// ErrNotOpened: the account must be opened (Open) before the change:
	// a test principal's, which starts with its opening test credit.
	ErrNotOpened = errors.New("the account is not opened")
)

// NoRoomError is a guarded change refused for want of room: Account is the
// account as it stood when the change was refused.
type NoRoomError struct{ Account Account }

func (e *NoRoomError) Error() string { return ErrNoRoom.Error() }

// Unwrap makes errors.Is(err, ErrNoRoom) true.
func (e *NoRoomError) Unwrap() error { return ErrNoRoom }

// Store keeps accounts and their ledgers. Each change moves the account and
// writes its entry once per entry id, whatever the network does; the
// account and its entries agree at every moment a reader can see (the
// adapter's table design says how without transactions).
type Store interface {
	// Account returns owner's account; one never stored reads with its
	// defaults (unlimited, nothing held) and Opened false.
	Account(ctx context.Context, owner string) (Account, error)
	// Apply appends ch to owner's ledger and returns the entry and the
	// account after it; ErrNoRoom (a *NoRoomError), ErrChanged or
	// ErrNotOpened when it is refused. An entry whose id the account
	// already holds is not applied again: its Applied says Replayed.
	Apply(ctx context.Context, owner string, ch Change) (Applied, error)
	// Open stores owner's account as a is (limit and threshold) with its
	// opening entry when not nil, unless it is stored already; it returns
	// the account as it then stands.
	Open(ctx context.Context, owner string, a Account, opening *Entry) (Account, error)
	// Configure sets owner's limit and threshold on condition that its
	// newest entry is still seq (ErrChanged otherwise), and records low.
	Configure(ctx context.Context, owner string, seq int64, limit, threshold *Money, low bool, at time.Time) (Account, error)
	// MarkLow sets the account's Low flag to low unless it is so already;
	// changed says this call changed it (the one that tells the caller).
	MarkLow(ctx context.Context, owner string, low bool) (changed bool, err error)
}

// Ledger is the accounts workflow: the money on the order path (hold,
// charge, release), the staff's changes and the caller's reads.
type Ledger struct {
	Store Store
	// DefaultLimit is the stack's DefaultCreditLimit for callers created
	// from now on; nil is unlimited.
	DefaultLimit *Money
	Now          func() time.Time
	// Events receives the account events the changes tell (events.go,
	// Notify); nil tells nothing, and costs the changes nothing.
	Events Sink
}

func (l *Ledger) now() time.Time {
	if l.Now == nil {
		return time.Now()
	}
	return l.Now()
}

// TestOpening is a test principal's opening test credit (test-mode.md,
// accounts.md): ₹1,00,00,000.00, its limit 0.
const TestOpening = Money(10_000_000_00)

// opening returns the account owner starts with when a change finds it
// not opened, and its opening entry: a test principal's opening credit.
func (l *Ledger) opening(owner string) (Account, *Entry) {
	zero := Money(0)
	a := Account{Owner: owner, Limit: &zero}
	e := &Entry{ID: OpeningID, Type: TypeCredit, Amount: TestOpening, Reference: "opening", Note: "Opening test credit", By: BySystem, CreatedAt: l.now()}
	return a, e
}

// apply applies ch to owner's ledger, opening a test principal's account
// first when it is not (its opening credit).
func (l *Ledger) apply(ctx context.Context, owner string, ch Change) (Applied, error) {
	a, err := l.Store.Apply(ctx, owner, ch)
	if errors.Is(err, ErrNotOpened) {
		acct, opening := l.opening(owner)
		if _, err = l.Store.Open(ctx, owner, acct, opening); err != nil {
			return Applied{}, err
		}
		a, err = l.Store.Apply(ctx, owner, ch)
	}
	return a, err
}

// MustOpen says whether owner's account must be opened before its first
// change: a test principal's, which starts with its opening credit.
func MustOpen(owner string) bool { return stampduty.IsTestOwner(owner) }

// Paying says whether order o takes part in its caller's ledger: orders
// made before accounts existed hold nothing, and no entry names them.
func Paying(o stampduty.Order) bool { return o.Held }

// Hold reserves order o's total_amount on owner's account, by by (caller
// or system): the hold made with an order's create. When the account has a
// limit and available is below the total, it is EPAYMENT with the
// contract's message and details, and nothing is written.
func (l *Ledger) Hold(ctx context.Context, owner string, o stampduty.Order) (Applied, error) {
	ch := Change{Guard: true, Entry: Entry{
		ID: HoldID(o.DocumentID), Type: TypeHold, Amount: Rupees(o.StampDuty.TotalAmount),
		Order: o.DocumentID, By: ByCaller, CreatedAt: l.now(),
	}}
	a, err := l.apply(ctx, owner, ch)
	var nr *NoRoomError
	if errors.As(err, &nr) {
		return Applied{}, PaymentRequired(ch.Entry.Amount, nr.Account)
	}
	if err == nil && l.Events != nil {
		// The hold is made: a failure to tell of it does not undo it (the
		// flag is cleared again, so the next change that finds the account
		// low tells it: markLow).
		_ = l.Notify(ctx, owner, a, l.Events)
	}
	return a, err
}

// ensureOpen returns owner's account, opening a test principal's first
// (its opening test credit), as a change on it would: staff changes,
// settings and test credits are written on an opened account. A caller's
// live account never stored reads with its defaults (Configure stores it).
func (l *Ledger) ensureOpen(ctx context.Context, owner string) (Account, error) {
	a, err := l.Store.Account(ctx, owner)
	if err != nil || a.Opened || !MustOpen(owner) {
		return a, err
	}
	acct, opening := l.opening(owner)
	return l.Store.Open(ctx, owner, acct, opening)
}

// PaymentRequired is the 402 of an order needing needed on account a
// (accounts.md: its message and details).
func PaymentRequired(needed Money, a Account) error {
	avail := Money(0)
	if v := a.Available(); v != nil {
		avail = *v
	}
	msg := fmt.Sprintf("The order needs %s and %s is available. Top up the account or ask for a higher credit limit.", needed.Indian(), avail.Indian())
	return &stampduty.Error{Code: stampduty.EPAYMENT, Message: msg,
		Shortfall: &stampduty.Shortfall{Needed: needed.String(), Available: avail.String()}}
}

// Charge charges paper ffDoc of owner's order o (which reached Procured)
// by who (operator or system), when o takes part in the ledger.
func (l *Ledger) Charge(ctx context.Context, owner string, o stampduty.Order, ffDoc, by string) error {
	if !Paying(o) {
		return nil
	}
	_, err := l.apply(ctx, owner, Change{Entry: Entry{
		ID: ChargeID(ffDoc), Type: TypeCharge, Amount: Rupees(o.StampDuty.Amount),
		Order: o.DocumentID, Fulfillment: ffDoc, By: by, CreatedAt: l.now(),
	}})
	return err
}

// Release releases what is still held for owner's cancelled order o, by
// who (caller or operator), when o takes part in the ledger.
func (l *Ledger) Release(ctx context.Context, owner string, o stampduty.Order, by string) error {
	if !Paying(o) {
		return nil
	}
	p := o.PaymentNow()
	amount := Rupees(o.StampDuty.TotalAmount) - Money(p.ChargedPaise)
	if amount <= 0 {
		return nil
	}
	_, err := l.apply(ctx, owner, Change{Entry: Entry{
		ID: ReleaseID(o.DocumentID), Type: TypeRelease, Amount: amount,
		Order: o.DocumentID, By: by, CreatedAt: l.now(),
	}})
	return err
}

// Unhold releases the hold of an order whose create stored nothing (its
// write certainly failed), by the system.
func (l *Ledger) Unhold(ctx context.Context, owner string, o stampduty.Order) error {
	_, err := l.apply(ctx, owner, Change{Entry: Entry{
		ID: ReleaseID(o.DocumentID), Type: TypeRelease, Amount: Rupees(o.StampDuty.TotalAmount),
		Order: o.DocumentID, By: BySystem, CreatedAt: l.now(),
	}})
	return err
}

// Account returns owner's account. A test principal's account that was
// never opened reads as it opens on its first change: its opening test
// credit and a limit of 0.00, with nothing written.
func (l *Ledger) Account(ctx context.Context, owner string) (Account, error) {
	a, err := l.Store.Account(ctx, owner)
	if err != nil || a.Opened || !MustOpen(owner) {
		return a, err
	}
	opened, e := l.opening(owner)
	opened.Balance, opened.Totals = e.Amount, Totals{}.Add(e.Type, e.Amount)
	return opened, nil
}
