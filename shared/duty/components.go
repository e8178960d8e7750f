package duty

import (
	"math/big"
	"slices"
	"unicode/utf8"
)

// The fields of a component of each kind (§5), besides the common ones.
var kindFields = map[string][]string{
	KindFixed:     {"amount"},
	KindDeclared:  {},
	KindPercent:   {"base", "rate", "baseStep"},
	KindPerUnit:   {"base", "unit", "amount", "part", "over"},
	KindSlabs:     {"base", "method", "bands", "selectBy"},
	KindPercentOf: {"of", "rate"},
}

// commonFields are the fields every component may have.
var commonFields = []string{"id", "label", "kind", "when", "min", "max", "rounding"}

// components reads a version's components, in order.
func (r reader) components(n *node, path []any, v *Version) []*Component {
	if n.kind != jArray {
		r.ps.add(path, "components must be an array, not %s", kindNames[n.kind])
		return nil
	}
	if len(n.items) < 1 || len(n.items) > MaxComponents {
		r.ps.add(path, "components must hold 1 to %d components", MaxComponents)
	}
	var out []*Component
	ids := map[string]int{}
	for i, it := range n.items {
		p := at(path, i)
		c := r.component(it, p, v, out)
		if c == nil {
			out = append(out, &Component{}) // keeps the places of the ones after
			continue
		}
		if j, ok := ids[c.ID]; ok && c.ID != "" {
			r.ps.add(at(p, "id"), "id %q is already the id of components[%d]: ids are unique", c.ID, j)
		} else if c.ID != "" {
			ids[c.ID] = i
		}
		out = append(out, c)
	}
	return out
}

// component reads one component; earlier are the ones before it.
func (r reader) component(n *node, path []any, v *Version, earlier []*Component) *Component {
	if n.kind != jObject {
		r.ps.add(path, "%s must be an object, not %s", lastName(path), kindNames[n.kind])
		return nil
	}
	c := &Component{Rounding: Rounding{Step: big.NewInt(1), Mode: Up}}
	kn := r.required(n, path, "kind")
	if kn == nil {
		return nil
	}
	kind, ok := r.str(kn, at(path, "kind"))
	if !ok {
		return nil
	}
	fields, ok := kindFields[kind]
	if !ok {
		r.ps.add(at(path, "kind"), "kind must be one of: fixed, declared, percent, perUnit, slabs, percentOf")
		return nil
	}
	c.Kind = kind
	r.object(n, path, append(slices.Clone(commonFields), fields...)...)
	if idn := r.required(n, path, "id"); idn != nil {
		if s, ok := r.str(idn, at(path, "id")); ok {
			if !idPattern.MatchString(s) {
				r.ps.add(at(path, "id"), "id must be lower-case letters, digits and _, starting with a letter, at most 32")
			}
			c.ID = s
		}
	}
	if ln := r.required(n, path, "label"); ln != nil {
		if s, ok := r.str(ln, at(path, "label")); ok {
			if k := utf8.RuneCountInString(s); k < 1 || k > maxLabel || !printable(s) {
				r.ps.add(at(path, "label"), "label must be 1 to %d printable characters", maxLabel)
			}
			c.Label = s
		}
	}
	if w := n.get("when"); w != nil {
		c.When = r.when(w, at(path, "when"), v)
	}
	if ro := n.get("rounding"); ro != nil {
		if got := r.rounding(ro, at(path, "rounding")); got != nil {
			c.Rounding = *got
		}
	}
	minN, maxN := n.get("min"), n.get("max")
	if kind == KindDeclared {
		minN, maxN = r.required(n, path, "min"), r.required(n, path, "max")
		if v.input("amount") == nil {
			r.ps.add(at(path, "kind"), "a declared component reads the caller's amount: inputs must declare amount")
		}
	}
	if minN != nil {
		c.Min = r.money(minN, at(path, "min"))
	}
	if maxN != nil {
		c.Max = r.money(maxN, at(path, "max"))
	}
	if c.Min != nil && c.Max != nil && c.Min.Cmp(c.Max) > 0 {
		r.ps.add(at(path, "max"), "max must be at least min")
	}
	switch kind {
	case KindFixed:
		if a := r.required(n, path, "amount"); a != nil {
			c.Amount = r.money(a, at(path, "amount"))
		}
	case KindPercent:
		c.Base = r.baseName(n, path, "base", v)
		if rn := r.required(n, path, "rate"); rn != nil {
			c.Rate, c.RateText = r.rate(rn, at(path, "rate"))
		}
		if bs := n.get("baseStep"); bs != nil {
			c.BaseStep = r.rounding(bs, at(path, "baseStep"))
		}
	case KindPerUnit:
		c.Base = r.baseName(n, path, "base", v)
		if u := r.required(n, path, "unit"); u != nil {
			if c.Unit = r.money(u, at(path, "unit")); c.Unit != nil && c.Unit.Sign() == 0 {
				r.ps.add(at(path, "unit"), "unit must be above 0")
			}
		}
		if a := r.required(n, path, "amount"); a != nil {
			c.Amount = r.money(a, at(path, "amount"))
		}
		if pn := r.required(n, path, "part"); pn != nil {
			if s, ok := r.str(pn, at(path, "part")); ok {
				switch s {
				case "counts":
					c.PartCounts = true
				case "ignored":
				default:
					r.ps.add(at(path, "part"), "part must be \"counts\" or \"ignored\"")
				}
			}
		}
		if o := n.get("over"); o != nil {
			c.Over = r.money(o, at(path, "over"))
		}
	case KindSlabs:
		c.Base = r.baseName(n, path, "base", v)
		if mn := r.required(n, path, "method"); mn != nil {
			if s, ok := r.str(mn, at(path, "method")); ok {
				if s != MethodWhole && s != MethodMarginal {
					r.ps.add(at(path, "method"), "method must be \"whole\" or \"marginal\"")
				}
				c.Method = s
			}
		}
		if n.get("selectBy") != nil {
			if c.Method == MethodMarginal {
				r.ps.add(at(path, "selectBy"), "selectBy is for whole slabs only: marginal bands apply to the base itself")
			} else {
				c.SelectBy = r.baseName(n, path, "selectBy", v)
			}
		}
		if bn := r.required(n, path, "bands"); bn != nil {
			c.Bands = r.bands(bn, at(path, "bands"), c.Method)
		}
	case KindPercentOf:
		if rn := r.required(n, path, "rate"); rn != nil {
			c.Rate, c.RateText = r.rate(rn, at(path, "rate"))
		}
		if on := r.required(n, path, "of"); on != nil {
			c.Of = r.of(on, at(path, "of"), earlier)
		}
	}
	return c
}

