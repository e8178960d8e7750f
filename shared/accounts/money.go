package accounts

import (
	"fmt"
	"strconv"
	"strings"

	"stampduty/shared/stampduty"
)

// Money is an amount of Indian rupees, exact to the paisa: a count of
// paise. It is never a float. The API writes it as a string with exactly
// two decimals ("125000.00", "-40.50"), at most 15 digits before the point.
type Money int64

// Rupees returns whole rupees as Money: the duty of an order (its
// amounts are whole rupees) as the ledger counts it.
func Rupees(r int64) Money { return Money(r * 100) }

// MaxMoneyDigits is the most digits an amount may have before its point.
const MaxMoneyDigits = 15

// String writes m as the API does: "125000.00", "-40.50", "0.00".
func (m Money) String() string {
	sign, v := "", int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// Plain is m as a CSV money cell: the same as String.
func (m Money) Plain() string { return m.String() }

// Indian writes m as a person in India reads it, in the 402's message:
// "₹1,20,000.00" (the last three digits, then groups of two).
func (m Money) Indian() string {
	s := m.String()
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(whole) > 3 {
		head, tail := whole[:len(whole)-3], whole[len(whole)-3:]
		var groups []string
		for len(head) > 2 {
			groups = append([]string{head[len(head)-2:]}, groups...)
			head = head[:len(head)-2]
		}
		if head != "" {
			groups = append([]string{head}, groups...)
		}
		whole = strings.Join(append(groups, tail), ",")
	}
	return sign + "₹" + whole + "." + frac
}

// Sign says whether an amount read from a request may be negative.
type Sign bool

// The two signs ParseMoney knows.
const (
	Unsigned Sign = false // an amount that is never below zero: a credit, a limit
	Signed   Sign = true  // an adjustment: its sign says its direction
)

// ParseMoney reads the money string s of the request field path: digits,
// a point and exactly two decimals, a leading "-" only when sign is
// Signed, at most MaxMoneyDigits digits before the point. Anything else is
// EINVALID naming path (accounts.md, Money).
func ParseMoney(path, s string, sign Sign) (Money, error) {
	bad := func(why string) (Money, error) {
		return 0, stampduty.Invalid([]stampduty.FieldError{{Path: path, Message: path + " " + why}})
	}
	neg := false
	if strings.HasPrefix(s, "-") {
		if sign != Signed {
			return bad("must not be negative")
		}
		neg, s = true, s[1:]
	}
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 2 || whole == "" || !digits(whole) || !digits(frac) {
		return bad(`must be a string of rupees with exactly two decimals, such as "1000.00"`)
	}
	if len(whole) > 1 && whole[0] == '0' {
		return bad(`must be a string of rupees with exactly two decimals, such as "1000.00"`)
	}
	if len(whole) > MaxMoneyDigits {
		return bad(fmt.Sprintf("must have at most %d digits before the point", MaxMoneyDigits))
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return bad("is out of range")
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	m := Money(w*100 + f)
	if neg {
		m = -m
	}
	return m, nil
}

// digits reports whether s is ASCII digits only.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
