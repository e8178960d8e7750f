package stampduty

import (
	"errors"
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
// and nothing after it (Article.Amount, Decimal.MulCeil) checks them again.
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

// msgConsiderationPrice is the error of an article that follows the
// consideration price when the price is not above zero.
const msgConsiderationPrice = "The consideration price must be greater than 0 for the selected purpose. Please provide a valid consideration price."

// Amount applies the amount rules of the article to an order and returns the
// final stamp-duty amount:
//
//   - an article that follows the consideration price computes
//     ceil(considerationPrice × Factor), rounded up to the whole rupee, and
//     clamps it to [Min, Max] ([Fixed, Fixed] when Fixed is set); the amount
//     sent is ignored and considerationPrice must be above 0;
//   - otherwise, with a fixed amount, amount must equal it;
//   - otherwise amount must be within [Min, Max] inclusive.
//
// A broken rule is EINVALID with the contract's message and the failing
// field; a broken article (no Factor to follow, Min above Max) is EINTERNAL.
// amount and considerationPrice are those of a validated OrderRequest, whose
// range Validate checked: they are not checked again.
func (a Article) Amount(amount, considerationPrice int64) (int64, error) {
	if a.FollowsConsideration {
		return a.followingAmount(considerationPrice)
	}
	if a.Fixed != nil {
		if amount != *a.Fixed {
			msg := fmt.Sprintf("The purpose have a fixed amount of: %d, while the amount passed is equal to: %d", *a.Fixed, amount)
			return 0, &Error{Code: EINVALID, Message: msg, Fields: []FieldError{{Path: "amount", Message: msg}}}
		}
		return amount, nil
	}
	if a.Min > a.Max {
		return 0, a.broken(fmt.Sprintf("min %d is above max %d", a.Min, a.Max))
	}
	if amount < a.Min || amount > a.Max {
		msg := fmt.Sprintf("The purpose can take an amount in the range of: %d-%d, while the amount passed is equal to: %d", a.Min, a.Max, amount)
		return 0, &Error{Code: EINVALID, Message: msg, Fields: []FieldError{{Path: "amount", Message: msg}}}
	}
	return amount, nil
}

// followingAmount is Amount for an article that follows the consideration price.
func (a Article) followingAmount(price int64) (int64, error) {
	if price <= 0 {
		return 0, &Error{Code: EINVALID, Message: msgConsiderationPrice,
			Fields: []FieldError{{Path: "considerationPrice", Message: msgConsiderationPrice}}}
	}
	if a.Factor == nil {
		return 0, a.broken("it follows the consideration price but has no amountPercentConsideration")
	}
	lo, hi := a.Min, a.Max
	if a.Fixed != nil {
		lo, hi = *a.Fixed, *a.Fixed
	}
	if lo > hi {
		return 0, a.broken(fmt.Sprintf("min %d is above max %d", lo, hi))
	}
	v, err := a.Factor.MulCeil(uint64(price))
	switch {
	case errors.Is(err, ErrDecimalRange):
		// The exact product is above MaxInt64, hence above hi: the clamp gives hi.
		return hi, nil
	case err != nil:
		return 0, a.broken(err.Error())
	}
	return min(max(v, lo), hi), nil
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
