package duty

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
)

// A rule writes every value as a decimal string (duty-rules.md §2): money
// in rupees with at most 2 decimals, rates as fractions with at most 18,
// so that no tool on the way can turn one into a float. Both are read into
// big.Rat, exactly.
var (
	moneyPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,19})(\.[0-9]{1,2})?$`)
	ratePattern  = regexp.MustCompile(`^-?(0|1)(\.[0-9]{1,18})?$`)
)

// ParseMoney reads a rupee amount of a rule: digits without a sign or a
// leading zero, at most 20 before the point and 2 after ("500", "0.50",
// "1000000").
func ParseMoney(s string) (*big.Rat, error) {
	if !moneyPattern.MatchString(s) {
		return nil, fmt.Errorf("%q is not an amount in rupees: digits, at most 2 decimals, as a string", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not an amount in rupees", s)
	}
	return r, nil
}

// ParseRate reads a rate of a rule: a fraction, not a percent ("0.05" is
// 5%), at most 18 decimals, from -1 to 1. A negative rate is a concession.
func ParseRate(s string) (*big.Rat, error) {
	if !ratePattern.MatchString(s) {
		return nil, fmt.Errorf("%q is not a rate: a fraction from -1 to 1 with at most 18 decimals, as a string", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Cmp(big.NewRat(1, 1)) > 0 || r.Cmp(big.NewRat(-1, 1)) < 0 {
		return nil, fmt.Errorf("%q is not a rate from -1 to 1", s)
	}
	return r, nil
}

// FormatPaise writes p paise as rupees with exactly two decimals
// ("-12.50", "0.05"), as every amount of a quote is shown (§6).
func FormatPaise(p *big.Int) string {
	b := make([]byte, 0, 24)
	if p.IsInt64() { // every amount of a quote: no big.Int to divide
		v := p.Int64()
		u := uint64(v)
		if v < 0 {
			b = append(b, '-')
			u = -u
		}
		b = strconv.AppendUint(b, u/100, 10)
		return string(append(b, '.', byte('0'+u%100/10), byte('0'+u%10)))
	}
	var rupees, paise big.Int
	rupees.QuoRem(new(big.Int).Abs(p), hundred, &paise)
	if p.Sign() < 0 {
		b = append(b, '-')
	}
	b = rupees.Append(b, 10)
	n := paise.Int64()
	return string(append(b, '.', byte('0'+n/10), byte('0'+n%10)))
}
