package accounts

// The admins' changes of an account (accounts.md, Staff): a credit of money
// received, an adjustment, the credit limit; and a new caller's account,
// opened with the stack's DefaultCreditLimit. The console's admin routes
// and stampctl run these same workflows; DECISIONS.md beside this file says
// what they decide where accounts.md is silent.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"stampduty/shared/stampduty"
)

// Claim is a credit's reference as recorded before its entry is applied:
// the reference stays bound to its first amount for the account's whole
// life, beyond the store's replay window of recent entries.
type Claim struct {
	// Reference is the credit's reference, as normalised (NormalReference).
	Reference string
	// Amount is the amount the reference was first recorded with.
	Amount Money
	// After is the account's newest seq read before the claim was made:
	// the credit's entry, whoever applies it, comes after it.
	After int64
	// Seq is the credit entry's seq once it is known to be applied (0
	// before: its claimer may have stopped before or after applying it).
	Seq int64
	// Sub is the admin's sub who first recorded it; At when.
	Sub string
	At  time.Time
}

// References keeps the credits' references (the store's ledgerrefs.go).
type References interface {
	// Claim stores c as owner's claim of c.Reference unless one is stored
	// already, and returns the claim as stored (c, or the first one) and
	// whether this call stored it.
	Claim(ctx context.Context, owner string, c Claim) (stored Claim, mine bool, err error)
	// Find looks for the entry id among owner's entries after seq after,
	// the newest included even when its own item is not written yet. It
	// returns the account as it stands, and the entry when found.
	Find(ctx context.Context, owner, id string, after int64) (Account, *Entry, error)
	// Settle records that the credit of ref is the entry seq.
	Settle(ctx context.Context, owner, ref string, seq int64) error
	// Entry returns owner's entry seq (ENOTFOUND when it is not written).
	Entry(ctx context.Context, owner string, seq int64) (Entry, error)
}

// Staff is the admins' workflows on the accounts: Ledger's, with the
// credits' references.
type Staff struct {
	*Ledger
	Refs References
}

// Limits of what an admin types (DECISIONS.md, "References and notes").
const (
	MaxReference = 64
	MaxNote      = 500
)

// NormalReference returns a credit's reference as it is kept and compared:
// its surrounding spaces removed and its letters in upper case (a bank's
// UTR is upper-case letters and digits; "utr1" and "UTR1" are one
// transfer). The reference must then be 1 to MaxReference printable ASCII
// characters without spaces, else EINVALID naming reference.
func NormalReference(ref string) (string, error) {
	ref = strings.ToUpper(strings.TrimSpace(ref))
	bad := func(msg string) (string, error) {
		return "", stampduty.Invalid([]stampduty.FieldError{{Path: "reference", Message: msg}})
	}
	switch {
	case ref == "":
		return bad("reference is required: the bank transfer's UTR or another reference of the money received")
	case len(ref) > MaxReference:
		return bad(fmt.Sprintf("reference must be at most %d characters", MaxReference))
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] <= ' ' || ref[i] > '~' {
			return bad("reference must be letters, digits and punctuation, without spaces")
		}
	}
	return ref, nil
}

// checkNote returns note trimmed, or EINVALID naming note when it is
// longer than MaxNote characters or holds a control character; required
// says an empty note is refused too.
func checkNote(note string, required bool, why string) (string, error) {
	note = strings.TrimSpace(note)
	bad := func(msg string) (string, error) {
		return "", stampduty.Invalid([]stampduty.FieldError{{Path: "note", Message: msg}})
	}
	if note == "" && required {
		return bad("note is required: " + why)
	}
	if n := len([]rune(note)); n > MaxNote {
		return bad(fmt.Sprintf("note must be at most %d characters", MaxNote))
	}
	for _, r := range note {
		if r < ' ' || r == 0x7f {
			return bad("note must be one line of text")
		}
	}
	return note, nil
}

// checkSub refuses a change without the acting admin's sub: every staff
// change is logged with it.
func checkSub(sub string) error {
	if !stampduty.ValidActor(sub) {
		return stampduty.Internal(errors.New("a staff change without the admin's sub"))
	}
	return nil
}

// staffTries is how often a staff change that is applied on the account as
// read tries again when the account changed in between (a busy caller's
// holds): each try reads only what changed.
const staffTries = 8

