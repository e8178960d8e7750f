package stampduty

import (
	"math/big"
	"slices"
	"strings"

	"stampduty/shared/duty"
)

// The rules of an article, as a quote names them.
const (
	// RuleFixed: the amount is the article's fixed amount.
	RuleFixed = "fixed"
	// RuleRange: the amount is the caller's, within [min, max].
	RuleRange = "range"
	// RuleConsideration: the amount is a share of the consideration price.
	RuleConsideration = "consideration"
	// RuleSchedule: the amount is the duty a rule version of the article's
	// own computes (duty-rules.md §8).
	RuleSchedule = "schedule"
)

// QuoteQuery is a duty-quote request as the HTTP layer read it from the
// query string: every value sent for each parameter, in order, none when
// it was not sent.
type QuoteQuery struct {
	Purpose, State, Amount, ConsiderationPrice, Quantity []string
	// InstrumentDate is the date the duty is asked for (duty-rules.md §7).
	InstrumentDate []string
	// Inputs are the values sent for the other inputs of duty rules
	// (duty.InputNames but amount and considerationPrice), by name.
	Inputs map[string][]string
}

// QuoteRequest is a validated QuoteQuery: Purpose trimmed, Amount nil when
// not sent, ConsiderationPrice 0 when not sent; both in 0..MaxAmount;
// Quantity 1 when not sent, else in 1..MaxQuantity.
type QuoteRequest struct {
	Purpose, State     string
	Amount             *int64
	ConsiderationPrice int64
	Quantity           int64
	// Inputs are the inputs for the article's rules, read in their form;
	// InputErrors the ones whose form is refused, reported with what the
	// rule says of the others (duty-rules.md §10: every failing input at
	// once). Inputs.Date is "" when the query names no date.
	Inputs      duty.Request
	InputErrors []FieldError
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
	// Duty is the explained duty of one paper (duty-rules.md §8); nil for
	// a range article asked without an amount.
	Duty *duty.Duty `json:"duty"`
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
	req.Inputs = duty.Request{Numbers: map[string]int64{}, Enums: map[string]string{}, Malformed: map[string]bool{}}
	inputs := len(errs)
	req.Amount = integer(orderFieldNames[fAmount], q.Amount, msgAboveMaxAmount)
	if req.Amount != nil {
		req.Inputs.Numbers["amount"] = *req.Amount
	}
	if p := integer(orderFieldNames[fConsiderationPrice], q.ConsiderationPrice, msgConsiderationTooLong); p != nil {
		req.ConsiderationPrice = *p
		req.Inputs.Numbers["considerationPrice"] = *p
	}
	for _, name := range duty.InputNames() {
		vals := q.Inputs[name]
		if name == "amount" || name == "considerationPrice" || len(vals) == 0 {
			continue
		}
		if !duty.IsEnumInput(name) {
			if p := integer(name, vals, msgConsiderationTooLong); p != nil {
				req.Inputs.Numbers[name] = *p
			}
			continue
		}
		if s, ok := once(name, vals, false); ok {
			req.Inputs.Enums[name] = s
		}
	}
	if s, ok := once("instrumentDate", q.InstrumentDate, false); ok {
		if _, err := duty.ParseDate(s); err != nil {
			fail("instrumentDate", " must be a date (YYYY-MM-DD)")
		} else {
			req.Inputs.Date = s
		}
	}
	for _, e := range errs[inputs:] {
		req.Inputs.Malformed[e.Path] = true
	}
	inputErrs := slices.Clone(errs[inputs:])
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
	if len(errs) > len(inputErrs) {
		return QuoteRequest{}, Invalid(errs)
	}
	req.InputErrors = inputErrs
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

// Quote is what an order of req.Quantity papers for a with these values
// would store, on date (req's instrument date, else today in India): the
// duty the rule version in force computes and explains (duty-rules.md §8),
// with the create's checks and errors; except that without an amount a
// legacy fixed article quotes its fixed amount and a legacy range article
// quotes none. Every failing input is reported at once, with the ones
// whose form Validate refused.
func (a Article) Quote(req QuoteRequest, today string) (Quote, error) {
	q := Quote{PurposeName: a.PurposeName, State: a.State, Quantity: req.Quantity}
	in := req.Inputs
	in.Purpose, in.State = a.PurposeName, a.State
	if in.Date == "" {
		in.Date = today
	}
	rules, err := a.DutyRules()
	if err != nil {
		return Quote{}, err
	}
	v, inForce := rules.InForce(in.Date)
	shown := a.Projected(in.Date)
	legacy := inForce && v.Legacy
	// The legacy fields the legacy rule follows from: the article's own,
	// or, for a legacy version kept for earlier dates beside versions of
	// the article's own (§7), those it was migrated from (the article's
	// are then a projection).
	fields := a
	if legacy && a.Schedule() {
		fields, legacy = legacyFields(a, v)
		if legacy {
			shown = fields
		}
	}
	q.Min, q.Max, q.Fixed, q.Factor = shown.Min, shown.Max, shown.Fixed, shown.Factor
	switch {
	case !legacy:
		q.Rule = RuleSchedule
	case fields.FollowsConsideration:
		q.Rule = RuleConsideration
		if _, sent := in.Numbers["considerationPrice"]; !sent && !in.Malformed["considerationPrice"] {
			in.Numbers["considerationPrice"] = 0 // the contract's default: the legacy message follows
		}
	case fields.Fixed != nil:
		q.Rule = RuleFixed
		if req.Amount == nil && !in.Malformed["amount"] {
			in.Numbers["amount"] = *fields.Fixed
		}
	default:
		q.Rule = RuleRange
		if req.Amount == nil && len(req.InputErrors) == 0 {
			return q, nil
		}
	}
	d, err := a.evaluate(rules, in, req.InputErrors)
	if err != nil {
		return Quote{}, err
	}
	total, err := TotalAmount(d.Amount, req.Quantity)
	if err != nil {
		return Quote{}, err
	}
	q.Amount, q.TotalAmount, q.Duty = &d.Amount, &total, d
	if q.Rule == RuleConsideration {
		exact := fields.Factor.MulExact(uint64(in.Numbers["considerationPrice"]))
		q.Exact = &exact
	}
	return q, nil
}

// legacyFields returns a with the legacy fields that the legacy version v
// was migrated from (duty.Migrate, §9): a consideration rule's factor and
// bounds, a fixed amount, or a range; false when v is not of one of those
// shapes (a version marked legacy by hand), which is then quoted as a
// schedule.
func legacyFields(a Article, v *duty.Version) (Article, bool) {
	a.Rules, a.Min, a.Max, a.Fixed, a.Factor, a.FollowsConsideration = nil, 0, 0, nil, nil, false
	rupees := func(r *big.Rat) (int64, bool) {
		if r == nil || !r.IsInt() || !r.Num().IsInt64() {
			return 0, false
		}
		return r.Num().Int64(), true
	}
	if len(v.Components) != 1 {
		return a, false
	}
	c := v.Components[0]
	var okMin, okMax bool
	switch c.Kind {
	case duty.KindPercent:
		f, err := ParseDecimal(c.RateText)
		if err != nil || c.Base != "considerationPrice" {
			return a, false
		}
		a.FollowsConsideration, a.Factor = true, &f
		a.Min, okMin = rupees(v.Total.Min)
		a.Max, okMax = rupees(v.Total.Max)
	case duty.KindFixed:
		n, ok := rupees(c.Amount)
		a.Fixed, a.Min, a.Max, okMin, okMax = &n, n, n, ok, ok
	case duty.KindDeclared:
		a.Min, okMin = rupees(c.Min)
		a.Max, okMax = rupees(c.Max)
	default:
		return a, false
	}
	return a, okMin && okMax
}
