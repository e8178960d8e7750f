package orders

// This file holds the fulfillment workflow's reads and changes: the stored
// order, reading one, the operators' queue, and the status changes, each
// stored with one conditional write and its event.

import (
	"context"
	"errors"
	"reflect"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// Stored is an order as the store holds it: the order and its owner, where
// it is (its owner's seq), its version, which each change raises by one,
// and its outbox: the events of its changes not yet relayed to webhooks,
// oldest first. A change is stored with the outbox it read, its own event
// appended, so no pending event is dropped by a later change.
type Stored struct {
	stampduty.OpsOrder
	Seq     int64
	Version int64
	Outbox  []stampduty.Pending
	// Apart is, for an order of several papers, how the store keeps it
	// (nil for an order kept whole, in one item): see Apart.
	Apart *Apart
}

// Apart is how the store keeps an order of several papers so that a
// paper's change costs the same whatever the number of papers: the
// order's own fields in its item (with each paper as the create made it),
// and each paper changed since the create in an item of its own. A change
// writes one of them: the paper's item for a paper's change, the order's
// item for the order's own. Version, in Stored, is then the highest of
// their versions, and each write takes the next one, so the versions
// still order the order's changes (and its events) as they happened.
type Apart struct {
	// Version and Outbox are the order item's own; Stored.Outbox is the
	// outbox of the item Item names.
	Version int64
	Outbox  []stampduty.Pending
	// Papers holds, for each paper (oldest first), its item's version (0
	// while it has none) and outbox.
	Papers []Part
	// Item names the item a Stored the relay read stands for: 0 the
	// order's, k the k-th paper's (from 1).
	Item int
}

// Part is one paper's item of an order kept Apart.
type Part struct {
	Version int64
	Outbox  []stampduty.Pending
	// Lock is the version of the cancel that locked the paper's item (see
	// the store's cancelApart) and Locked when, zero when none did.
	Lock   int64
	Locked time.Time
}

// ErrChanged is the failure of a Replace whose order changed since it was
// read: another request's change was stored first.
var ErrChanged = errors.New("the order changed since it was read")

// Fulfillments reads and changes stored orders for their fulfillment.
type Fulfillments interface {
	// ByDocument returns the order with documentId doc, read eventually
	// consistent (a moment's lag after a change), or ENOTFOUND.
	ByDocument(ctx context.Context, doc string) (Stored, error)
	// Owned returns owner's order doc, read strongly consistent when its
	// documentId carries its seq (else as ByDocument), or ENOTFOUND, also
	// for another owner's order.
	Owned(ctx context.Context, owner, doc string) (Stored, error)
	// Reread returns s's order as it is now (a strongly consistent read).
	Reread(ctx context.Context, s Stored) (Stored, error)
	// Replace stores o in place of s, with s.Outbox followed by events as
	// its pending events, on condition that s is still the stored version;
	// ErrChanged (wrapped) when it is not.
	Replace(ctx context.Context, s Stored, o stampduty.Order, events ...stampduty.Pending) error
	// Queue returns up to size orders waiting in status, oldest first,
	// the live orders or, with test, the test orders only (test-mode.md:
	// test orders never show among the live), from the position cursor
	// names ("" for the start), and the cursor of what follows ("" at the
	// end). A cursor it did not make for this status and mode is EINVALID.
	Queue(ctx context.Context, status string, test bool, cursor string, size int) ([]stampduty.OpsOrder, string, error)
}

// Fulfiller is the fulfillment workflow: reading one order, the operators'
// queue and status changes, and the files of an order.
type Fulfiller struct {
	Orders Fulfillments
	Files  Files
	// Rules gives the one-order read (Get) its duty_rule_snapshot; nil
	// leaves it null.
	Rules RuleSnapshots
	// Direct is the bucket for the pre-signed path (the same as Files in
	// production); Watches records the files in flight (see Watch).
	Direct  Direct
	Watches Watches
	// IDs gives files their numeric ids.
	IDs IDs
	// Listeners decides whether a change's event is recorded; nil records
	// every one.
	Listeners Listeners
	// Specimen makes a test order's SPECIMEN certificates (Step); only
	// the function that steps test orders has one.
	Specimen Specimen
	// Numbers keeps which paper holds each unique_doc_ref and
	// certificate_number (papers.md): the functions that move papers have
	// it; a move that stores a number without it is EINTERNAL.
	Numbers Numbers
	// Payments charges a paper that reaches Procured and releases what a
	// cancel leaves held (accounts.md); nil does neither.
	Payments Payments
	Now      func() time.Time
}

func (f *Fulfiller) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// notFound is the answer for an order the caller may not see.
func notFound(doc string) error {
	return stampduty.Errorf(stampduty.ENOTFOUND, "Order with the documentId: %s cannot be found.", doc)
}

// find returns owner's order doc; another caller's order is not found.
// owner "" is an operator, who may see every order.
func (f *Fulfiller) find(ctx context.Context, owner, doc string) (Stored, error) {
	s, err := f.Orders.ByDocument(ctx, doc)
	if stampduty.ErrorCode(err) == stampduty.ENOTFOUND || err == nil && owner != "" && s.Owner != owner {
		return Stored{}, notFound(doc)
	}
	return s, err
}

// owned returns owner's order doc read by key (Orders.Owned); another
// caller's or an unknown order is the caller's 404.
func (f *Fulfiller) owned(ctx context.Context, owner, doc string) (Stored, error) {
	s, err := f.Orders.Owned(ctx, owner, doc)
	if stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
		return Stored{}, notFound(doc)
	}
	return s, err
}