// baseName reads a component's reference to a base or a numeric input.
func (r reader) baseName(n *node, path []any, key string, v *Version) string {
	bn := r.required(n, path, key)
	if bn == nil {
		return ""
	}
	s, ok := r.str(bn, at(path, key))
	if !ok {
		return ""
	}
	if in := v.input(s); (in == nil || in.Enum) && !hasBase(v.Bases, s) {
		r.ps.add(at(path, key), "%s %q is neither a base nor a numeric input of the version", key, s)
		return ""
	}
	return s
}

// when reads a component's condition: declared enum inputs, each with
// values of its own.
func (r reader) when(n *node, path []any, v *Version) []Condition {
	if n.kind != jObject {
		r.ps.add(path, "when must be an object, not %s", kindNames[n.kind])
		return nil
	}
	if len(n.members) == 0 {
		r.ps.add(path, "when must name at least one enum input")
	}
	var out []Condition
	for _, m := range n.members {
		p := at(path, m.name)
		in := v.input(m.name)
		if in == nil || !in.Enum {
			r.ps.add(p, "%s is not an enum input the version declares", m.name)
			continue
		}
		if m.value.kind != jArray || len(m.value.items) == 0 {
			r.ps.add(p, "%s must be a non-empty array of the input's values", m.name)
			continue
		}
		cond := Condition{Input: m.name}
		for i, it := range m.value.items {
			s, ok := r.str(it, at(p, i))
			if !ok {
				continue
			}
			if !slices.Contains(in.Values, s) {
				r.ps.add(at(p, i), "%q is not one of the values of %s", s, m.name)
				continue
			}
			cond.Values = append(cond.Values, s)
		}
		out = append(out, cond)
	}
	return out
}

// of reads a percentOf's components: ids of earlier components, each once.
func (r reader) of(n *node, path []any, earlier []*Component) []string {
	if n.kind != jArray || len(n.items) == 0 {
		r.ps.add(path, "of must be a non-empty array of ids of earlier components")
		return nil
	}
	var out []string
	for i, it := range n.items {
		s, ok := r.str(it, at(path, i))
		if !ok {
			continue
		}
		found := false
		for _, e := range earlier {
			found = found || (e.ID == s && e.ID != "")
		}
		switch {
		case !found:
			r.ps.add(at(path, i), "%q is not the id of an earlier component", s)
		case slices.Contains(out, s):
			r.ps.add(at(path, i), "%q is named twice", s)
		}
		out = append(out, s)
	}
	return out
}

