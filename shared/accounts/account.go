// Package accounts holds who pays for the paper (accounts.md): each caller's
// account, prepaid or on credit, and its ledger of entries, each written
// once and never edited. It holds the rules (what each entry moves, when an
// order does not fit, when a caller is told its balance runs low) and the
// workflows that apply them through a Store; it knows nothing of HTTP or
// AWS. The DynamoDB adapter (shared/store, ledger.go) keeps the account and
// its entries without transactions; the table design beside it says how.
package accounts

import (
	"time"
)

// The entry types (accounts.md, The ledger).
const (
	TypeCredit     = "credit"
	TypeHold       = "hold"
	TypeCharge     = "charge"
	TypeRelease    = "release"
	TypeAdjustment = "adjustment"
)

// Types lists the entry types, in the contract's order.
var Types = []string{TypeCredit, TypeHold, TypeCharge, TypeRelease, TypeAdjustment}

// Who made an entry (an entry's "by").
const (
	ByCaller   = "caller"
	ByOperator = "operator"
	ByAdmin    = "admin"
	BySystem   = "system"
)

// Totals are an account's running sums since it was opened: what its
// monthly statements subtract (accounts.md: a statement of a month with
// 100,000 entries does not read them). Adjustments keep their sign.
type Totals struct {
	Credits     Money `json:"credits"`
	Charges     Money `json:"charges"`
	Adjustments Money `json:"adjustments"`
	Holds       Money `json:"holds"`
	Releases    Money `json:"releases"`
}

// Balance is the balance the totals make: credits − charges + adjustments.
func (t Totals) Balance() Money { return t.Credits - t.Charges + t.Adjustments }

// Held is what the totals hold: holds − releases − charges.
func (t Totals) Held() Money { return t.Holds - t.Releases - t.Charges }

// Add returns t after an entry of type typ and amount.
func (t Totals) Add(typ string, amount Money) Totals {
	switch typ {
	case TypeCredit:
		t.Credits += amount
	case TypeCharge:
		t.Charges += amount
	case TypeAdjustment:
		t.Adjustments += amount
	case TypeHold:
		t.Holds += amount
	case TypeRelease:
		t.Releases += amount
	}
	return t
}

// Account is a caller's account: its numbers after its newest entry, its
// settings, and its running totals.
type Account struct {
	// Owner is the owner key: a caller's name, or its test principal's
	// (stampduty.TestOwnerOf), which has an account of its own.
	Owner string
	// Balance is credits − charges ± adjustments, over the account's life.
	Balance Money
	// Held is what open orders have reserved and not yet been charged.
	Held Money
	// Limit is how far below zero balance − held may go; nil is
	// unlimited (nothing is refused).
	Limit *Money
	// Threshold is the available amount below which the caller is told
	// (account.low_balance); nil never.
	Threshold *Money
	// Low says available went below Threshold and has not risen above it
	// since: the next crossing below tells the caller again only once it has.
	Low bool
	// Seq is the number of entries the account holds: its newest entry's seq.
	Seq int64
	// Totals are the running sums after the newest entry.
	Totals Totals
	// UpdatedAt is when the newest entry or setting was made.
	UpdatedAt time.Time
	// Opened says the account is stored; an account never touched (a
	// caller who ordered before accounts existed) reads as its defaults.
	Opened bool
}

// Available is Balance + Limit − Held, nil when the limit is unlimited.
func (a Account) Available() *Money {
	if a.Limit == nil {
		return nil
	}
	v := a.Balance + *a.Limit - a.Held
	return &v
}

// Entry is one change of an account's balance or held (accounts.md): written
// once, never edited or deleted.
type Entry struct {
	// ID is deterministic per event (IDs below), so a retry or a replay
	// cannot write a second one.
	ID   string
	Type string
	// Amount is the size of the movement, positive, except for an
	// adjustment, whose sign says its direction.
	Amount Money
	// Seq is the entry's place in its account's ledger: 1, 2, 3…
	Seq int64
	// BalanceAfter and HeldAfter are the account's numbers right after it.
	BalanceAfter Money
	HeldAfter    Money
	// Totals are the running sums right after it.
	Totals Totals
	// Order and Fulfillment are the documentIds of the order and paper it
	// is about, "" for none.
	Order       string
	Fulfillment string
	// Reference is a credit's (a bank transfer's UTR); Note an
	// adjustment's (required) or a credit's; "" for none.
	Reference string
	Note      string
	// By is who made it: caller, operator, admin or system; Sub, for an
	// admin's, is the admin's sub (logged, never shown to callers).
	By  string
	Sub string
	// CreatedAt is when it was made.
	CreatedAt time.Time
}

// BalanceDelta and HeldDelta are what an entry of type typ and amount
// moves: the ledger's table.
func effects(typ string, amount Money) (balance, held Money) {
	switch typ {
	case TypeCredit, TypeAdjustment:
		return amount, 0
	case TypeHold:
		return 0, amount
	case TypeCharge:
		return -amount, -amount
	case TypeRelease:
		return 0, -amount
	}
	return 0, 0
}

// Effects returns what e moves: its change of balance and of held.
func (e Entry) Effects() (balance, held Money) { return effects(e.Type, e.Amount) }

// The deterministic entry ids: one per event, whoever writes it.

// HoldID is the id of order doc's hold.
func HoldID(order string) string { return "hold_" + order }

// ChargeID is the id of paper (fulfillment) paper's charge.
func ChargeID(paper string) string { return "charge_" + paper }

// ReleaseID is the id of order doc's release.
func ReleaseID(order string) string { return "release_" + order }

// CreditID is the id of the credit with reference ref: a credit is
// idempotent by its reference per account.
func CreditID(ref string) string { return "credit_" + ref }

// AdjustmentID is the id of an adjustment made under request id req: one
// per request, so that a retried request writes it once.
func AdjustmentID(req string) string { return "adjustment_" + req }

// OpeningID is the id of a test account's opening credit.
const OpeningID = "credit_opening"
