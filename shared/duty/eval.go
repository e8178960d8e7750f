package duty

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Request is what a quote or a create asks of an article's rules (§6):
// the instrument date and the inputs sent, each already read in its form
// (an integer in 0..MaxInput, an enum value as a string) by the caller,
// which reports the ones it could not read itself (Malformed).
type Request struct {
	// Purpose and State name the article in messages.
	Purpose, State string
	Date           string // "YYYY-MM-DD", checked by the caller
	Numbers        map[string]int64
	Enums          map[string]string
	// Malformed are inputs sent whose form the caller refused: they are
	// neither read nor reported again.
	Malformed map[string]bool

	probe bool // Check's evaluations: the caller's amount is not compared
}

// InputError is a quote's or a create's inputs broken against the rule
// (§10): one problem per input, path [name], in InputNames' order; the
// version is nil when none is in force on the date. An input of the
// version that the caller found malformed (Request.Malformed) makes an
// InputError too, without a problem of its own: the caller reports it.
type InputError struct {
	Problems []Problem
	Version  *Version
}

func (e *InputError) Error() string {
	var msgs []string
	for _, p := range e.Problems {
		msgs = append(msgs, p.Message)
	}
	return strings.Join(msgs, "; ")
}

// BrokenError is a rule that cannot be applied to the inputs it was given
// (§6 step 7): a total below 0 or above MaxInput, or an amount past the
// digits §6 gives it (15 for a line, 20 for a base or baseAmount). It is a fault of the
// catalogue, logged and never shown; Check refuses to save such a rule
// for every input the probe tries.
type BrokenError struct{ Why string }

func (e *BrokenError) Error() string { return "the duty rule is broken: " + e.Why }

// The legacy messages (§9), word for word the contract's.
const (
	msgLegacyConsideration = "The consideration price must be greater than 0 for the selected purpose. Please provide a valid consideration price."
)

// Evaluate selects the version of rs in force on req.Date and evaluates it.
func (rs Rules) Evaluate(req Request) (*Duty, error) {
	v, ok := rs.InForce(req.Date)
	if !ok {
		msg := fmt.Sprintf("no duty rule of %s in %s is in force on %s", req.Purpose, req.State, req.Date)
		return nil, &InputError{Problems: []Problem{{Path: []any{"instrumentDate"}, Message: msg}}}
	}
	return v.Evaluate(req)
}

// InForce returns the version of rs in force on date (§6 step 1).
func (rs Rules) InForce(date string) (*Version, bool) {
	ps := make([]Period, len(rs))
	for i, v := range rs {
		ps[i] = v.Period
	}
	i, ok := InForce(ps, date)
	if !ok {
		return nil, false
	}
	return rs[i], true
}

// inputNames is InputNames, read without a copy.
var inputNames = InputNames()

// paisa is the rounding of a base and the default of a component: up to ₹0.01.
var paisa = Rounding{Step: big.NewInt(1), Mode: Up}

// hundred is 100, paise a rupee.
var hundred = big.NewInt(100)

// rupeesOf returns p paise as rupees.
func rupeesOf(p *big.Int) *big.Rat { return new(big.Rat).SetFrac(p, hundred) }

// maxPaise is the largest amount a line or a total may hold: MaxInput
// rupees and 99 paise (§6: 15 digits before the point).
var maxPaise = new(big.Int).Add(new(big.Int).Mul(big.NewInt(MaxInput), hundred), big.NewInt(99))

// maxBasePaise is the largest base or baseAmount a quote may show: 20
// digits of rupees and 99 paise (§6: a licence base of rent × months may
// pass 15 digits, not 20).
var maxBasePaise = new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(22), nil), big.NewInt(1))

