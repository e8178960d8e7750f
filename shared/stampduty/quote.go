package stampduty

import (
	"strings"
)

// The rules of an article, as a quote names them.
const (
	// RuleFixed: the amount is the article's fixed amount.
	RuleFixed = "fixed"
	// RuleRange: the amount is the caller's, within [min, max].
	RuleRange = "range"
	// RuleConsideration: the amount is a share of the consideration price.
	RuleConsideration = "consideration"
)

// QuoteQuery is a duty-quote request as the HTTP layer read it from the
// query string: every value sent for each parameter, in order, none when
// it was not sent.
type QuoteQuery struct {
	Purpose, State, Amount, ConsiderationPrice, Quantity []string
}

// QuoteRequest is a validated QuoteQuery: Purpose trimmed, Amount nil when
// not sent, ConsiderationPrice 0 when not sent; both in 0..MaxAmount;
// Quantity 1 when not sent, else in 1..MaxQuantity.
type QuoteRequest struct {
	Purpose, State     string
	Amount             *int64
	ConsiderationPrice int64
	Quantity           int64
}

// Quote is what an order for an article would store as its amount, and the
// article's rule.
type Quote struct {
	PurposeName string `json:"purpose_name"`
	State       string `json:"state"`
	Rule        string `json:"rule"`
	// Amount is the order's amount, the duty of one paper; nil for a range
	// article asked without one.
	Amount *int64 `json:"amount"`
	// Quantity is the number of papers asked (1 when not asked).
	Quantity int64 `json:"quantity"`
	// TotalAmount is Amount × Quantity, nil when Amount is.
	TotalAmount *int64 `json:"total_amount"`
	// Exact is consideration price × factor before rounding up and clamping
	// (consideration articles only), as a decimal string.
	Exact  *string  `json:"exact"`
	Min    int64    `json:"min"`
	Max    int64    `json:"max"`
	Fixed  *int64   `json:"fixed"`
	Factor *Decimal `json:"amountPercentConsideration"`
}

// PurposeState returns the trimmed purpose and the state when each was sent
// once (ok), for the article lookup that comes before validation, as
// OrderBody.PurposeState does for a create: err is the ENOTFOUND error of a
// key no article can have.
func (q QuoteQuery) PurposeState() (purpose, state string, ok bool, err error) {
	if len(q.Purpose) != 1 || len(q.State) != 1 {
		return "", "", false, nil
	}
	return articleKey(q.Purpose[0], q.State[0], false)
}

// articleKey is the article key of a purpose and a state as sent: the
// purpose trimmed, and the ENOTFOUND error when no article can have them
// (loneSurrogate: the purpose escaped one, so it is not the text sent).
func articleKey(purpose, state string, loneSurrogate bool) (string, string, bool, error) {
	purpose = strings.TrimSpace(purpose)
	if loneSurrogate || !ValidArticleKey(purpose, state) {
		return purpose, state, true, NotFoundPurpose(purpose)
	}
	return purpose, state, true, nil
}

// Validate checks the query as Validate checks a create body — purpose and
// state required, amount and considerationPrice integers in 0..MaxAmount,
// each parameter at most once — reporting every failing parameter at once
// as an EINVALID *Error built by Invalid.
func (q QuoteQuery) Validate() (QuoteRequest, error) {
	var (
		req  QuoteRequest
		errs []FieldError
	)
	fail := func(name, msg string) {
		errs = append(errs, FieldError{Path: name, Message: name + msg})
	}
	once := func(name string, vals []string, required bool) (string, bool) {
		switch {
		case len(vals) > 1:
			fail(name, " is given more than once")
		case len(vals) == 1:
			return vals[0], true
		case required:
			fail(name, msgRequired)
		}
		return "", false
	}
	integer := func(name string, vals []string, tooLarge string) *int64 {
		s, ok := once(name, vals, false)
		if !ok {
			return nil
		}
		v, msg := amountValue(queryInteger(s), tooLarge)
		if msg != "" {
			fail(name, msg)
			return nil
		}
		return &v
	}
	req.Amount = integer(orderFieldNames[fAmount], q.Amount, msgAboveMaxAmount)
	if p := integer(orderFieldNames[fConsiderationPrice], q.ConsiderationPrice, msgConsiderationTooLong); p != nil {
		req.ConsiderationPrice = *p
	}
	if s, ok := once(orderFieldNames[fPurpose], q.Purpose, true); ok {
		req.Purpose = strings.TrimSpace(s)
		if msg := checkPurpose(req.Purpose); msg != "" {
			fail(orderFieldNames[fPurpose], msg)
		}
	}
	if s, ok := once(orderFieldNames[fState], q.State, true); ok {
		req.State = s
		if msg := checkState(s); msg != "" {
			fail(orderFieldNames[fState], msg)
		}
	}
	req.Quantity = 1
	if s, ok := once(orderFieldNames[fQuantity], q.Quantity, false); ok {
		var msg string
		if req.Quantity, msg = quantityValue(queryInteger(s)); msg != "" {
			fail(orderFieldNames[fQuantity], msg)
		}
	}
	if len(errs) > 0 {
		return QuoteRequest{}, Invalid(errs)
	}
	return req, nil
}

// queryInteger reads an integer as a query string spells it: ASCII digits,
// perhaps after a minus sign and with leading zeros, is the JSON number it
// names; anything else is a value that is not a number.
func queryInteger(s string) Value {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return Value{Kind: String, Text: s}
	}
	if trimmed := strings.TrimLeft(digits, "0"); trimmed != digits {
		digits = trimmed
		if digits == "" {
			digits = "0"
		}
		s = s[:len(s)-len(strings.TrimPrefix(s, "-"))] + digits
	}
	return Value{Kind: Number, Text: s}
}

// Quote is what an order of quantity papers for a with these values would
// store: the amount Amount gives (the create's rules, same errors), except
// that without an amount a fixed article quotes its fixed amount and a
// range article quotes none; and the total for the papers. The
// consideration price is ignored unless the article follows it.
func (a Article) Quote(amount *int64, considerationPrice, quantity int64) (Quote, error) {
	q := Quote{PurposeName: a.PurposeName, State: a.State, Min: a.Min, Max: a.Max, Fixed: a.Fixed, Factor: a.Factor, Quantity: quantity}
	var sent int64
	if amount != nil {
		sent = *amount
	}
	switch {
	case a.FollowsConsideration:
		q.Rule = RuleConsideration
	case a.Fixed != nil:
		q.Rule = RuleFixed
		if amount == nil {
			sent = *a.Fixed
		}
	default:
		q.Rule = RuleRange
		if amount == nil {
			return q, nil
		}
	}
	v, err := a.Amount(sent, considerationPrice)
	if err != nil {
		return Quote{}, err
	}
	total, err := TotalAmount(v, quantity)
	if err != nil {
		return Quote{}, err
	}
	q.Amount, q.TotalAmount = &v, &total
	if a.FollowsConsideration {
		exact := a.Factor.MulExact(uint64(considerationPrice))
		q.Exact = &exact
	}
	return q, nil
}
