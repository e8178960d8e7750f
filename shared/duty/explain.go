package duty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// Duty is an explained quote (§8): the rule that applied, the inputs it
// read, its bases and lines, and the total. Every line's amount adds up to
// Total exactly. An order keeps it as it was.
type Duty struct {
	Rule           RuleRef        `json:"rule"`
	InstrumentDate string         `json:"instrumentDate"`
	Inputs         map[string]any `json:"inputs"` // int64 or string, by name
	IgnoredInputs  []string       `json:"ignoredInputs"`
	Bases          []BaseValue    `json:"bases"`
	Lines          []Line         `json:"lines"`
	Total          string         `json:"total"`
	// Amount is Total in whole rupees: the order's amount.
	Amount int64 `json:"-"`
}

// RuleRef names the rule version a quote used (§7, §8). The catalogue
// fills in Article and ArticleVersion.
type RuleRef struct {
	Article        string    `json:"article"`
	ArticleVersion int64     `json:"articleVersion"`
	EffectiveFrom  *string   `json:"effectiveFrom"`
	EffectiveTo    *string   `json:"effectiveTo"`
	Hash           string    `json:"hash"`
	Citation       *Citation `json:"citation"`
}

// Ref returns the reference of v, without the article's names.
func (v *Version) Ref() RuleRef {
	ref := RuleRef{Hash: v.hash, Citation: v.Citation}
	if v.Period.From != "" {
		ref.EffectiveFrom = &v.Period.From
	}
	if v.Period.To != "" {
		ref.EffectiveTo = &v.Period.To
	}
	return ref
}

// BaseValue is a base as a quote computed it, rounded up to the paisa.
type BaseValue struct {
	Name   string `json:"name"`
	Amount string `json:"amount"`
}

// Line is one line of the explanation: a component that applied, or an
// adjustment of the total (kind "rounding" or "cap").
type Line struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Kind       string   `json:"kind"`
	Base       string   `json:"base,omitempty"`
	Of         []string `json:"of,omitempty"`
	Band       *BandRef `json:"band,omitempty"`
	BaseAmount string   `json:"baseAmount,omitempty"`
	Rate       string   `json:"rate,omitempty"`
	Unit       string   `json:"unit,omitempty"`
	Units      string   `json:"units,omitempty"` // a count, as a string: it may pass what a JavaScript number holds
	Exact      string   `json:"exact,omitempty"`
	Rounding   string   `json:"rounding,omitempty"`
	Limit      string   `json:"limit,omitempty"`
	Amount     string   `json:"amount"`
	paise      *big.Int // Amount
}

// BandRef is the band of a slabs component that a value fell in.
type BandRef struct {
	Index int     `json:"index"`
	UpTo  *string `json:"upTo"`
}

// The kinds of the adjustment lines of the total (§8).
const (
	KindRounding = "rounding"
	KindCap      = "cap"
)

// formatExact writes x as a decimal when it terminates (no trailing
// zeros: "4500.001", "500"), else as "p/q".
func formatExact(x *big.Rat) string {
	if x.IsInt() {
		return x.Num().String()
	}
	// x = n / (2^twos · 5^fives · rest): a decimal of k = max(twos, fives)
	// places when rest is 1, n · 2^(k−twos) · 5^(k−fives) / 10^k.
	d := x.Denom()
	twos := d.TrailingZeroBits()
	rest := new(big.Int).Rsh(d, twos)
	fives := uint(0)
	var q, m big.Int
	for {
		q.QuoRem(rest, five, &m)
		if m.Sign() != 0 {
			break
		}
		rest.Set(&q)
		fives++
	}
	if rest.Cmp(one) != 0 {
		return x.String()
	}
	k := max(twos, fives)
	digits := new(big.Int).Abs(x.Num())
	digits.Lsh(digits, k-twos)
	digits.Mul(digits, new(big.Int).Exp(five, big.NewInt(int64(k-fives)), nil))
	s := digits.Text(10)
	if len(s) <= int(k) {
		s = strings.Repeat("0", int(k)-len(s)+1) + s
	}
	s = s[:len(s)-int(k)] + "." + s[len(s)-int(k):]
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if x.Sign() < 0 {
		s = "-" + s
	}
	return s
}

var one, five = big.NewInt(1), big.NewInt(5)

// formatRat writes an amount that is a whole number of paise with two
// decimals; a value with more (never a base, which is rounded to the
// paisa first) is rounded up.
func formatRat(x *big.Rat) string {
	return FormatPaise(Rounding{Step: big.NewInt(1), Mode: Up}.Round(x))
}

// stepText writes a step in paise as rupees: "0.01", "1", "100", "0.50".
func stepText(step *big.Int) string {
	return strings.TrimSuffix(FormatPaise(step), ".00")
}

// roundingText says what a rounding did: "up to ₹0.01", "half up to ₹100".
func roundingText(r Rounding) string {
	var mode string
	switch r.Mode {
	case Up:
		mode = "up"
	case Down:
		mode = "down"
	case HalfUp:
		mode = "half up"
	}
	return mode + " to ₹" + stepText(r.Step)
}

// UnmarshalJSON reads a duty as MarshalJSON wrote it (an order keeps it):
// numeric inputs stay integers, never floats.
func (d *Duty) UnmarshalJSON(b []byte) error {
	type plain Duty // without this method
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("duty: %w", err)
	}
	for k, v := range p.Inputs {
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				return fmt.Errorf("duty: input %s: %w", k, err)
			}
			p.Inputs[k] = i
		}
	}
	if r, ok := new(big.Rat).SetString(p.Total); ok && r.IsInt() {
		p.Amount = r.Num().Int64()
	}
	*d = Duty(p)
	return nil
}
