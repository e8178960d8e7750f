package stampduty

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Exact decimals for the amount rule. An article's factor
// (amountPercentConsideration, such as 0.07) must be applied exactly: in
// float64, 0.07 × 100 is 7.000000000000001, and the rounding up of
// Article.Amount would charge 8. A Decimal is a math/big integer and a
// scale (coef / 10^scale), and its arithmetic is math/big's.
//
// What stays hand-written is what a caller sees: the grammar and the
// bounds. big.Int and big.Rat accept what JSON does not ("+1", ".5", "5.",
// "01", "0x10", "1_000"), which the API answers with 400; and big.Rat
// builds 10^1000000 for "1e1000000" (tens of milliseconds), where
// scanNumber reads the literal's digits and exponent and the bounds (at
// most 18 fractional digits; at most 20 digits, up to
// 18446744073709551615, without the point) are checked on them before any
// big number is made. The same scanning turns the literal of an amount
// into an integer. The plain form (plain) places the point by hand:
// big.Rat's FloatString pads to a fixed width and costs three times more.
//
// The cost, one run each of `go test -run '^$' -bench . -benchmem -count 1
// ./shared/stampduty` on 2 cores shared by a load of 12, before (the
// hand-written uint64 and math/bits arithmetic this replaced) and now, in
// ns/op and allocs/op:
//
//	                      uint64     math/big
//	parse "0.07"          117  0     447  4
//	parse "1e-18"         111  0     362  3
//	String "0.07"          41  0     343  3
//	MulCeil(123456789)      7  0     286  6
//	MulExact(123456789)   210  5     358  5
//	Cmp                     6  0     443  7
//	a create's decode, validation and amount (BenchmarkCreateOrderRules)
//	                    26435 204  33020 204 (noise: no Decimal on this path)
//
// Fractions of a microsecond, once per priced create or quote (tens of
// milliseconds in DynamoDB) or per factor listed: no user sees them, so
// the hand-written arithmetic did not earn its place.

// MaxDecimalScale is the largest number of fractional digits a Decimal holds.
const MaxDecimalScale = 18

// The errors of ParseDecimal and of what is computed from a Decimal; the
// returned errors wrap one of them.
var (
	// ErrDecimalSyntax: the text is not a JSON number literal.
	ErrDecimalSyntax = errors.New("not a JSON number")
	// ErrDecimalNegative: the number is below zero.
	ErrDecimalNegative = errors.New("negative")
	// ErrDecimalPrecision: the number has more than 18 significant fractional digits.
	ErrDecimalPrecision = errors.New("more than 18 fractional digits")
	// ErrDecimalRange: the number, or a result computed from it, is too large.
	ErrDecimalRange = errors.New("out of range")
)

// Decimal is an exact non-negative decimal number: coef / 10^scale. The
// zero value is 0. Decimals are compared with Cmp: == does not compile.
type Decimal struct {
	// coef is nil for 0, and never changed once made, so that copies of a
	// Decimal (an article's, shared by requests) can share it.
	coef *big.Int
	// scale is 0..MaxDecimalScale; coef has no trailing fractional zeros.
	scale uint8
	_     [0]func() // no ==, which would compare the pointers
}

// NewDecimal returns coef / 10^scale. It panics when scale is outside 0..18.
func NewDecimal(coef uint64, scale int) Decimal {
	if scale < 0 || scale > MaxDecimalScale {
		panic(fmt.Sprintf("stampduty.NewDecimal: scale %d outside 0..%d", scale, MaxDecimalScale))
	}
	for scale > 0 && coef%10 == 0 {
		coef /= 10
		scale--
	}
	return newDecimal(new(big.Int).SetUint64(coef), scale)
}

// newDecimal returns c / 10^scale, c without trailing fractional zeros,
// and keeps c.
func newDecimal(c *big.Int, scale int) Decimal {
	if c.Sign() == 0 {
		return Decimal{}
	}
	return Decimal{coef: c, scale: uint8(scale)}
}

// ParseDecimal parses a JSON number literal such as 0.07, 7E-2, 1 or 1.50.
// It rejects anything that is not a JSON number (a leading +, spaces, hex,
// NaN, the empty string), negative numbers (-0 is 0), numbers with more than
// 18 significant fractional digits and numbers whose digits, without the
// point, exceed 18446744073709551615. Huge exponents are rejected without
// building big numbers.
func ParseDecimal(s string) (Decimal, error) {
	n, ok := scanNumber(s)
	if !ok {
		return Decimal{}, fmt.Errorf("parse decimal %s: %w", quoteShort(s), ErrDecimalSyntax)
	}
	d, err := n.decimal()
	if err != nil {
		return Decimal{}, fmt.Errorf("parse decimal %s: %w", quoteShort(s), err)
	}
	return d, nil
}

// quoteShort quotes s for an error message, cut to a readable length.
func quoteShort(s string) string {
	const limit = 40
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "…"
	}
	return strconv.Quote(s)
}

// int returns d's coefficient, which the caller must not change.
func (d Decimal) int() *big.Int {
	if d.coef == nil {
		return new(big.Int)
	}
	return d.coef
}

// pow10 returns 10^n.
func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// String returns the shortest plain form of d: 0.07, 1, 12.5; never an exponent.
func (d Decimal) String() string { return plain(d.int(), int(d.scale)) }

