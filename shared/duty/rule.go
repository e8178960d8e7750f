package duty

import (
	"fmt"
	"math/big"
)

// Rules is an article's duty_rules (§1): its rule versions, sorted by
// EffectiveFrom, in periods that do not overlap.
type Rules []*Version

// Version is one rule version (§2), read and checked by ParseRules.
type Version struct {
	Period     Period
	Citation   *Citation // nil only on a migrated (legacy) version
	Legacy     bool
	Inputs     []*Input // in InputNames' order
	Bases      []*Base  // in the order given: each may name the ones before it
	Components []*Component
	Total      Total
	// DeclaredEqual is `declared: "equal"`: the caller's amount must equal
	// the total (legacy fixed articles, §9).
	DeclaredEqual bool

	json []byte // the version as given, compact, members in their order
	hash string // Hash of json
	size int    // bytes of its canonical JSON
}

// JSON returns the version as it was given, compact: what the article
// list and an order's duty_rule_snapshot show.
func (v *Version) JSON() []byte { return v.json }

// Hash returns the version's identity: "sha256:" and the hex SHA-256 of its
// canonical JSON (§7).
func (v *Version) Hash() string { return v.hash }

// input returns the declared input called name, nil when there is none.
func (v *Version) input(name string) *Input {
	for _, in := range v.Inputs {
		if in.Name == name {
			return in
		}
	}
	return nil
}

// Citation is where a version's law is written.
type Citation struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

// The numeric inputs (§3), in the order their problems are reported.
var numericInputs = []string{"considerationPrice", "marketValue", "monthlyRent", "refundableDeposit", "nonRefundableDeposit", "termMonths", "amount"}

// The enum inputs (§3), after the numeric ones.
var enumInputs = []string{"partyCategory", "locationClass", "propertyUse", "relation", "tradeType"}

// InputNames are every input a rule may read, numeric then enum, in the
// order a quote's problems with them are reported.
func InputNames() []string { return append(append([]string(nil), numericInputs...), enumInputs...) }

// InputRank is name's place in InputNames, len(InputNames()) for any other
// name: the order of a quote's input problems.
func InputRank(name string) int {
	for i, n := range numericInputs {
		if n == name {
			return i
		}
	}
	for i, n := range enumInputs {
		if n == name {
			return len(numericInputs) + i
		}
	}
	return len(numericInputs) + len(enumInputs)
}

// IsEnumInput reports whether name is one of the enum inputs of §3.
func IsEnumInput(name string) bool {
	return InputRank(name) >= len(numericInputs) && InputRank(name) < len(numericInputs)+len(enumInputs)
}

// IsNumericInput reports whether name is one of the numeric inputs of §3.
func IsNumericInput(name string) bool { return InputRank(name) < len(numericInputs) }

// MaxInput is the largest numeric input: 15 digits, as every amount.
const MaxInput int64 = 999999999999999

// Input is one entry of a version's inputs (§3).
type Input struct {
	Name     string
	Enum     bool
	Required bool
	Positive bool  // numeric: the value must be above 0
	Min, Max int64 // numeric: bounds, 0 and MaxInput when not given
	HasMin   bool
	HasMax   bool
	// Default is used when the input is absent: a numeric one's digits or
	// an enum one's value; "" when there is none.
	Default string
	Values  []string // enum: the values allowed, in the order given
}

// Base is one named base value (§4).
type Base struct {
	Name string
	Expr *Expr
}

// The operations of an expression (§4).
const (
	opInput = "input"
	opConst = "const"
	opBase  = "base"
	opSum   = "sum"
	opMul   = "mul"
	opDiv   = "div"
	opMax   = "max"
	opMin   = "min"
)

// Expr is an expression of a base: an input, a constant, an earlier base,
// or an operation on expressions.
type Expr struct {
	Op    string
	Name  string   // opInput, opBase
	Const *big.Rat // opConst
	Args  []*Expr  // the operations
}

// The kinds of a component (§5).
const (
	KindFixed     = "fixed"
	KindDeclared  = "declared"
	KindPercent   = "percent"
	KindPerUnit   = "perUnit"
	KindSlabs     = "slabs"
	KindPercentOf = "percentOf"
)

// Component is one part of the duty (§5).
type Component struct {
	ID, Label, Kind string
	When            []Condition
	Min, Max        *big.Rat // rupees; nil when not given
	Rounding        Rounding // default up to the paisa

	Amount   *big.Rat  // fixed, perUnit
	Base     string    // percent, perUnit, slabs: a base or numeric input
	Rate     *big.Rat  // percent, percentOf
	RateText string    // as written, for the explanation
	BaseStep *Rounding // percent: the base rounded first; nil when none

	Unit       *big.Rat // perUnit
	PartCounts bool     // perUnit: "or part thereof" counts a unit
	Over       *big.Rat // perUnit: the part of the base charged nothing; nil when none

	Method   string // slabs: "whole" or "marginal"
	Bands    []*Band
	SelectBy string // slabs, whole: what chooses the band ("" the base)

	Of []string // percentOf: ids of earlier components
}

// Condition is one entry of a component's `when`: the enum input holds
// one of Values.
type Condition struct {
	Input  string
	Values []string
}

// The methods of a slabs component.
const (
	MethodWhole    = "whole"
	MethodMarginal = "marginal"
)

// Band is one band of a slabs component: values up to UpTo (nil for the
// last, open band).
type Band struct {
	UpTo     *big.Rat
	UpToText string
	Rate     *big.Rat // nil when not given (0)
	RateText string
	Amount   *big.Rat // whole only; nil when not given (0)
	BaseStep *Rounding
	Min, Max *big.Rat
}

// Total is how a version's component amounts become the duty (§6 step 5).
type Total struct {
	Rounding Rounding // a whole number of rupees; default up to ₹1
	Min, Max *big.Rat // whole rupees; nil when not given
}

// MarshalJSON writes the versions as they were given, compact: the
// article list's duty_rules.
func (rs Rules) MarshalJSON() ([]byte, error) {
	if rs == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, v := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v.json...)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads versions as ParseRules does (stored rules, which
// were checked whole when saved).
func (rs *Rules) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*rs = nil
		return nil
	}
	got, problems := ParseRules(b)
	if problems != nil {
		return fmt.Errorf("duty_rules: %s", problems[0])
	}
	*rs = got
	return nil
}

// Legacy reports whether every version is one §9 migrated: the article's
// legacy fields are then its own, not a projection of its rules.
func (rs Rules) Legacy() bool {
	for _, v := range rs {
		if !v.Legacy {
			return false
		}
	}
	return true
}
