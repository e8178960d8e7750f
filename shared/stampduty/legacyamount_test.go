package stampduty

// The amount rules of an article before duty rules (stamp-duty-service.md),
// kept frozen, in the tests alone, as what §9's migration is compared with
// (TestLegacyEquivalence, quote_test.go): duty-rules.md §9 says a migrated
// article answers exactly what this evaluator did. The service prices with
// the duty rules (rules.go) and no longer links it.

import (
	"errors"
	"fmt"
	"math/big"
)

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

// MulCeil returns ceil(price × d), computed exactly. A result that does not
// fit an int64 is an error wrapping ErrDecimalRange.
func (d Decimal) MulCeil(price uint64) (int64, error) {
	p := new(big.Int).Mul(new(big.Int).SetUint64(price), d.int())
	q, r := p.QuoRem(p, pow10(int(d.scale)), new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("multiply decimal: %d × %s: %w", price, d, ErrDecimalRange)
	}
	return q.Int64(), nil
}
