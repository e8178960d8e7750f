package duty

import (
	"math/big"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParseRules reads an article's duty_rules, a JSON array of rule versions,
// and checks every rule of §2–§5 and §11 but the probe (Check adds the
// enum combinations and the probe). It returns every problem at once, each
// at its path from the array down; the Rules only when there is none.
func ParseRules(data []byte) (Rules, []Problem) {
	n, err := decodeNode(data)
	if err != nil {
		return nil, []Problem{{Path: []any{}, Message: "duty_rules must be a JSON array of rule versions: " + err.Error()}}
	}
	return rulesFromNode(n)
}

// rulesFromNode is ParseRules of a decoded array.
func rulesFromNode(n *node) (Rules, []Problem) {
	var ps problems
	if n.kind != jArray {
		ps.add([]any{}, "duty_rules must be an array, not %s", kindNames[n.kind])
		return nil, ps.list
	}
	if len(n.items) > MaxVersions {
		ps.add([]any{}, "duty_rules must hold at most %d versions, not %d: archive the old ones", MaxVersions, len(n.items))
	}
	rules := make(Rules, 0, len(n.items))
	for i, it := range n.items {
		if v := readVersion(&ps, it, []any{i}); v != nil {
			rules = append(rules, v)
		}
	}
	if len(ps.list) > 0 {
		return nil, ps.list
	}
	checkPeriods(&ps, rules)
	checkSize(&ps, rules)
	if len(ps.list) > 0 {
		return nil, ps.list
	}
	return rules, nil
}

// ParseVersion reads one rule version, as the console edits one: the
// problems' paths start at the version.
func ParseVersion(data []byte) (*Version, []Problem) {
	n, err := decodeNode(data)
	if err != nil {
		return nil, []Problem{{Path: []any{}, Message: "a rule version must be a JSON object: " + err.Error()}}
	}
	var ps problems
	v := readVersion(&ps, n, []any{})
	if len(ps.list) > 0 {
		return nil, ps.list
	}
	return v, nil
}

// The limits of §1 and §2.
const (
	MaxVersions      = 12
	MaxVersionBytes  = 8 << 10
	MaxRulesBytes    = 24 << 10
	MaxComponents    = 32
	MaxBands         = 16
	MaxEnumValues    = 16
	MaxExprDepth     = 6
	MaxCombinations  = 4096
	maxCitationText  = 300
	maxCitationURL   = 500
	maxLabel         = 80
	defaultTotalStep = 100 // paise: ₹1
)

var (
	idPattern        = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	enumValuePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	digitsPattern    = regexp.MustCompile(`^(0|[1-9][0-9]{0,14})$`)
	constPattern     = regexp.MustCompile(`^(0|[1-9][0-9]{0,19})(\.[0-9]{1,18})?$`)
)

// reader reads the typed values of a rule, recording each problem.
type reader struct{ ps *problems }

// object checks that n is an object whose names are among allowed, and
// reports each other name. It returns false when n is not an object.
func (r reader) object(n *node, path []any, allowed ...string) bool {
	if n.kind != jObject {
		r.ps.add(path, "%s must be an object, not %s", lastName(path), kindNames[n.kind])
		return false
	}
	for _, m := range n.members {
		ok := false
		for _, a := range allowed {
			ok = ok || m.name == a
		}
		if !ok {
			r.ps.add(at(path, m.name), "%s is not a field of %s", m.name, where(path))
		}
	}
	return true
}

// where names the place of a path in messages.
func where(path []any) string {
	if len(path) == 0 {
		return "a rule version"
	}
	return lastName(path)
}

// str returns the string at n, or records that it is not one.
func (r reader) str(n *node, path []any) (string, bool) {
	if n.kind != jString {
		if n.kind == jNumber {
			r.ps.add(path, "%s must be a string, not a JSON number: a rule writes every value as a string", lastName(path))
		} else {
			r.ps.add(path, "%s must be a string, not %s", lastName(path), kindNames[n.kind])
		}
		return "", false
	}
	return n.str, true
}

// required returns the member name of obj, recording that it is missing.
func (r reader) required(obj *node, path []any, name string) *node {
	v := obj.get(name)
	if v == nil {
		r.ps.add(at(path, name), "%s is required", name)
	}
	return v
}

// boolean reads an optional boolean member (false when absent).
func (r reader) boolean(obj *node, path []any, name string) bool {
	v := obj.get(name)
	if v == nil {
		return false
	}
	if v.kind != jBool {
		r.ps.add(at(path, name), "%s must be true or false, not %s", name, kindNames[v.kind])
		return false
	}
	return v.boolean
}

// money reads a rupee amount (§2) at n.
func (r reader) money(n *node, path []any) *big.Rat {
	s, ok := r.str(n, path)
	if !ok {
		return nil
	}
	v, err := ParseMoney(s)
	if err != nil {
		r.ps.add(path, "%s must be an amount in rupees: digits with at most 2 decimals, such as \"500\" or \"0.50\"", lastName(path))
		return nil
	}
	return v
}

// rupees reads a whole number of rupees at n (a total's bound).
func (r reader) rupees(n *node, path []any) *big.Rat {
	v := r.money(n, path)
	if v != nil && !v.IsInt() {
		r.ps.add(path, "%s must be a whole number of rupees: the total is always whole rupees", lastName(path))
		return nil
	}
	return v
}

// rate reads a rate (§2) at n.
func (r reader) rate(n *node, path []any) (*big.Rat, string) {
	s, ok := r.str(n, path)
	if !ok {
		return nil, ""
	}
	v, err := ParseRate(s)
	if err != nil {
		r.ps.add(path, "%s must be a fraction from -1 to 1 with at most 18 decimals, such as \"0.05\" for 5%%", lastName(path))
		return nil, ""
	}
	return v, s
}

// rounding reads a `{"step", "mode"}` at n.
func (r reader) rounding(n *node, path []any) *Rounding {
	if !r.object(n, path, "step", "mode") {
		return nil
	}
	stepN, modeN := r.required(n, path, "step"), r.required(n, path, "mode")
	if stepN == nil || modeN == nil {
		return nil
	}
	step, ok1 := r.str(stepN, at(path, "step"))
	mode, ok2 := r.str(modeN, at(path, "mode"))
	if !ok1 || !ok2 {
		return nil
	}
	if _, err := ParseRounding(step, Up); err != nil {
		r.ps.add(at(path, "step"), "step must be a positive amount in rupees, a multiple of \"0.01\"")
		return nil
	}
	ro, err := ParseRounding(step, mode)
	if err != nil {
		r.ps.add(at(path, "mode"), "mode must be one of: up, down, halfUp")
		return nil
	}
	return &ro
}

// printable reports whether s holds no control characters.
func printable(s string) bool {
	for _, c := range s {
		if !unicode.IsPrint(c) && c != ' ' {
			return false
		}
	}
	return utf8.ValidString(s)
}

// readVersion reads one rule version at path; nil when it has a problem.
func readVersion(ps *problems, n *node, path []any) *Version {
	r := reader{ps}
	before := len(ps.list)
	if !r.object(n, path, "effectiveFrom", "effectiveTo", "citation", "legacy", "inputs", "bases", "components", "total", "declared") {
		return nil
	}
	v := &Version{}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"effectiveFrom", &v.Period.From}, {"effectiveTo", &v.Period.To}} {
		d := n.get(f.name)
		if d == nil || d.kind == jNull {
			continue
		}
		s, ok := r.str(d, at(path, f.name))
		if !ok {
			continue
		}
		if _, err := ParseDate(s); err != nil {
			ps.add(at(path, f.name), "%s must be a date (YYYY-MM-DD) or null", f.name)
			continue
		}
		*f.dst = s
	}
	v.Legacy = r.boolean(n, path, "legacy")
	if c := n.get("citation"); c != nil && c.kind != jNull {
		v.Citation = r.citation(c, at(path, "citation"), v.Legacy)
	} else if !v.Legacy {
		ps.add(at(path, "citation"), "citation is required: {\"text\", \"url\"} of the law the version writes")
	}
	if d := n.get("declared"); d != nil {
		if s, ok := r.str(d, at(path, "declared")); ok {
			if s != "equal" {
				ps.add(at(path, "declared"), "declared must be \"equal\" or absent")
			}
			v.DeclaredEqual = true
		}
	}
	if in := n.get("inputs"); in != nil {
		v.Inputs = r.inputs(in, at(path, "inputs"))
	}
	if b := n.get("bases"); b != nil {
		v.Bases = r.bases(b, at(path, "bases"), v)
	}
	if c := r.required(n, path, "components"); c != nil {
		v.Components = r.components(c, at(path, "components"), v)
	}
	v.Total = Total{Rounding: Rounding{Step: big.NewInt(defaultTotalStep), Mode: Up}}
	if t := n.get("total"); t != nil {
		r.total(t, at(path, "total"), &v.Total)
	}
	if v.DeclaredEqual && v.input("amount") == nil {
		ps.add(at(path, "declared"), "declared \"equal\" compares the caller's amount: inputs must declare amount")
	}
	if len(ps.list) > before {
		return nil
	}
	v.json = n.appendJSON(nil)
	c, err := Canonical(v.json)
	if err != nil { // not reached: a node always canonicalizes
		ps.add(path, "the version has no canonical JSON: %v", err)
		return nil
	}
	v.size = len(c)
	v.hash, _ = Hash(v.json)
	if v.size > MaxVersionBytes {
		ps.add(path, "a rule version must be at most %d bytes of canonical JSON, not %d", MaxVersionBytes, v.size)
		return nil
	}
	return v
}