// Get returns owner's order doc as its caller sees it, with fresh download
// addresses. It reads the order by key (Owned), so an order reads back as
// soon as its create has answered.
func (f *Fulfiller) Get(ctx context.Context, owner, doc string) (stampduty.Order, error) {
	s, err := f.owned(ctx, owner, doc)
	if err != nil {
		return stampduty.Order{}, err
	}
	o, err := withSnapshot(ctx, f.Rules, s.Order)
	if err != nil {
		return stampduty.Order{}, err
	}
	return ForCaller(ctx, f.Files, o)
}

// ForCaller returns o as its caller sees it: without the operators'
// identities (stampduty.Order.ForCaller), with fresh download addresses.
func ForCaller(ctx context.Context, files Files, o stampduty.Order) (stampduty.Order, error) {
	o = o.ForCaller()
	return o, files.Sign(ctx, &o)
}

// OpsGet returns order doc as operators see it.
func (f *Fulfiller) OpsGet(ctx context.Context, doc string) (stampduty.OpsOrder, error) {
	s, err := f.find(ctx, "", doc)
	if err != nil {
		return stampduty.OpsOrder{}, err
	}
	return s.OpsOrder, f.Files.Sign(ctx, &s.Order)
}

// Queue returns a page of the operators' work queue (see Fulfillments.Queue),
// with fresh download addresses.
func (f *Fulfiller) Queue(ctx context.Context, status string, test bool, cursor string, size int) ([]stampduty.OpsOrder, string, error) {
	if stampduty.StatusRank(status) < 0 {
		return nil, "", stampduty.Errorf(stampduty.EINVALID, "Invalid status: must be one of Pending, Created, Procured, Printed")
	}
	page, next, err := f.Orders.Queue(ctx, status, test, cursor, size)
	if err != nil {
		return nil, "", err
	}
	for i := range page {
		if err := f.Files.Sign(ctx, &page[i].Order); err != nil {
			return nil, "", err
		}
	}
	return page, next, nil
}

// change is one change of an order: it returns the changed order, whether
// anything changed, or why it may not change.
type change func(o stampduty.Order) (stampduty.Order, bool, error)

// tell returns the event a stored change from old to next records: its
// type ("" for none), for a status change the statuses it moved between,
// and the documentId of the paper (fulfillment) it is about ("" for the
// order's own changes: papers.md's data.fulfillment).
type tell func(old, next stampduty.Order) (typ string, previous, status *string, paper string)