// Evaluate applies the version to req (§6 steps 2–7).
func (v *Version) Evaluate(req Request) (*Duty, error) {
	d := &Duty{Rule: v.Ref(), InstrumentDate: req.Date, Inputs: make(map[string]any, len(v.Inputs)), IgnoredInputs: []string{},
		Bases: make([]BaseValue, 0, len(v.Bases)), Lines: make([]Line, 0, len(v.Components)+3)}
	values := make(map[string]*big.Rat, len(v.Inputs)+len(v.Bases))
	enums := make(map[string]string, len(enumInputs))
	var bad []Problem
	fail := func(name, msg string) { bad = append(bad, Problem{Path: []any{name}, Message: msg}) }
	malformed := false // an input the version reads that the caller refused
	for _, in := range v.Inputs {
		if req.Malformed[in.Name] {
			malformed = true
			continue
		}
		if in.Enum {
			s, sent := req.Enums[in.Name]
			if !sent {
				s = in.Default
			}
			switch {
			case s == "" && in.Required:
				fail(in.Name, v.requiredMessage(in.Name, req))
			case s == "":
			case !slices.Contains(in.Values, s):
				fail(in.Name, fmt.Sprintf("%s must be one of: %s", in.Name, strings.Join(in.Values, ", ")))
			default:
				enums[in.Name] = s
				d.Inputs[in.Name] = s
			}
			continue
		}
		n, sent := req.Numbers[in.Name]
		if !sent && in.Default != "" {
			r, _ := new(big.Rat).SetString(in.Default)
			n, sent = r.Num().Int64(), true
		}
		legacyPrice := v.Legacy && in.Name == "considerationPrice"
		switch {
		case !sent && in.Required && legacyPrice:
			fail(in.Name, msgLegacyConsideration)
		case !sent && in.Required:
			fail(in.Name, v.requiredMessage(in.Name, req))
		case !sent:
		case in.Positive && n <= 0 && legacyPrice:
			fail(in.Name, msgLegacyConsideration)
		case in.Positive && n <= 0:
			fail(in.Name, in.Name+" must be greater than 0 for this purpose")
		case n < in.Min:
			fail(in.Name, fmt.Sprintf("%s must be at least %d for this purpose", in.Name, in.Min))
		case n > in.Max:
			fail(in.Name, fmt.Sprintf("%s must be at most %d for this purpose", in.Name, in.Max))
		default:
			values[in.Name] = new(big.Rat).SetInt64(n)
			d.Inputs[in.Name] = n
		}
	}
	for _, name := range inputNames {
		_, num := req.Numbers[name]
		_, enum := req.Enums[name]
		if (num || enum || req.Malformed[name]) && v.input(name) == nil {
			d.IgnoredInputs = append(d.IgnoredInputs, name)
		}
	}
	if len(bad) > 0 || malformed { // never evaluated without an input it reads
		return nil, &InputError{Problems: bad, Version: v}
	}
	for _, in := range v.Inputs { // optional inputs not sent and without a default read 0
		if _, ok := values[in.Name]; !ok && !in.Enum {
			values[in.Name] = new(big.Rat)
		}
	}

	for _, b := range v.Bases {
		x, err := b.Expr.eval(values)
		if err != nil {
			return nil, &BrokenError{Why: fmt.Sprintf("base %s: %v", b.Name, err)}
		}
		p := paisa.Round(x)
		if p.CmpAbs(maxBasePaise) > 0 {
			return nil, &BrokenError{Why: fmt.Sprintf("base %s is %s, past 20 digits", b.Name, FormatPaise(p))}
		}
		values[b.Name] = rupeesOf(p)
		d.Bases = append(d.Bases, BaseValue{Name: b.Name, Amount: FormatPaise(p)})
	}

	amounts := make(map[string]*big.Int, len(v.Components)) // the components that applied
	sum := new(big.Int)
	for _, c := range v.Components {
		line, ok, err := c.evaluate(values, enums, amounts, v, req)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		amounts[c.ID] = line.paise
		sum.Add(sum, line.paise)
		d.Lines = append(d.Lines, line)
	}

	total := v.Total.Rounding.Round(rupeesOf(sum))
	if diff := new(big.Int).Sub(total, sum); diff.Sign() != 0 {
		d.Lines = append(d.Lines, adjustment(KindRounding, KindRounding, "Total rounded "+roundingText(v.Total.Rounding), diff))
	}
	if v.Total.Min != nil {
		if lo := paiseOf(v.Total.Min); total.Cmp(lo) < 0 {
			d.Lines = append(d.Lines, adjustment("minimum", KindCap, "Minimum duty ₹"+stepText(lo), new(big.Int).Sub(lo, total)))
			total = lo
		}
	}
	if v.Total.Max != nil {
		if hi := paiseOf(v.Total.Max); total.Cmp(hi) > 0 {
			d.Lines = append(d.Lines, adjustment("maximum", KindCap, "Maximum duty ₹"+stepText(hi), new(big.Int).Sub(hi, total)))
			total = hi
		}
	}
	for _, l := range d.Lines {
		if l.paise.CmpAbs(maxPaise) > 0 {
			return nil, &BrokenError{Why: fmt.Sprintf("line %s is %s, past 15 digits", l.ID, l.Amount)}
		}
		if rupees, _, _ := strings.Cut(strings.TrimPrefix(l.BaseAmount, "-"), "."); len(rupees) > 20 {
			return nil, &BrokenError{Why: fmt.Sprintf("line %s has a base of %s, past 20 digits", l.ID, l.BaseAmount)}
		}
	}
	if total.Sign() < 0 || total.Cmp(new(big.Int).Mul(big.NewInt(MaxInput), hundred)) > 0 {
		return nil, &BrokenError{Why: fmt.Sprintf("the total is %s", FormatPaise(total))}
	}
	d.Total = FormatPaise(total)
	d.Amount = new(big.Int).Quo(total, hundred).Int64()
	if v.DeclaredEqual && !req.probe {
		if sent, ok := values["amount"]; ok && sent.Num().Int64() != d.Amount {
			msg := fmt.Sprintf("The duty for the purpose is: %d, while the amount passed is equal to: %d", d.Amount, sent.Num().Int64())
			if v.Legacy {
				msg = fmt.Sprintf("The purpose have a fixed amount of: %d, while the amount passed is equal to: %d", d.Amount, sent.Num().Int64())
			}
			return nil, &InputError{Problems: []Problem{{Path: []any{"amount"}, Message: msg}}, Version: v}
		}
	}
	return d, nil
}