// citation reads a version's citation; legacy versions may name a source
// that is not a web address.
func (r reader) citation(n *node, path []any, legacy bool) *Citation {
	if !r.object(n, path, "text", "url") {
		return nil
	}
	c := &Citation{}
	if t := r.required(n, path, "text"); t != nil {
		if s, ok := r.str(t, at(path, "text")); ok {
			if n := utf8.RuneCountInString(s); n < 1 || n > maxCitationText || !printable(s) {
				r.ps.add(at(path, "text"), "text must be 1 to %d printable characters", maxCitationText)
			}
			c.Text = s
		}
	}
	if u := r.required(n, path, "url"); u != nil {
		if s, ok := r.str(u, at(path, "url")); ok {
			web := strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
			if len(s) > maxCitationURL || (!legacy && (!web || len(s) <= len("https://") || strings.ContainsAny(s, " \t\r\n"))) {
				r.ps.add(at(path, "url"), "url must be an http or https address of at most %d characters", maxCitationURL)
			}
			c.URL = s
		}
	}
	return c
}

// inputs reads a version's inputs, returned in InputNames' order.
func (r reader) inputs(n *node, path []any) []*Input {
	if !r.object(n, path, InputNames()...) {
		return nil
	}
	var out []*Input
	for _, name := range InputNames() {
		m := n.get(name)
		if m == nil {
			continue
		}
		p := at(path, name)
		in := &Input{Name: name, Enum: IsEnumInput(name), Max: MaxInput}
		if in.Enum {
			if !r.object(m, p, "required", "values", "default") {
				continue
			}
			in.Required = r.boolean(m, p, "required")
			if vs := r.required(m, p, "values"); vs != nil {
				in.Values = r.enumValues(vs, at(p, "values"))
			}
			if d := m.get("default"); d != nil {
				if s, ok := r.str(d, at(p, "default")); ok {
					in.Default = s
					found := false
					for _, v := range in.Values {
						found = found || v == s
					}
					if !found {
						r.ps.add(at(p, "default"), "default must be one of the input's values")
					}
				}
			}
		} else {
			if !r.object(m, p, "required", "positive", "min", "max", "default") {
				continue
			}
			in.Required = r.boolean(m, p, "required")
			in.Positive = r.boolean(m, p, "positive")
			integer := func(key string) (int64, bool) {
				d := m.get(key)
				if d == nil {
					return 0, false
				}
				s, ok := r.str(d, at(p, key))
				if !ok {
					return 0, false
				}
				if !digitsPattern.MatchString(s) {
					r.ps.add(at(p, key), "%s must be a whole number from \"0\" to \"999999999999999\", as a string", key)
					return 0, false
				}
				i, _ := new(big.Int).SetString(s, 10)
				return i.Int64(), true
			}
			in.Min, in.HasMin = integer("min")
			if mx, ok := integer("max"); ok {
				in.Max, in.HasMax = mx, true
			}
			switch {
			case in.HasMin && in.HasMax && in.Min > in.Max:
				r.ps.add(at(p, "max"), "max must be at least min")
			case in.Positive && in.HasMax && in.Max == 0:
				r.ps.add(at(p, "max"), "max must be above 0: the input is positive, so no value would do")
			}
			if d, ok := integer("default"); ok {
				in.Default = m.get("default").str
				switch {
				case d < in.Min || d > in.Max:
					r.ps.add(at(p, "default"), "default must lie between the input's min and max")
				case in.Positive && d == 0:
					r.ps.add(at(p, "default"), "default must be greater than 0: the input is positive")
				}
			}
		}
		if in.Required && m.get("default") != nil {
			r.ps.add(at(p, "default"), "default and required exclude each other: a required input has no default")
		}
		out = append(out, in)
	}
	return out
}