// told returns the tell of a change that always records an event of type
// typ, without statuses, about paper ("" for none).
func told(typ, paper string) tell {
	return func(stampduty.Order, stampduty.Order) (string, *string, *string, string) { return typ, nil, nil, paper }
}

// update applies ch to s, the order as read from the index, and stores the
// result with one conditional write, together with the event tl tells of
// it (made before the write: a retry of the write carries the same id). A refusal read from the eventually
// consistent index is checked against a consistent read before it is
// answered; a write that loses a race to another change is answered from a
// consistent read: done when what was asked is what is stored now, else
// ECONFLICT. At most three calls with the index read: it, the write, and one
// consistent read.
func (f *Fulfiller) update(ctx context.Context, s Stored, ch change, tl tell) (Stored, error) {
	return f.updateWith(ctx, s, ch, tl, nil)
}

// updateWith is update that calls before, when not nil, right before the
// write (after ch made the order to write), and gives up with its error.
func (f *Fulfiller) updateWith(ctx context.Context, s Stored, ch change, tl tell, before func() error) (Stored, error) {
	s, _, err := f.write(ctx, s, ch, tl, before)
	return s, err
}

// write is updateWith that also says whether this call's own write made
// the change (landed): false when nothing was to change, or another
// request's write had made it. What follows from a change once (a charge,
// a release) follows from the call that landed it.
func (f *Fulfiller) write(ctx context.Context, s Stored, ch change, tl tell, before func() error) (Stored, bool, error) {
	next, changed, err := ch(s.Order)
	if err != nil {
		// The index may lag behind the last change: check on the table.
		if s, err = f.Orders.Reread(ctx, s); err != nil {
			return Stored{}, false, err
		}
		if next, changed, err = ch(s.Order); err != nil {
			return Stored{}, false, err
		}
	}
	if !changed {
		return s, false, nil
	}
	var events []stampduty.Pending
	if typ, previous, status, paper := tl(s.Order, next); typ != "" {
		if events, err = record(ctx, f.Listeners, s.Owner, typ, func() (stampduty.Pending, error) {
			p, err := stampduty.NewPending(typ, next.UpdatedAt, next, previous, status)
			p.Fulfillment = paper
			return p, err
		}); err != nil {
			return Stored{}, false, err
		}
	}
	if before != nil {
		if err := before(); err != nil {
			return Stored{}, false, err
		}
	}
	err = f.Orders.Replace(ctx, s, next, events...)
	if err == nil {
		countChange(ctx, s.Owner, s.Order, next)
		s.Order, s.Version = next, s.Version+1
		s.Outbox = append(s.Outbox[:len(s.Outbox):len(s.Outbox)], events...)
		return s, true, nil
	}
	// The write failed, lost a race, or may have landed with its answer
	// lost (a retry of it then fails its own condition): what is stored
	// now decides.
	now, rerr := f.Orders.Reread(ctx, s)
	if rerr != nil {
		return Stored{}, false, errors.Join(err, rerr)
	}
	if now.Version == s.Version+1 && reflect.DeepEqual(now.Order, next) {
		countChange(ctx, s.Owner, s.Order, next)
		return now, true, nil // this very write landed
	}
	if !errors.Is(err, ErrChanged) {
		return Stored{}, false, err
	}
	if _, changed, cerr := ch(now.Order); cerr != nil {
		return Stored{}, false, cerr
	} else if !changed {
		return now, false, nil
	}
	return Stored{}, false, stampduty.Errorf(stampduty.ECONFLICT, "The order was changed by another request at the same time; read it and try again.")
}

// Advance applies an operator's change to fulfillment ffDoc of order doc
// (stampduty.Fulfillment.Apply), by the operator by, and returns the order after
// it. A test order's papers move themselves (Step): an operator's change of
// one is ECONFLICT, and nothing is written.
func (f *Fulfiller) Advance(ctx context.Context, doc, ffDoc string, c stampduty.Change, by string) (stampduty.OpsOrder, error) {
	s, err := f.find(ctx, "", doc)
	if err != nil {
		return stampduty.OpsOrder{}, err
	}
	if stampduty.IsTestOwner(s.Owner) {
		return stampduty.OpsOrder{}, stampduty.ErrTestOrderMoves(doc)
	}
	if s, err = f.advance(ctx, s, ffDoc, c, by); err != nil {
		return stampduty.OpsOrder{}, err
	}
	return s.OpsOrder, f.Files.Sign(ctx, &s.Order)
}