// Credit records amount received on owner's account under reference
// (accounts.md: a credit is idempotent by its reference per account), by
// the admin sub. The same reference again with the same amount answers the
// first credit (Replayed); with another amount it is ECONFLICT and nothing
// is written. amount must be above zero; note is optional.
//
// The reference is claimed first (References.Claim, durable for the
// account's life), then the credit applied on the account as read, after
// looking among the entries since the claim for one applied already (its
// first claimer may have stopped after applying it). Applying on the seq
// read (Change.IfSeq) makes the look and the apply one step: no entry of
// this id can slip in between. The claim then records the entry's seq, so
// that a later repeat reads one entry.
func (s *Staff) Credit(ctx context.Context, owner string, amount Money, reference, note, sub string) (Applied, error) {
	if amount <= 0 {
		return Applied{}, stampduty.Invalid([]stampduty.FieldError{{Path: "amount", Message: "amount must be above zero"}})
	}
	ref, err := NormalReference(reference)
	if err != nil {
		return Applied{}, err
	}
	if note, err = checkNote(note, false, ""); err != nil {
		return Applied{}, err
	}
	if err := checkSub(sub); err != nil {
		return Applied{}, err
	}
	a, err := s.ensureOpen(ctx, owner)
	if err != nil {
		return Applied{}, err
	}
	now := s.now()
	c, mine, err := s.Refs.Claim(ctx, owner, Claim{Reference: ref, Amount: amount, After: a.Seq, Sub: sub, At: now})
	if err != nil {
		return Applied{}, err
	}
	if c.Amount != amount {
		return Applied{}, stampduty.Errorf(stampduty.ECONFLICT,
			"The reference %s was recorded with a credit of %s; a credit is recorded once per reference. Check the reference, or record the difference as an adjustment.",
			ref, c.Amount.Indian())
	}
	id := CreditID(ref)
	if c.Seq != 0 {
		e, err := s.Refs.Entry(ctx, owner, c.Seq)
		if err != nil {
			return Applied{}, err
		}
		replay := Applied{Entry: e, Account: a, Replayed: true}
		if err := s.tell(ctx, owner, replay); err != nil {
			return Applied{}, err
		}
		return replay, nil
	}
	entry := Entry{ID: id, Type: TypeCredit, Amount: amount, Reference: ref, Note: note, By: ByAdmin, Sub: sub, CreatedAt: now}
	after := c.After
	if !mine {
		a.Seq = -1 // another request claimed it: look before applying
	}
	for try := 0; try < staffTries; try++ {
		if a.Seq != after {
			cur, found, err := s.Refs.Find(ctx, owner, id, after)
			if err != nil {
				return Applied{}, err
			}
			if found != nil {
				replay := Applied{Entry: *found, Account: cur, Replayed: true}
				if err := s.tell(ctx, owner, replay); err != nil {
					return Applied{}, err
				}
				return s.settled(ctx, owner, ref, replay)
			}
			a = cur
		}
		seq := a.Seq
		applied, err := s.Store.Apply(ctx, owner, Change{Entry: entry, IfSeq: &seq})
		switch {
		case err == nil:
			if err := s.tell(ctx, owner, applied); err != nil {
				return Applied{}, err
			}
			return s.settled(ctx, owner, ref, applied)
		case errors.Is(err, ErrChanged):
			after = seq
			a.Seq = -1
			continue
		}
		return Applied{}, err
	}
	return Applied{}, stampduty.Unavailable(fmt.Errorf("credit %s of %s: the account kept changing", ref, owner))
}

// settled records the credit's seq on its claim and returns applied; a
// failure to record it is left for the next repeat, which looks again.
func (s *Staff) settled(ctx context.Context, owner, ref string, applied Applied) (Applied, error) {
	if err := s.Refs.Settle(ctx, owner, ref, applied.Entry.Seq); err != nil {
		return Applied{}, err
	}
	return applied, nil
}

// Adjust records an adjustment of amount (its sign its direction) on
// owner's account with its required note, by the admin sub, as the
// request request (its id: AdjustmentID, so that a retry of the request
// writes it once). An adjustment down that would take available below
// zero, on an account with a limit, is ECONFLICT and nothing is written.
func (s *Staff) Adjust(ctx context.Context, owner string, amount Money, note, request, sub string) (Applied, error) {
	var bad []stampduty.FieldError
	if amount == 0 {
		bad = append(bad, stampduty.FieldError{Path: "amount", Message: "amount must not be zero: its sign says which way the balance moves"})
	}
	note, err := checkNote(note, true, "say why the balance is adjusted")
	var e *stampduty.Error
	if errors.As(err, &e) {
		bad = append(bad, e.Fields...)
	}
	if bad != nil {
		return Applied{}, stampduty.Invalid(bad)
	}
	if request == "" {
		return Applied{}, stampduty.Internal(errors.New("an adjustment without its request id"))
	}
	if err := checkSub(sub); err != nil {
		return Applied{}, err
	}
	a, err := s.apply(ctx, owner, Change{Guard: true, Entry: Entry{
		ID: AdjustmentID(request), Type: TypeAdjustment, Amount: amount, Note: note, By: ByAdmin, Sub: sub, CreatedAt: s.now()}})
	var nr *NoRoomError
	if errors.As(err, &nr) {
		avail := Money(0)
		if v := nr.Account.Available(); v != nil {
			avail = *v
		}
		return Applied{}, stampduty.Errorf(stampduty.ECONFLICT,
			"The adjustment of %s would take available below zero: %s is available. An adjustment never takes available below zero.",
			amount.Indian(), avail.Indian())
	}
	if err != nil {
		return Applied{}, err
	}
	if err := s.tell(ctx, owner, a); err != nil {
		return Applied{}, err
	}
	return a, nil
}

