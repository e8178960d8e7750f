package duty

import (
	"fmt"
	"math/big"
)

// The modes of a Rounding (duty-rules.md §5).
const (
	// Up rounds toward +∞: a duty is never under-paid, and a negative
	// concession is rounded toward zero.
	Up = "up"
	// Down rounds toward −∞.
	Down = "down"
	// HalfUp rounds to the nearest step, a tie toward +∞ (as Up, so that a
	// tie never lowers the duty). The spec names the mode without saying
	// where a negative tie goes; this is the choice, written here.
	HalfUp = "halfUp"
)

// Rounding is a rule's `{"step", "mode"}`: a step in paise (a positive
// multiple of "0.01" rupees) and a mode.
type Rounding struct {
	Step *big.Int // paise, > 0
	Mode string
}

// ParseRounding reads a rule's rounding: step a positive amount in rupees
// with at most 2 decimals, mode Up, Down or HalfUp.
func ParseRounding(step, mode string) (Rounding, error) {
	s, err := ParseMoney(step)
	if err != nil {
		return Rounding{}, fmt.Errorf("step: %w", err)
	}
	paise := new(big.Rat).Mul(s, big.NewRat(100, 1))
	if paise.Sign() <= 0 || !paise.IsInt() {
		return Rounding{}, fmt.Errorf("step: %q is not a positive multiple of 0.01", step)
	}
	switch mode {
	case Up, Down, HalfUp:
	default:
		return Rounding{}, fmt.Errorf("mode: %q is not one of up, down, halfUp", mode)
	}
	return Rounding{Step: new(big.Int).Set(paise.Num()), Mode: mode}, nil
}

// Round returns x rupees rounded to r's step, in paise: exact, whatever
// the size of x.
func (r Rounding) Round(x *big.Rat) *big.Int {
	p, _ := r.round(x)
	return p
}

// round is Round, and whether x was a whole number of steps already (the
// rounding did not change it).
func (r Rounding) round(x *big.Rat) (*big.Int, bool) {
	// x in steps: n/d = x.Num()·100 / (x.Denom()·Step), with d > 0; the
	// fraction is left unreduced, which changes neither ⌊n/d⌋ nor m/d.
	n := new(big.Int).Mul(x.Num(), hundred)
	d := new(big.Int).Mul(x.Denom(), r.Step)
	q, m := new(big.Int).DivMod(n, d, new(big.Int)) // q = ⌊n/d⌋, 0 ≤ m < d (Euclidean, d > 0)
	if m.Sign() != 0 {
		switch r.Mode {
		case Up:
			q.Add(q, one)
		case HalfUp:
			if m.Lsh(m, 1).Cmp(d) >= 0 { // the fraction is at least one half
				q.Add(q, one)
			}
		}
		return q.Mul(q, r.Step), false
	}
	return q.Mul(q, r.Step), true
}
