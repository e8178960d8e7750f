package accounts

import (
	"context"
	"errors"
	"fmt"

	"stampduty/shared/stampduty"
)

// TestCreditReference is the reference of the credits a caller adds to its
// test account (POST /api/account/test-credits).
const TestCreditReference = "test-credit"

// TestCreditID is the id of the test credit made under request key key
// (the Idempotency-Key, else a random id): one per request, so that a
// retried request writes it once.
func TestCreditID(key string) string { return "credit_test_" + key }

// TestCredit adds amount of test credit to owner's test account, by the
// caller, under request key key. Only a test principal has test credit
// (a live owner is EFORBIDDEN, nothing read or written); an amount that
// would take the balance above TestOpening is EINVALID naming amount and
// saying the most it may add. The check and the credit are one change on
// the seq read (IfSeq), read again when another change came in between,
// so two credits at once cannot pass the cap together. A retried request
// (same key) answers its first entry.
func (c *Caller) TestCredit(ctx context.Context, owner string, amount Money, key string) (Applied, error) {
	if !stampduty.IsTestOwner(owner) {
		return Applied{}, stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden: test credits are for test accounts; use a test token")
	}
	if amount <= 0 {
		return Applied{}, stampduty.Invalid([]stampduty.FieldError{{Path: "amount", Message: "amount must be more than 0.00"}})
	}
	for range configureTries {
		a, err := c.ensureOpen(ctx, owner)
		if err != nil {
			return Applied{}, err
		}
		seq := a.Seq
		ch := Change{IfSeq: &seq, Entry: Entry{ID: TestCreditID(key), Type: TypeCredit, Amount: amount,
			Reference: TestCreditReference, By: ByCaller, CreatedAt: c.now()}}
		if room := TestOpening - a.Balance; amount > room {
			// A retry of a request applied before is answered from it,
			// however full the account is now.
			if done, err := c.replayed(ctx, owner, a, ch.Entry.ID); err != nil || done != nil {
				return Applied{Entry: derefEntry(done), Account: a, Replayed: done != nil}, err
			}
			return Applied{}, TestCreditTooLarge(room)
		}
		out, err := c.Store.Apply(ctx, owner, ch)
		if errors.Is(err, ErrChanged) {
			continue
		}
		return out, err
	}
	return Applied{}, stampduty.Errorf(stampduty.ECONFLICT, "The account changed while the credit was being added; try again")
}

// TestCreditTooLarge is the 400 of a test credit that would take the
// balance above TestOpening, room being the most it may add.
func TestCreditTooLarge(room Money) error {
	room = max(room, 0)
	msg := fmt.Sprintf("amount would take the test balance above %s; at most %s may be added", TestOpening, room)
	return stampduty.Invalid([]stampduty.FieldError{{Path: "amount", Message: msg}})
}

// replayed returns owner's entry id among its newest, nil when none.
func (c *Caller) replayed(ctx context.Context, owner string, a Account, id string) (*Entry, error) {
	_, last, err := c.Reads.Head(ctx, owner)
	if err != nil {
		return nil, err
	}
	es, err := c.Reads.Entries(ctx, owner, a.Seq-recentWindow+1, a.Seq)
	if err != nil {
		return nil, err
	}
	for _, e := range mergeNewest(es, a.Seq-recentWindow+1, a.Seq, last) {
		if e.ID == id {
			return &e, nil
		}
	}
	return nil, nil
}

// recentWindow is how many of the newest entries a retried test credit
// looks among for its first.
const recentWindow = 32

func derefEntry(e *Entry) Entry {
	if e == nil {
		return Entry{}
	}
	return *e
}
