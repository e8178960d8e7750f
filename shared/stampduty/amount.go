package stampduty

import (
	"fmt"
)

// MaxAmount is the largest amount, consideration price, article minimum,
// maximum or fixed amount: 15 digits.
const MaxAmount int64 = 999999999999999

// msgAboveMaxAmount is the message, after the field name, of an amount
// above MaxAmount.
const msgAboveMaxAmount = " must be at most 999999999999999"

// checkAmount is the one range check of amounts: an order's amount and
// considerationPrice, an article's min, max and fixed are in 0..MaxAmount,
// and nothing after it (the duty rules' evaluation) checks them again.
// It returns "" or the failing message after the field name; tooLarge is
// the message of a value above MaxAmount.
func checkAmount(v int64, tooLarge string) string {
	switch {
	case v < 0:
		return msgNotNegative
	case v > MaxAmount:
		return tooLarge
	}
	return ""
}

// integerValue reads a value that must be an integer, a number such as
// 200, 200.0 or 2e2: absent and null are msgRequired, anything else that is
// not an integral number msgMustBeInteger. It returns "" or the failing
// message after the field name. A value too large for an int64 is
// saturated, so that checkAmount refuses it.
func integerValue(v Value) (int64, string) {
	switch v.Kind {
	case Absent, Null:
		return 0, msgRequired
	case Number:
	default:
		return 0, msgMustBeInteger
	}
	n, ok := scanNumber(v.Text)
	if !ok { // not in JSON's number grammar
		return 0, msgMustBeInteger
	}
	i, ok := n.integer()
	if !ok {
		return 0, msgMustBeInteger
	}
	return i, ""
}

// amountValue reads a required amount of an order: integerValue, then
// checkAmount with tooLarge.
func amountValue(v Value, tooLarge string) (int64, string) {
	i, msg := integerValue(v)
	if msg == "" {
		msg = checkAmount(i, tooLarge)
	}
	if msg != "" {
		return 0, msg
	}
	return i, ""
}

// broken is the EINTERNAL error of an article whose rules cannot be applied.
func (a Article) broken(why string) *Error {
	return Internal(fmt.Errorf("article %d (%q, %q) is broken: %s", a.ID, a.PurposeName, a.State, why))
}

// TotalAmount returns the duty of quantity papers of amount each. A total
// above MaxAmount is refused (EINVALID naming quantity), so that every
// amount the API shows keeps at most 15 digits, within what a JavaScript
// client reads exactly (a decision: papers.md is silent).
func TotalAmount(amount, quantity int64) (int64, error) {
	if quantity > 0 && amount > MaxAmount/quantity {
		msg := fmt.Sprintf("quantity must be at most %d for an amount of %d: the total amount must be at most %d", MaxAmount/max(amount, 1), amount, MaxAmount)
		return 0, &Error{Code: EINVALID, Message: msg, Fields: []FieldError{{Path: "quantity", Message: msg}}}
	}
	return amount * quantity, nil
}