// advance applies change c to fulfillment ffDoc of s's order, by by. A
// number the move stores for the first time is claimed for the paper
// right before the write (claim): a number another paper holds is 409,
// and nothing is written. The claims of a move that fails are released
// (release).
func (f *Fulfiller) advance(ctx context.Context, s Stored, ffDoc string, c stampduty.Change, by string) (Stored, error) {
	at := stampduty.FormatTime(f.now())
	token, err := stampduty.NewDocumentID()
	if err != nil {
		return Stored{}, stampduty.Internal(err)
	}
	var claims, made []Claim
	moved, landed, err := f.write(ctx, s, func(o stampduty.Order) (stampduty.Order, bool, error) {
		i := o.Fulfillment(ffDoc)
		if i < 0 {
			return o, false, stampduty.Errorf(stampduty.ENOTFOUND, "Fulfillment with the documentId: %s cannot be found.", ffDoc)
		}
		if err := o.NotCancelled(stampduty.CancelledMove); err != nil {
			return o, false, err
		}
		next, changed, err := o.Fulfillments[i].Apply(c, at, by)
		if err != nil || !changed {
			return o, false, err
		}
		if err := o.CheckCertificateNumber(i, next.CertificateNumber); err != nil {
			return o, false, err
		}
		claims = claimsOf(s.Owner, o, o.Fulfillments[i], next, f.now(), token)
		return withFulfillment(o, i, next, at), true, nil
	}, statusChanged(ffDoc), func() (err error) {
		made, err = f.claim(ctx, claims)
		return err
	})
	if err != nil {
		f.release(ctx, s, made)
		return moved, err
	}
	if landed {
		payer := accounts.ByOperator
		if by == stampduty.TestModeActor {
			payer = accounts.BySystem // a test order's own step
		}
		err = f.charge(ctx, s, moved, ffDoc, payer)
	}
	return moved, err
}

// charge charges paper ffDoc of the order when the change that landed moved
// it to Procured (from before to after), by by. A charge that fails after
// the paper moved is made by the reconciler (accounts.md): the move is
// stored, so the answer says it failed and a retry finds it done.
func (f *Fulfiller) charge(ctx context.Context, before, after Stored, ffDoc, by string) error {
	if f.Payments == nil {
		return nil
	}
	i, j := before.Order.Fulfillment(ffDoc), after.Order.Fulfillment(ffDoc)
	if i < 0 || j < 0 || before.Order.Fulfillments[i].Status == stampduty.StatusProcured ||
		after.Order.Fulfillments[j].Status != stampduty.StatusProcured {
		return nil
	}
	return f.Payments.Charge(ctx, after.Owner, after.Order, ffDoc, by)
}

// statusChanged tells an order.status_changed when fulfillment ffDoc moved
// to another status, and nothing for a change that only stored a reference.
func statusChanged(ffDoc string) tell {
	return func(old, next stampduty.Order) (string, *string, *string, string) {
		i, j := old.Fulfillment(ffDoc), next.Fulfillment(ffDoc)
		if i < 0 || j < 0 || old.Fulfillments[i].Status == next.Fulfillments[j].Status {
			return "", nil, nil, ""
		}
		previous, status := old.Fulfillments[i].Status, next.Fulfillments[j].Status
		return stampduty.EventOrderStatusChanged, &previous, &status, ffDoc
	}
}

// withFulfillment returns o with fulfillment i replaced, updated at at.
func withFulfillment(o stampduty.Order, i int, ff stampduty.Fulfillment, at string) stampduty.Order {
	o.Fulfillments = append([]stampduty.Fulfillment(nil), o.Fulfillments...)
	o.Fulfillments[i] = ff
	o.UpdatedAt = at
	return o
}