// bands reads a slabs component's bands for its method.
func (r reader) bands(n *node, path []any, method string) []*Band {
	if n.kind != jArray {
		r.ps.add(path, "bands must be an array, not %s", kindNames[n.kind])
		return nil
	}
	if len(n.items) < 1 || len(n.items) > MaxBands {
		r.ps.add(path, "bands must hold 1 to %d bands", MaxBands)
	}
	allowed := []string{"upTo", "rate", "amount", "baseStep", "min", "max"}
	if method == MethodMarginal {
		allowed = []string{"upTo", "rate"}
	}
	var out []*Band
	var prev *big.Rat
	for i, it := range n.items {
		p := at(path, i)
		if it.kind != jObject {
			r.ps.add(p, "bands[%d] must be an object, not %s", i, kindNames[it.kind])
			continue
		}
		if method == MethodMarginal {
			for _, k := range []string{"amount", "baseStep", "min", "max"} {
				if it.get(k) != nil {
					r.ps.add(at(p, k), "%s is for whole slabs only: a marginal band has upTo and rate", k)
				}
			}
			r.object(it, p, "upTo", "rate", "amount", "baseStep", "min", "max")
		} else {
			r.object(it, p, allowed...)
		}
		b := &Band{}
		last := i == len(n.items)-1
		if u := r.required(it, p, "upTo"); u != nil {
			switch {
			case u.kind == jNull && !last:
				r.ps.add(at(p, "upTo"), "upTo may be null only on the last band")
			case u.kind != jNull && last:
				r.ps.add(at(p, "upTo"), "upTo must be null on the last band: it holds every value above the others")
			case u.kind != jNull:
				if b.UpTo = r.money(u, at(p, "upTo")); b.UpTo != nil {
					b.UpToText = u.str
					if prev != nil && b.UpTo.Cmp(prev) <= 0 {
						r.ps.add(at(p, "upTo"), "upTo must be above the upTo of bands[%d]: bands go in ascending order", i-1)
					}
					prev = b.UpTo
				}
			}
		}
		if rn := it.get("rate"); rn != nil {
			b.Rate, b.RateText = r.rate(rn, at(p, "rate"))
		} else if method == MethodMarginal {
			r.ps.add(at(p, "rate"), "rate is required on a marginal band")
		}
		if method != MethodMarginal {
			if a := it.get("amount"); a != nil {
				b.Amount = r.money(a, at(p, "amount"))
			}
			if bs := it.get("baseStep"); bs != nil {
				b.BaseStep = r.rounding(bs, at(p, "baseStep"))
			}
			if m := it.get("min"); m != nil {
				b.Min = r.money(m, at(p, "min"))
			}
			if m := it.get("max"); m != nil {
				b.Max = r.money(m, at(p, "max"))
			}
			if b.Min != nil && b.Max != nil && b.Min.Cmp(b.Max) > 0 {
				r.ps.add(at(p, "max"), "max must be at least min")
			}
		}
		out = append(out, b)
	}
	return out
}

// checkPeriods checks the versions' order and periods (§1, §11).
func checkPeriods(ps *problems, rules Rules) {
	for i, v := range rules {
		p := []any{i}
		if v.Period.From == "" && i > 0 {
			ps.add(at(p, "effectiveFrom"), "effectiveFrom may be null only on the first version")
		}
		if v.Period.From != "" && v.Period.To != "" && v.Period.To <= v.Period.From {
			ps.add(at(p, "effectiveTo"), "effectiveTo must be after effectiveFrom")
		}
		if i == 0 {
			continue
		}
		prev := rules[i-1]
		switch {
		case v.Period.From != "" && prev.Period.From != "" && v.Period.From < prev.Period.From:
			ps.add(at(p, "effectiveFrom"), "versions must be sorted by effectiveFrom: this one starts before duty_rules[%d]", i-1)
		case prev.Period.To == "" || (v.Period.From != "" && v.Period.From < prev.Period.To):
			ps.add(at(p, "effectiveFrom"), "the period overlaps the period of duty_rules[%d]: its effectiveTo must be at most this effectiveFrom", i-1)
		}
	}
}

// checkSize checks §1's limit on all of an article's versions together.
func checkSize(ps *problems, rules Rules) {
	total := 2 // [ ]
	for i, v := range rules {
		if i > 0 {
			total++
		}
		total += v.size
	}
	if total > MaxRulesBytes {
		ps.add([]any{}, "duty_rules must be at most %d bytes of canonical JSON together, not %d: archive old versions", MaxRulesBytes, total)
	}
}
