package orders

// This file holds the e-stamp numbers' uniqueness (papers.md, "A number
// names one paper in the whole service"): before a move stores a paper's
// unique_doc_ref or certificate_number, the paper claims the number, and a
// number another paper holds is 409. DynamoDB's transactions are not
// available locally, so the claim and the paper's write are two
// conditional writes; what happens between them is decided here.

import (
	"context"
	"errors"
	"slices"
	"time"

	"stampduty/shared/stampduty"
)

// The fields whose values name one paper in the whole service.
const (
	FieldDocRef            = "unique_doc_ref"
	FieldCertificateNumber = "certificate_number"
)

// ClaimGrace is how long a claim whose paper does not (yet) hold its
// number is taken to be a move still in flight, and so kept. Past it, the
// claim was left by a move that never stored its paper (it failed, or its
// function stopped between the two writes), and another paper may take
// the number. It is far beyond the longest a move can take (the
// functions' timeouts are 10 to 20 s).
const ClaimGrace = time.Minute

// Claim says that a paper holds, or is about to hold, a number.
type Claim struct {
	// Field is FieldDocRef or FieldCertificateNumber, Number its value.
	Field, Number string
	// Test is a test paper's claim (test-mode.md): test papers' numbers
	// are unique among test papers only, and their claims expire with
	// the test data (CreatedAt is the order's, for that).
	Test      bool
	CreatedAt string
	// Owner and Order name the paper's order (its owner and documentId),
	// Paper the paper (its fulfillment's documentId).
	Owner, Order, Paper string
	// At is when the claim was made, Token what names this very claim:
	// a claim is taken over or released only while it is still the one
	// read (the same Token).
	At    time.Time
	Token string
}

// ErrNumberTaken is the cause, for the logs and for errors.Is, of the
// 409 of a number another paper holds.
var ErrNumberTaken = errors.New("the number is another paper's")

// ErrClaimChanged is the failure of a Take whose claim is no longer the
// one read: another request took or released it first.
var ErrClaimChanged = errors.New("the number's claim changed since it was read")

// Numbers keeps, for each number, the claim of the paper that holds it.
type Numbers interface {
	// Claim stores c unless another paper's claim of the same number
	// (field, number and mode) is stored: then it stores nothing and
	// returns that claim, with ok false (a claim without Token when it
	// was released meanwhile). A claim of the same paper is replaced by c
	// (a retried move).
	Claim(ctx context.Context, c Claim) (held Claim, ok bool, err error)
	// Take replaces old, a claim Claim returned, by c, on condition that
	// old is still stored as it was read (none stored, for one without
	// Token); ErrClaimChanged (wrapped) when it is not.
	Take(ctx context.Context, old, c Claim) error
	// Release removes c while it is still stored as c (its Token), and
	// nothing otherwise.
	Release(ctx context.Context, c Claim) error
}

// claimsOf returns the claims paper ff of owner's order o makes when it
// becomes next, at at: one for each number next has that ff has not
// stored yet (a stored number never changes, so its claim is already
// made).
func claimsOf(owner string, o stampduty.Order, ff, next stampduty.Fulfillment, at time.Time, token string) []Claim {
	var cs []Claim
	for _, n := range [...]struct{ field, had, has string }{
		{FieldDocRef, ff.UniqueDocRef, next.UniqueDocRef},
		{FieldCertificateNumber, ff.CertificateNumber, next.CertificateNumber},
	} {
		if n.has != "" && n.had == "" {
			cs = append(cs, Claim{Field: n.field, Number: n.has, Test: stampduty.IsTestOwner(owner), CreatedAt: o.CreatedAt,
				Owner: owner, Order: o.DocumentID, Paper: ff.DocumentID, At: at, Token: token})
		}
	}
	return cs
}

// claim claims each of cs for its paper, in order, and returns the claims
// it stored. A number another paper holds is ECONFLICT naming its field,
// and so is one whose claim is a move still in flight (ClaimGrace): of two
// moves racing for one number, the first claim wins. A claim left by a
// move that never stored its paper is taken over.
func (f *Fulfiller) claim(ctx context.Context, cs []Claim) ([]Claim, error) {
	if len(cs) > 0 && f.Numbers == nil {
		return nil, stampduty.Internal(errors.New("no number claims wired: a paper's number cannot be stored"))
	}
	made := make([]Claim, 0, len(cs))
	for _, c := range cs {
		if err := f.claimOne(ctx, c); err != nil {
			return made, err
		}
		made = append(made, c)
	}
	return made, nil
}

