package stampduty

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Exact decimals for the amount rule. An article's factor
// (amountPercentConsideration, such as 0.07) must be applied exactly: in
// float64, 0.07 × 100 is 7.000000000000001, and the rounding up of
// Article.Amount would charge 8. A Decimal is a uint64 and a scale; MulCeil
// multiplies with 128-bit integers (math/bits) and does not allocate. The
// same number-literal reading (scanNumber) turns the literal of an amount
// into an integer, with work bounded by the literal's length whatever its
// exponent.
//
// Why not math/big or a decimal library. Both were tried as ports of this
// file (big.Rat; github.com/shopspring/decimal v1.6.0, which, like
// cockroachdb/apd, keeps a *big.Int) and gave the same answers and errors on
// the inputs of decimal_test.go. Neither removes the hand-written part that
// matters: both accept what JSON does not (big.Rat "+1", ".5", "5.", "01",
// "0x10", "1_000"; shopspring "+1", ".5", "5.", "01"), and big.Rat builds
// 10^1000000 for "1e1000000" (51 ms, where scanNumber refuses it in
// microseconds), so scanNumber, significant and the bounds checks stay, and
// only decimal(), Cmp, appendTo and MulCeil would go, for about as many
// lines of glue: the 18-digit and uint64 limits, the plain shortest form
// (FloatString pads to a fixed width), the ceiling. What changes is cost and
// shape. go test -bench of the three side by side, medians of 5 (2 shared
// cores; ns/op, then allocs/op; the big.Rat port checks the uint64 limit
// by dividing trailing zeros away one at a time, most of its 44):
//
//	                 this file   big.Rat    shopspring
//	parse "0.07"       82  0     2429 44     231  3
//	parse "1e-18"     132  0      744 13     500  5
//	String "0.07"      70  1      742 12     308  2
//	MulCeil(123456789) 23  0      290  3     494  9
//	Cmp                24  0      143  0      82  0
//
// Fractions of a microsecond are not what a user sees, and neither port
// changes what a user sees: the answers and the 400s for "+1" or
// "1e1000000" come from the checks that stay hand-written either way. So
// the choice is between equal code, and the port would buy no lines, lose
// equality by value (decimal_test.go compares Decimals with ==,
// article_test.go articles with reflect.DeepEqual, which a *big.Int inside
// makes depend on its internal form) and allocate on every priced create
// (MulCeil). The type is kept.

// MaxDecimalScale is the largest number of fractional digits a Decimal holds.
const MaxDecimalScale = 18

// The errors of ParseDecimal and MulCeil; the returned errors wrap one of them.
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

// pow10 holds 10^0 … 10^19, every power of ten that fits in a uint64.
var pow10 = [...]uint64{
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
	10000000000, 100000000000, 1000000000000, 10000000000000, 100000000000000,
	1000000000000000, 10000000000000000, 100000000000000000, 1000000000000000000,
	10000000000000000000,
}

// Decimal is an exact non-negative decimal number: coef / 10^scale. It is
// kept normalised (no trailing fractional zeros), so equal values are equal
// structs and can be compared with ==. The zero value is 0.
type Decimal struct {
	coef  uint64
	scale uint8
}

// NewDecimal returns coef / 10^scale, normalised. It panics when scale is
// outside 0..18.
func NewDecimal(coef uint64, scale int) Decimal {
	if scale < 0 || scale > MaxDecimalScale {
		panic(fmt.Sprintf("stampduty.NewDecimal: scale %d outside 0..%d", scale, MaxDecimalScale))
	}
	for scale > 0 && coef%10 == 0 {
		coef /= 10
		scale--
	}
	if coef == 0 {
		scale = 0
	}
	return Decimal{coef: coef, scale: uint8(scale)}
}

// ParseDecimal parses a JSON number literal such as 0.07, 7E-2, 1 or 1.50.
// It rejects anything that is not a JSON number (a leading +, spaces, hex,
// NaN, the empty string), negative numbers (-0 is 0), numbers with more than
// 18 significant fractional digits and numbers too large for the
// representation. Huge exponents are rejected without building big numbers.
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

// String returns the shortest plain form of d: 0.07, 1, 12.5; never an exponent.
func (d Decimal) String() string {
	var buf [48]byte
	return string(d.appendTo(buf[:0]))
}

// appendTo appends the plain form of d to b.
func (d Decimal) appendTo(b []byte) []byte {
	if d.scale == 0 {
		return strconv.AppendUint(b, d.coef, 10)
	}
	var digits [24]byte
	ds := strconv.AppendUint(digits[:0], d.coef, 10)
	scale := int(d.scale)
	if len(ds) <= scale {
		b = append(b, '0', '.')
		for i := len(ds); i < scale; i++ {
			b = append(b, '0')
		}
		return append(b, ds...)
	}
	b = append(b, ds[:len(ds)-scale]...)
	b = append(b, '.')
	return append(b, ds[len(ds)-scale:]...)
}

// MarshalJSON writes d as a JSON number literal, the same text as String.
func (d Decimal) MarshalJSON() ([]byte, error) {
	return d.appendTo(make([]byte, 0, 24)), nil
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
	dh, dl := bits.Mul64(d.coef, pow10[s-d.scale])
	eh, el := bits.Mul64(e.coef, pow10[s-e.scale])
	switch {
	case dh < eh:
		return -1
	case dh > eh:
		return 1
	case dl < el:
		return -1
	case dl > el:
		return 1
	}
	return 0
}

// Sign returns 0 when d is zero and 1 otherwise (a Decimal is never negative).
func (d Decimal) Sign() int {
	if d.coef == 0 {
		return 0
	}
	return 1
}

// MulCeil returns ceil(price × d), computed exactly with 128-bit integers.
// A result that does not fit an int64 is an error wrapping ErrDecimalRange.
func (d Decimal) MulCeil(price uint64) (int64, error) {
	hi, lo := bits.Mul64(price, d.coef)
	den := pow10[d.scale]
	if hi >= den { // the quotient would not fit 64 bits
		return 0, fmt.Errorf("multiply decimal: %d × %s: %w", price, d, ErrDecimalRange)
	}
	q, r := bits.Div64(hi, lo, den)
	if q > math.MaxInt64 || q == math.MaxInt64 && r != 0 {
		return 0, fmt.Errorf("multiply decimal: %d × %s: %w", price, d, ErrDecimalRange)
	}
	if r != 0 {
		q++ // round up; cannot pass MaxInt64, checked above
	}
	return int64(q), nil
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
	if zero {
		return Decimal{}, nil
	}
	if n.neg {
		return Decimal{}, ErrDecimalNegative
	}
	if exp < -MaxDecimalScale {
		return Decimal{}, ErrDecimalPrecision
	}
	count := int64(last - first + 1)
	if exp > 0 && count+exp > 20 || count > 20 {
		return Decimal{}, ErrDecimalRange
	}
	var c uint64
	for i := first; i <= last; i++ {
		hi, lo := bits.Mul64(c, 10)
		sum, carry := bits.Add64(lo, uint64(n.digit(i)-'0'), 0)
		if hi != 0 || carry != 0 {
			return Decimal{}, ErrDecimalRange
		}
		c = sum
	}
	if exp >= 0 {
		hi, lo := bits.Mul64(c, pow10[exp])
		if hi != 0 {
			return Decimal{}, ErrDecimalRange
		}
		return Decimal{coef: lo}, nil
	}
	return Decimal{coef: c, scale: uint8(-exp)}, nil
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