// requiredMessage is §10's message of a required input that is absent.
func (v *Version) requiredMessage(name string, req Request) string {
	return fmt.Sprintf("%s is required by the duty rule of %s in %s in force on %s", name, req.Purpose, req.State, req.Date)
}

// paiseOf returns a whole number of paise from rupees with at most 2 decimals.
func paiseOf(r *big.Rat) *big.Int {
	p := new(big.Int).Mul(r.Num(), hundred)
	return p.Quo(p, r.Denom())
}

// adjustment is a line of the total's rounding or caps.
func adjustment(id, kind, label string, p *big.Int) Line {
	return Line{ID: id, Label: label, Kind: kind, Amount: FormatPaise(p), paise: p}
}

// eval computes an expression exactly.
func (e *Expr) eval(values map[string]*big.Rat) (*big.Rat, error) {
	switch e.Op {
	case opInput, opBase:
		x, ok := values[e.Name]
		if !ok {
			return nil, fmt.Errorf("%s has no value", e.Name)
		}
		return x, nil
	case opConst:
		return e.Const, nil
	}
	args := make([]*big.Rat, len(e.Args))
	for i, a := range e.Args {
		x, err := a.eval(values)
		if err != nil {
			return nil, err
		}
		args[i] = x
	}
	out := new(big.Rat).Set(args[0])
	for _, x := range args[1:] {
		switch e.Op {
		case opSum:
			out.Add(out, x)
		case opMul:
			out.Mul(out, x)
		case opDiv:
			if x.Sign() == 0 {
				return nil, fmt.Errorf("division by 0")
			}
			out.Quo(out, x)
		case opMax:
			if x.Cmp(out) > 0 {
				out.Set(x)
			}
		case opMin:
			if x.Cmp(out) < 0 {
				out.Set(x)
			}
		}
	}
	return out, nil
}

// applies reports whether every condition of c holds.
func (c *Component) applies(enums map[string]string) bool {
	for _, w := range c.When {
		if !slices.Contains(w.Values, enums[w.Input]) {
			return false
		}
	}
	return true
}

