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
	// x in steps: n/d, with d > 0.
	steps := new(big.Rat).Quo(new(big.Rat).Mul(x, big.NewRat(100, 1)), new(big.Rat).SetInt(r.Step))
	n, d := steps.Num(), steps.Denom()
	q, m := new(big.Int).DivMod(n, d, new(big.Int)) // q = ⌊n/d⌋, 0 ≤ m < d (Euclidean, d > 0)
	if m.Sign() != 0 {
		switch r.Mode {
		case Up:
			q.Add(q, big.NewInt(1))
		case HalfUp:
			if new(big.Int).Lsh(m, 1).Cmp(d) >= 0 { // the fraction is at least one half
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return q.Mul(q, r.Step)
}