// plain returns c / 10^scale in the shortest plain form: no exponent, no
// trailing fractional zeros.
func plain(c *big.Int, scale int) string {
	digits := c.Text(10)
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-scale], strings.TrimRight(digits[len(digits)-scale:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// MarshalJSON writes d as a JSON number literal, the same text as String.
func (d Decimal) MarshalJSON() ([]byte, error) {
	return []byte(d.String()), nil
}

// UnmarshalJSON reads a JSON number literal into d. null and every other
// JSON value are errors.
func (d *Decimal) UnmarshalJSON(data []byte) error {
	v, err := ParseDecimal(string(data))
	if err != nil {
		return fmt.Errorf("decode decimal: %w", err)
	}
	*d = v
	return nil
}

// Cmp compares d and e: -1 when d < e, 0 when equal, +1 when d > e.
func (d Decimal) Cmp(e Decimal) int {
	s := max(d.scale, e.scale)
	x := new(big.Int).Mul(d.int(), pow10(int(s-d.scale)))
	return x.Cmp(new(big.Int).Mul(e.int(), pow10(int(s-e.scale))))
}

// Sign returns 0 when d is zero and 1 otherwise (a Decimal is never negative).
func (d Decimal) Sign() int {
	if d.coef == nil {
		return 0
	}
	return 1
}

// MulExact returns price × d exactly, in the plain form of String: no
// exponent, no trailing fractional zeros.
func (d Decimal) MulExact(price uint64) string {
	return plain(new(big.Int).Mul(new(big.Int).SetUint64(price), d.int()), int(d.scale))
}

// maxExp bounds the exponent kept while scanning a number literal: any
// number further from 1 than 10^±maxExp is far outside every range we use,
// and bounding it keeps the arithmetic below from overflowing.
const maxExp = 1 << 40

// numLit is a JSON number literal split into its parts:
// ±(intPart.fracPart) × 10^exp.
type numLit struct {
	neg      bool
	intPart  string // digits, never empty
	fracPart string // digits, possibly empty
	exp      int64  // saturated to ±maxExp
}

// scanNumber splits s, which must be exactly one JSON number literal.
func scanNumber(s string) (numLit, bool) {
	var n numLit
	i := 0
	if i < len(s) && s[i] == '-' {
		n.neg = true
		i++
	}
	start := i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return numLit{}, false
	}
	n.intPart = s[start:i]
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return numLit{}, false
		}
		n.fracPart = s[start:i]
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		negExp := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			negExp = s[i] == '-'
			i++
		}
		start = i
		for i < len(s) && isDigit(s[i]) {
			if n.exp < maxExp {
				n.exp = n.exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == start {
			return numLit{}, false
		}
		n.exp = min(n.exp, maxExp)
		if negExp {
			n.exp = -n.exp
		}
	}
	if i != len(s) {
		return numLit{}, false
	}
	return n, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digit returns the i-th digit of intPart followed by fracPart.
func (n numLit) digit(i int) byte {
	if i < len(n.intPart) {
		return n.intPart[i]
	}
	return n.fracPart[i-len(n.intPart)]
}

// significant locates the significant digits of n: the value is
// digits[first..last] × 10^exp, where digits is intPart followed by
// fracPart. zero reports that every digit is 0.
func (n numLit) significant() (first, last int, exp int64, zero bool) {
	total := len(n.intPart) + len(n.fracPart)
	first = 0
	for first < total && n.digit(first) == '0' {
		first++
	}
	if first == total {
		return 0, 0, 0, true
	}
	last = total - 1
	for n.digit(last) == '0' {
		last--
	}
	// The digit at index last has weight 10^(exp + len(intPart) - 1 - last).
	exp = n.exp + int64(len(n.intPart)) - 1 - int64(last)
	return first, last, exp, false
}

// decimal converts n to a Decimal.
func (n numLit) decimal() (Decimal, error) {
	first, last, exp, zero := n.significant()
	switch {
	case zero:
		return Decimal{}, nil
	case n.neg:
		return Decimal{}, ErrDecimalNegative
	case exp < -MaxDecimalScale:
		return Decimal{}, ErrDecimalPrecision
	case int64(last-first+1)+max(exp, 0) > 20: // above 18446744073709551615
		return Decimal{}, ErrDecimalRange
	}
	c, _ := new(big.Int).SetString((n.intPart + n.fracPart)[first:last+1], 10)
	if exp > 0 {
		c.Mul(c, pow10(int(exp)))
	}
	if !c.IsUint64() {
		return Decimal{}, ErrDecimalRange
	}
	return newDecimal(c, int(max(-exp, 0))), nil
}

// integer returns n as an int64; ok is false when n has a fractional part.
// A value of more than 18 digits is saturated to ±math.MaxInt64: the ranges
// are checked by the caller (checkAmount). Its work is bounded by the
// length of the literal, whatever the exponent.
func (n numLit) integer() (v int64, ok bool) {
	first, last, exp, zero := n.significant()
	switch {
	case zero:
		return 0, true
	case exp < 0:
		return 0, false
	case int64(last-first+1)+exp > 18:
		v = math.MaxInt64
	default:
		for i := first; i <= last; i++ {
			v = v*10 + int64(n.digit(i)-'0')
		}
		for ; exp > 0; exp-- {
			v *= 10
		}
	}
	if n.neg {
		v = -v
	}
	return v, true
}