// claimOne claims c: at most two tries, each a Claim and, when another
// paper's claim is found stale, a Take.
func (f *Fulfiller) claimOne(ctx context.Context, c Claim) error {
	for range 2 {
		held, ok, err := f.Numbers.Claim(ctx, c)
		if err != nil || ok {
			return err
		}
		stale, err := f.stale(ctx, held)
		if err != nil {
			return err
		}
		if !stale {
			return numberTaken(c.Field)
		}
		if err := f.Numbers.Take(ctx, held, c); !errors.Is(err, ErrClaimChanged) {
			return err
		}
	}
	return numberTaken(c.Field)
}

// stale reports whether held is a claim no paper stands behind: none at
// all (released since: no Token), or one older than ClaimGrace whose paper
// does not hold its number (its order is gone, or the move that made the
// claim never stored it).
func (f *Fulfiller) stale(ctx context.Context, held Claim) (bool, error) {
	if held.Token == "" {
		return true, nil
	}
	if f.now().Sub(held.At) < ClaimGrace {
		return false, nil
	}
	s, err := f.Orders.Owned(ctx, held.Owner, held.Order)
	if stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !holds(s.Order, held), nil
}

// holds reports whether the paper c names, of order o, has c's number.
func holds(o stampduty.Order, c Claim) bool {
	i := o.Fulfillment(c.Paper)
	if i < 0 {
		return false
	}
	ff := o.Fulfillments[i]
	if c.Field == FieldDocRef {
		return ff.UniqueDocRef == c.Number
	}
	return ff.CertificateNumber == c.Number
}

// release removes the live claims made of a move that failed, once the
// order read again shows the paper does not hold their numbers (a move
// whose answer was lost may have landed: its claims stay). It is best
// effort: a claim it cannot remove is taken over once stale (claimOne).
// A test paper's claims are left: its step is retried until done and
// makes the same claims again (stampduty.MadeUpReferences), which replace
// them, and they expire with the test data.
func (f *Fulfiller) release(ctx context.Context, s Stored, made []Claim) {
	made = slices.DeleteFunc(made, func(c Claim) bool { return c.Test })
	if len(made) == 0 {
		return
	}
	now, err := f.Orders.Reread(ctx, s)
	if err != nil {
		return
	}
	for _, c := range made {
		if !holds(now.Order, c) {
			_ = f.Numbers.Release(ctx, c)
		}
	}
}

// numberTaken is the answer to a move that would give a paper a number
// another paper holds (papers.md): 409 naming the field. The message does
// not repeat the number.
func numberTaken(field string) error {
	msg := "The " + field + " is another paper's: each number names one paper."
	return &stampduty.Error{Code: stampduty.ECONFLICT, Message: msg,
		Fields: []stampduty.FieldError{{Path: field, Message: msg}}, Err: ErrNumberTaken}
}

// SharedNumber is a number two stored papers hold, found by ClaimStored:
// the paper whose claim stands and the other.
type SharedNumber struct {
	Held, Other Claim
}

// ClaimReport is what ClaimStored did: the papers it read, the numbers it
// claimed (or found claimed by their own paper), and the numbers two
// papers hold.
type ClaimReport struct {
	Papers, Claimed int
	Shared          []SharedNumber
}

// ClaimStored claims the numbers of the papers stored before numbers were
// claimed (stampctl orders claim-numbers, once after the deploy that
// brought the numbers table): each calls visit with every stored order,
// and each number of each paper is claimed for its paper, at now. A number
// already claimed by its own paper counts as claimed; one another paper
// holds is reported (Shared) and left as it is, for an operator to look
// into: the issuing authority issued it once, so one of the two is a
// mistake. Running it again claims nothing more.
func ClaimStored(ctx context.Context, numbers Numbers, each func(ctx context.Context, visit func(Stored) error) error, now time.Time) (ClaimReport, error) {
	var r ClaimReport
	err := each(ctx, func(s Stored) error {
		for _, ff := range s.Fulfillments {
			r.Papers++
			token, err := stampduty.NewDocumentID()
			if err != nil {
				return stampduty.Internal(err)
			}
			for _, c := range claimsOf(s.Owner, s.Order, stampduty.Fulfillment{DocumentID: ff.DocumentID}, ff, now, token) {
				held, ok, err := numbers.Claim(ctx, c)
				switch {
				case err != nil:
					return err
				case ok:
					r.Claimed++
				default:
					r.Shared = append(r.Shared, SharedNumber{Held: held, Other: c})
				}
			}
		}
		return nil
	})
	return r, err
}