// enumValues reads an enum input's values: 1–16 distinct names.
func (r reader) enumValues(n *node, path []any) []string {
	if n.kind != jArray {
		r.ps.add(path, "values must be an array of strings, not %s", kindNames[n.kind])
		return nil
	}
	if len(n.items) < 1 || len(n.items) > MaxEnumValues {
		r.ps.add(path, "values must hold 1 to %d values", MaxEnumValues)
	}
	var out []string
	seen := map[string]bool{}
	for i, it := range n.items {
		s, ok := r.str(it, at(path, i))
		if !ok {
			continue
		}
		switch {
		case !enumValuePattern.MatchString(s):
			r.ps.add(at(path, i), "values[%d] must be lower-case letters, digits and _, starting with a letter, at most 40", i)
		case seen[s]:
			r.ps.add(at(path, i), "values[%d] repeats %q", i, s)
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// bases reads a version's bases, in order.
func (r reader) bases(n *node, path []any, v *Version) []*Base {
	if n.kind != jObject {
		r.ps.add(path, "bases must be an object, not %s", kindNames[n.kind])
		return nil
	}
	var out []*Base
	for _, m := range n.members {
		p := at(path, m.name)
		switch {
		case !idPattern.MatchString(m.name):
			r.ps.add(p, "a base's name must be lower-case letters, digits and _, starting with a letter, at most 32")
		case IsNumericInput(m.name) || IsEnumInput(m.name):
			r.ps.add(p, "a base may not be called like an input")
		}
		e := r.expr(m.value, p, v, out, 1)
		out = append(out, &Base{Name: m.name, Expr: e})
	}
	return out
}

// expr reads an expression at depth (1 for a base's own).
func (r reader) expr(n *node, path []any, v *Version, earlier []*Base, depth int) *Expr {
	if depth > MaxExprDepth {
		r.ps.add(path, "an expression may nest at most %d levels", MaxExprDepth)
		return nil
	}
	if !r.object(n, path, opInput, opConst, opBase, opSum, opMul, opDiv, opMax, opMin) {
		return nil
	}
	if len(n.members) != 1 {
		r.ps.add(path, "an expression has exactly one of: input, const, base, sum, mul, div, max, min")
		return nil
	}
	m := n.members[0]
	p := at(path, m.name)
	e := &Expr{Op: m.name}
	switch m.name {
	case opInput:
		s, ok := r.str(m.value, p)
		if !ok {
			return nil
		}
		if in := v.input(s); in == nil || in.Enum {
			r.ps.add(p, "input %q is not a numeric input the version declares", s)
			return nil
		}
		e.Name = s
	case opBase:
		s, ok := r.str(m.value, p)
		if !ok {
			return nil
		}
		if !hasBase(earlier, s) {
			r.ps.add(p, "base %q is not a base defined before this one", s)
			return nil
		}
		e.Name = s
	case opConst:
		s, ok := r.str(m.value, p)
		if !ok {
			return nil
		}
		if !constPattern.MatchString(s) {
			r.ps.add(p, "const must be a number of at least 0 with at most 18 decimals, as a string")
			return nil
		}
		e.Const, _ = new(big.Rat).SetString(s)
	default:
		if m.value.kind != jArray {
			r.ps.add(p, "%s must be an array of expressions, not %s", m.name, kindNames[m.value.kind])
			return nil
		}
		switch {
		case m.name == opDiv && len(m.value.items) != 2:
			r.ps.add(p, "div must hold exactly 2 expressions: [dividend, divisor]")
			return nil
		case len(m.value.items) < 1 || len(m.value.items) > MaxComponents:
			r.ps.add(p, "%s must hold 1 to %d expressions", m.name, MaxComponents)
			return nil
		}
		for i, it := range m.value.items {
			a := r.expr(it, at(p, i), v, earlier, depth+1)
			e.Args = append(e.Args, a)
		}
		if m.name == opDiv && e.Args[1] != nil && !r.divisorOK(e.Args[1], v) {
			r.ps.add(at(p, 1), "a divisor must be a constant above 0, or an input that is required or has a default, with min at least 1")
		}
	}
	return e
}

// divisorOK reports whether e can never be 0 (§4).
func (r reader) divisorOK(e *Expr, v *Version) bool {
	switch e.Op {
	case opConst:
		return e.Const.Sign() > 0
	case opInput:
		in := v.input(e.Name)
		return in != nil && (in.Min >= 1 || in.Positive) && (in.Required || in.Default != "")
	}
	return false
}

// hasBase reports whether bases has one called name.
func hasBase(bases []*Base, name string) bool {
	for _, b := range bases {
		if b.Name == name {
			return true
		}
	}
	return false
}

// total reads a version's total.
func (r reader) total(n *node, path []any, t *Total) {
	if !r.object(n, path, "rounding", "min", "max") {
		return
	}
	if ro := n.get("rounding"); ro != nil {
		if got := r.rounding(ro, at(path, "rounding")); got != nil {
			if new(big.Int).Mod(got.Step, big.NewInt(100)).Sign() != 0 {
				r.ps.add(at(path, "rounding", "step"), "step must be a whole number of rupees: the total is always whole rupees")
			} else {
				t.Rounding = *got
			}
		}
	}
	if m := n.get("min"); m != nil {
		t.Min = r.rupees(m, at(path, "min"))
	}
	if m := n.get("max"); m != nil {
		t.Max = r.rupees(m, at(path, "max"))
	}
	if t.Min != nil && t.Max != nil && t.Min.Cmp(t.Max) > 0 {
		r.ps.add(at(path, "max"), "max must be at least min")
	}
}