// tellSettings tells account.low_balance (NotifySettings) when a new
// limit took owner's account, now after, below its threshold, with its
// newest entry (read only then; none for an account without entries). A
// failure is the request's; the limit stays saved. Whoever marks the
// account low tells it; a failed publish clears the mark again, so the
// next change that finds the account low tells it (markLow, DECISIONS.md).
func (s *Staff) tellSettings(ctx context.Context, owner string, after Account) error {
	if s.Events == nil || !IsLow(after) || after.Low {
		return nil
	}
	var newest *Entry
	if after.Seq > 0 {
		e, err := s.Refs.Entry(ctx, owner, after.Seq)
		if err != nil {
			return fmt.Errorf("tell the low balance of %s: %w", owner, err)
		}
		newest = &e
	}
	if err := s.NotifySettings(ctx, owner, after, newest, s.Events); err != nil {
		return fmt.Errorf("tell the low balance of %s: %w", owner, err)
	}
	return nil
}

// tell notifies the Ledger's Events of a, a staff change of owner's
// account (Notify: account.credited, account.low_balance). A replay is
// told again, with the same event ids, when nothing came after its entry
// (a request retried after its change was applied but before its events
// were kept: the retry publishes them); else the account is no longer as
// the entry left it, and its events were the first request's to publish.
// A failure is the request's: the change stays, and a retry of the same
// request answers the same entry and publishes again.
func (s *Staff) tell(ctx context.Context, owner string, a Applied) error {
	if s.Events == nil || a.Replayed && a.Account.Seq != a.Entry.Seq {
		return nil
	}
	if err := s.Notify(ctx, owner, a, s.Events); err != nil {
		return fmt.Errorf("tell the events of %s on %s: %w", a.Entry.ID, owner, err)
	}
	return nil
}

// SetLimit sets owner's credit limit (nil: unlimited) by the admin sub.
// A limit that would leave available below zero (below what is held) is
// saved only with confirm, else ECONFLICT asking to confirm; every new
// order is then refused until available is back at zero or above. The
// limit is set on the account as read (Store.Configure), read again when
// an entry came in between.
func (s *Staff) SetLimit(ctx context.Context, owner string, limit *Money, confirm bool, sub string) (Account, error) {
	if limit != nil && *limit < 0 {
		return Account{}, stampduty.Invalid([]stampduty.FieldError{{Path: "creditLimit", Message: "creditLimit must not be negative"}})
	}
	if err := checkSub(sub); err != nil {
		return Account{}, err
	}
	a, err := s.ensureOpen(ctx, owner)
	for try := 0; try < staffTries && err == nil; try++ {
		if limit != nil && !confirm {
			if avail := a.Balance + *limit - a.Held; avail < 0 {
				return Account{}, stampduty.Errorf(stampduty.ECONFLICT,
					"A credit limit of %s leaves %s available: %s is held for open orders. Confirm to save it; every new order is then refused until available is back at zero or above.",
					limit.Indian(), avail.Indian(), a.Held.Indian())
			}
		}
		var after Account
		after, err = s.Store.Configure(ctx, owner, a.Seq, limit, a.Threshold, a.Low, s.now())
		if err == nil {
			return after, s.tellSettings(ctx, owner, after)
		}
		if !errors.Is(err, ErrChanged) {
			return after, err
		}
		a, err = s.Store.Account(ctx, owner)
	}
	if err != nil {
		return Account{}, err
	}
	return Account{}, stampduty.Unavailable(fmt.Errorf("limit of %s: the account kept changing", owner))
}

// OpenCaller opens the account of a caller just created with the stack's
// DefaultCreditLimit. An unlimited default stores nothing: an account never
// stored reads unlimited, as the accounts of callers created before
// accounts existed do.
func (l *Ledger) OpenCaller(ctx context.Context, owner string) error {
	if l.DefaultLimit == nil {
		return nil
	}
	_, err := l.Store.Open(ctx, owner, Account{Owner: owner, Limit: l.DefaultLimit}, nil)
	return err
}

// ParseLimit reads a credit limit as the stack's DefaultCreditLimit and
// stampctl's --limit write it: "unlimited" (nil) or money ("0.00").
func ParseLimit(path, s string) (*Money, error) {
	if strings.EqualFold(strings.TrimSpace(s), "unlimited") {
		return nil, nil
	}
	m, err := ParseMoney(path, strings.TrimSpace(s), Unsigned)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// View returns owner's account as its reads show it: a test principal's
// never opened as it will open (its opening test credit, limit 0), without
// storing it.
func (l *Ledger) View(ctx context.Context, owner string) (Account, error) {
	a, err := l.Store.Account(ctx, owner)
	if err != nil || a.Opened || !MustOpen(owner) {
		return a, err
	}
	acct, opening := l.opening(owner)
	acct.Balance, acct.Totals = opening.Amount, Totals{}.Add(opening.Type, opening.Amount)
	return acct, nil
}