// evaluate computes one component's line (§6 step 4); ok false when it
// does not apply.
func (c *Component) evaluate(values map[string]*big.Rat, enums map[string]string, amounts map[string]*big.Int, v *Version, req Request) (Line, bool, error) {
	if !c.applies(enums) {
		return Line{}, false, nil
	}
	l := Line{ID: c.ID, Label: c.Label, Kind: c.Kind}
	var exact *big.Rat
	var lo, hi *big.Rat // the band's bounds, then the component's
	switch c.Kind {
	case KindFixed:
		exact = c.Amount
	case KindDeclared:
		sent := values["amount"]
		if !req.probe && (sent.Cmp(c.Min) < 0 || sent.Cmp(c.Max) > 0) {
			msg := fmt.Sprintf("The purpose can take an amount in the range of: %s-%s, while the amount passed is equal to: %s", stepText(paiseOf(c.Min)), stepText(paiseOf(c.Max)), sent.RatString())
			return Line{}, false, &InputError{Problems: []Problem{{Path: []any{"amount"}, Message: msg}}, Version: v}
		}
		exact = sent
	case KindPercent:
		base := values[c.Base]
		if c.BaseStep != nil {
			base = rupeesOf(c.BaseStep.Round(base))
		}
		l.Base, l.BaseAmount, l.Rate = c.Base, formatRat(base), c.RateText
		exact = new(big.Rat).Mul(c.Rate, base)
	case KindPerUnit:
		base := values[c.Base]
		x := new(big.Rat).Set(base)
		if c.Over != nil {
			x.Sub(x, c.Over)
		}
		units := new(big.Int)
		if x.Sign() > 0 {
			q := new(big.Rat).Quo(x, c.Unit)
			var m big.Int
			units.QuoRem(q.Num(), q.Denom(), &m)
			if m.Sign() != 0 && c.PartCounts {
				units.Add(units, big.NewInt(1))
			}
		}
		l.Base, l.BaseAmount, l.Unit, l.Units = c.Base, formatRat(base), stepText(paiseOf(c.Unit)), units.String()
		exact = new(big.Rat).Mul(new(big.Rat).SetInt(units), c.Amount)
	case KindSlabs:
		base := values[c.Base]
		sel := base
		if c.SelectBy != "" {
			sel = values[c.SelectBy]
		}
		i := bandOf(c.Bands, sel)
		b := c.Bands[i]
		l.Base = c.Base
		l.Band = &BandRef{Index: i}
		if b.UpTo != nil {
			l.Band.UpTo = &b.UpToText
		}
		if c.Method == MethodMarginal {
			exact = new(big.Rat)
			lower := new(big.Rat)
			var part big.Rat
			for _, b := range c.Bands {
				part.Sub(base, lower)
				if b.UpTo != nil && cmpRat(base, b.UpTo) > 0 {
					part.Sub(b.UpTo, lower)
				}
				if part.Sign() <= 0 {
					break
				}
				exact.Add(exact, part.Mul(b.Rate, &part))
				if b.UpTo == nil {
					break
				}
				lower = b.UpTo
			}
			l.BaseAmount = formatRat(base)
		} else {
			if b.BaseStep != nil {
				base = rupeesOf(b.BaseStep.Round(base))
			}
			exact = new(big.Rat)
			if b.Amount != nil {
				exact.Add(exact, b.Amount)
			}
			if b.Rate != nil {
				exact.Add(exact, new(big.Rat).Mul(b.Rate, base))
				l.Rate = b.RateText
			}
			l.BaseAmount = formatRat(base)
			lo, hi = b.Min, b.Max
		}
	case KindPercentOf:
		of := new(big.Int)
		applied := false
		for _, id := range c.Of {
			if p, ok := amounts[id]; ok {
				of.Add(of, p)
				applied = true
			}
		}
		if !applied {
			return Line{}, false, nil
		}
		base := rupeesOf(of)
		l.Of, l.BaseAmount, l.Rate = c.Of, FormatPaise(of), c.RateText
		exact = new(big.Rat).Mul(c.Rate, base)
	}
	l.Exact = formatExact(exact)
	p, unchanged := c.Rounding.round(exact)
	if !unchanged {
		l.Rounding = roundingText(c.Rounding)
	}
	clamp := func(lo, hi *big.Rat) {
		if lo != nil {
			if lp := paiseOf(lo); p.Cmp(lp) < 0 {
				p, l.Limit = lp, "min"
			}
		}
		if hi != nil {
			if hp := paiseOf(hi); p.Cmp(hp) > 0 {
				p, l.Limit = hp, "max"
			}
		}
	}
	clamp(lo, hi)
	if c.Kind != KindDeclared {
		clamp(c.Min, c.Max)
	}
	l.paise, l.Amount = p, FormatPaise(p)
	return l, true, nil
}

// bandOf returns the index of the first band whose upTo x does not exceed.
func bandOf(bands []*Band, x *big.Rat) int {
	for i, b := range bands {
		if b.UpTo == nil || cmpRat(x, b.UpTo) <= 0 {
			return i
		}
	}
	return len(bands) - 1
}

// cmpRat is a.Cmp(b) without its allocations when both are whole numbers,
// as a value and a band's upTo mostly are.
func cmpRat(a, b *big.Rat) int {
	if a.IsInt() && b.IsInt() {
		return a.Num().Cmp(b.Num())
	}
	return a.Cmp(b)
}
