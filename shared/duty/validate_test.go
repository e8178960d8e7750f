package duty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A rule as the tests build it: Go values marshalled to JSON. obj's
// members come out sorted by name; ord keeps the order it is given, for
// bases, which are evaluated in order (§2).
type (
	obj = map[string]any
	ord []kv
	kv  struct {
		K string
		V any
	}
)

func (o ord) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.K)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.V)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// num is a JSON number in a rule: what §2 refuses.
func num(s string) json.Number { return json.Number(s) }

// validVersion is a version that passes every check of §11, with a field
// of every kind, for the refusals to break one at a time.
func validVersion() obj {
	return obj{
		"effectiveFrom": "2022-04-01",
		"effectiveTo":   nil,
		"citation":      obj{"text": "Art. 25(b) and the remission order", "url": "https://example.org/art25"},
		"inputs": obj{
			"considerationPrice": obj{"required": true, "positive": true},
			"marketValue":        obj{"required": true},
			"termMonths":         obj{"min": "1", "max": "60", "default": "12"},
			"partyCategory":      obj{"required": true, "values": []any{"male", "female", "joint"}},
		},
		"bases": ord{
			{"value", obj{"max": []any{obj{"input": "considerationPrice"}, obj{"input": "marketValue"}}}},
			{"tenth", obj{"mul": []any{obj{"base": "value"}, obj{"const": "0.10"}}}},
			{"monthly", obj{"div": []any{obj{"base": "value"}, obj{"input": "termMonths"}}}},
		},
		"components": []any{
			obj{"id": "duty", "label": "Stamp duty 5%", "kind": "percent", "base": "value", "rate": "0.05",
				"baseStep": obj{"step": "100", "mode": "up"}},
			obj{"id": "women", "label": "Women's remission 1%", "kind": "percent", "base": "value", "rate": "-0.01",
				"when": obj{"partyCategory": []any{"female", "joint"}}},
			obj{"id": "slab", "label": "Whole slabs", "kind": "slabs", "method": "whole", "base": "tenth", "bands": []any{
				obj{"upTo": "100000", "amount": "100"},
				obj{"upTo": "1000000", "amount": "500", "rate": "0.001"},
				obj{"upTo": nil, "rate": "0.002", "min": "2000", "max": "50000"}}},
			obj{"id": "marg", "label": "Marginal slabs", "kind": "slabs", "method": "marginal", "base": "considerationPrice", "bands": []any{
				obj{"upTo": "5000000", "rate": "0.0075"},
				obj{"upTo": nil, "rate": "0.005"}}},
			obj{"id": "pages", "label": "₹10 per ₹500 or part", "kind": "perUnit", "base": "monthly", "unit": "500", "amount": "10",
				"part": "counts", "over": "1000"},
			obj{"id": "cess", "label": "Cess 10%", "kind": "percentOf", "of": []any{"duty", "slab"}, "rate": "0.10"},
			obj{"id": "fee", "label": "Fee", "kind": "fixed", "amount": "100", "min": "50", "max": "200",
				"rounding": obj{"step": "1", "mode": "halfUp"}},
		},
		"total": obj{"rounding": obj{"step": "1", "mode": "up"}, "min": "100", "max": "999999999999"},
	}
}

// dated returns validVersion in force from from to to ("" null).
func dated(from, to string) obj {
	v := validVersion()
	v["effectiveFrom"], v["effectiveTo"] = nullable(from), nullable(to)
	return v
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// child returns the member or item of node named by key.
func child(node, key any) any {
	switch n := node.(type) {
	case obj:
		return n[key.(string)]
	case ord:
		for _, m := range n {
			if m.K == key {
				return m.V
			}
		}
	case []any:
		return n[key.(int)]
	}
	panic(fmt.Sprintf("no %v in %T", key, node))
}

// put sets the member or item key of node (which is changed in place).
func put(node, key, value any) {
	switch n := node.(type) {
	case obj:
		n[key.(string)] = value
		return
	case ord:
		for i := range n {
			if n[i].K == key {
				n[i].V = value
				return
			}
		}
	case []any:
		n[key.(int)] = value
		return
	}
	panic(fmt.Sprintf("cannot set %v in %T", key, node))
}

// edit changes a rule set built of versions.
type edit func(rs []any) []any

// set returns the edit that puts path's last element at the rest of it:
// set(0, "components", 0, "rate", num("0.05")).
func set(path ...any) edit {
	return func(rs []any) []any {
		var node any = rs
		keys, value := path[:len(path)-2], path[len(path)-1]
		for _, k := range keys {
			node = child(node, k)
		}
		put(node, path[len(path)-2], value)
		return rs
	}
}

// del returns the edit that removes the member at path.
func del(path ...any) edit {
	return func(rs []any) []any {
		var node any = rs
		for _, k := range path[:len(path)-1] {
			node = child(node, k)
		}
		delete(node.(obj), path[len(path)-1].(string))
		return rs
	}
}

// edits applies each edit in turn.
func edits(es ...edit) edit {
	return func(rs []any) []any {
		for _, e := range es {
			rs = e(rs)
		}
		return rs
	}
}

// versions replaces the rule set.
func versions(vs ...any) edit { return func([]any) []any { return vs } }

// marshal is a rule set's JSON.
func marshal(t testing.TB, rs []any) []byte {
	t.Helper()
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// paths returns each problem's path, in the order reported.
func paths(ps []Problem) [][]any {
	out := [][]any{}
	for _, p := range ps {
		out = append(out, p.Path)
	}
	return out
}

// p is a path, for the tables.
func p(elems ...any) []any { return elems }

// key writes paths so that an index and a name never look alike:
// [[0 "components" 2 "rate"]].
func key(paths [][]any) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, path := range paths {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('[')
		for j, e := range path {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%#v", e)
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return b.String()
}

// string of n copies of s, short for the tables.
func rep(s string, n int) string { return strings.Repeat(s, n) }

func TestValidVersionIsValid(t *testing.T) {
	if _, problems := ValidateRules(marshal(t, []any{validVersion()})); problems != nil {
		t.Fatalf("ValidateRules(validVersion) = %v", problems)
	}
}

// refusal is one way of breaking validVersion, the paths of the problems
// it must give (in the order reported), and words the first one's message
// must hold.
type refusal struct {
	name string
	edit edit
	want [][]any
	msg  string
}

// checkRefusals runs ValidateRules on each refusal's rule set.
func checkRefusals(t *testing.T, tests []refusal) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := marshal(t, tc.edit([]any{validVersion()}))
			rules, problems := ValidateRules(data)
			if rules != nil {
				t.Errorf("ValidateRules returned rules with its problems")
			}
			if got, want := key(paths(problems)), key(tc.want); got != want {
				t.Fatalf("problems at %s, want at %s\nproblems: %v\nrule: %s", got, want, problems, data)
			}
			if tc.msg != "" && !strings.Contains(problems[0].Message, tc.msg) {
				t.Errorf("message = %q, want it to hold %q", problems[0].Message, tc.msg)
			}
		})
	}
}

func TestRefusesJSONNumbers(t *testing.T) {
	const msg = "not a JSON number"
	checkRefusals(t, []refusal{
		{"Rate", set(0, "components", 0, "rate", num("0.05")), [][]any{p(0, "components", 0, "rate")}, msg},
		{"FixedAmount", set(0, "components", 6, "amount", num("100")), [][]any{p(0, "components", 6, "amount")}, msg},
		{"ComponentMin", set(0, "components", 6, "min", num("50")), [][]any{p(0, "components", 6, "min")}, msg},
		{"PerUnitUnit", set(0, "components", 4, "unit", num("500")), [][]any{p(0, "components", 4, "unit")}, msg},
		{"BandUpTo", set(0, "components", 2, "bands", 0, "upTo", num("100000")), [][]any{p(0, "components", 2, "bands", 0, "upTo")}, msg},
		{"MarginalBandRate", set(0, "components", 3, "bands", 1, "rate", num("0.005")), [][]any{p(0, "components", 3, "bands", 1, "rate")}, msg},
		{"RoundingStep", set(0, "components", 6, "rounding", "step", num("1")), [][]any{p(0, "components", 6, "rounding", "step")}, msg},
		{"BaseStep", set(0, "components", 0, "baseStep", "step", num("100")), [][]any{p(0, "components", 0, "baseStep", "step")}, msg},
		{"Const", set(0, "bases", "tenth", "mul", 1, "const", num("0.10")), [][]any{p(0, "bases", "tenth", "mul", 1, "const")}, msg},
		{"InputMax", set(0, "inputs", "termMonths", "max", num("60")), [][]any{p(0, "inputs", "termMonths", "max")}, msg},
		{"InputDefault", set(0, "inputs", "refundableDeposit", obj{"default": num("0")}), [][]any{p(0, "inputs", "refundableDeposit", "default")}, msg},
		{"EnumValue", set(0, "inputs", "partyCategory", "values", 0, num("1")), [][]any{p(0, "inputs", "partyCategory", "values", 0)}, msg},
		{"TotalMax", set(0, "total", "max", num("999999999999")), [][]any{p(0, "total", "max")}, msg},
		{"EffectiveFrom", set(0, "effectiveFrom", num("20220401")), [][]any{p(0, "effectiveFrom")}, msg},
		{"CitationText", set(0, "citation", "text", num("25")), [][]any{p(0, "citation", "text")}, msg},
		{"Label", set(0, "components", 1, "label", num("1")), [][]any{p(0, "components", 1, "label")}, msg},
		{"WhenValue", set(0, "components", 1, "when", "partyCategory", 0, num("2")), [][]any{p(0, "components", 1, "when", "partyCategory", 0)}, msg},
		{"AsABoolean", set(0, "inputs", "marketValue", "required", num("1")), [][]any{p(0, "inputs", "marketValue", "required")}, "true or false"},
		{"AsAnInput", set(0, "inputs", "refundableDeposit", num("0")), [][]any{p(0, "inputs", "refundableDeposit")}, "must be an object"},
		{"ExponentForm", set(0, "components", 0, "rate", num("5e-2")), [][]any{p(0, "components", 0, "rate")}, msg},
	})
}

func TestRefusesRates(t *testing.T) {
	const msg = "from -1 to 1 with at most 18 decimals"
	rate := func(s string) edit { return set(0, "components", 0, "rate", s) }
	at := [][]any{p(0, "components", 0, "rate")}
	checkRefusals(t, []refusal{
		{"AboveOne", rate("1.000000000000000001"), at, msg},
		{"BelowMinusOne", rate("-1.01"), at, msg},
		{"APercentNotAFraction", rate("5"), at, msg},
		{"NineteenDecimals", rate("0.0500000000000000001"), at, msg},
		{"APlusSign", rate("+0.05"), at, msg},
		{"NoLeadingDigit", rate(".05"), at, msg},
		{"Empty", rate(""), at, msg},
		{"PercentOfRate", set(0, "components", 5, "rate", "1.5"), [][]any{p(0, "components", 5, "rate")}, msg},
		{"BandRate", set(0, "components", 2, "bands", 1, "rate", "-2"), [][]any{p(0, "components", 2, "bands", 1, "rate")}, msg},
	})
}

func TestAcceptsRatesAtTheirBounds(t *testing.T) {
	for _, rate := range []string{"1", "-1", "1.000000000000000000", "0.000000000000000001", "-0.000000000000000001", "0", "-0"} {
		t.Run(rate, func(t *testing.T) {
			// 100% and the rate: the probe stays from 0 to the maximum.
			data := marshal(t, []any{checkOnly(obj{"considerationPrice": obj{"required": true, "max": "400000000000000"}},
				obj{"id": "duty", "label": "Duty", "kind": "percent", "base": "considerationPrice", "rate": "1"},
				obj{"id": "more", "label": "More", "kind": "percent", "base": "considerationPrice", "rate": rate})})
			if _, problems := ValidateRules(data); problems != nil {
				t.Errorf("rate %s refused: %v", rate, problems)
			}
		})
	}
}

func TestRefusesUnknownKindsAndKeys(t *testing.T) {
	checkRefusals(t, []refusal{
		{"UnknownKind", set(0, "components", 6, "kind", "percentage"), [][]any{p(0, "components", 6, "kind")}, "kind must be one of"},
		{"KindOfAnotherCase", set(0, "components", 6, "kind", "Fixed"), [][]any{p(0, "components", 6, "kind")}, "kind must be one of"},
		{"KeyOfAVersion", set(0, "note", "x"), [][]any{p(0, "note")}, "note is not a field"},
		{"KeyOfAComponent", set(0, "components", 0, "note", "x"), [][]any{p(0, "components", 0, "note")}, "note is not a field"},
		{"KeyOfAnotherKind", set(0, "components", 0, "method", "whole"), [][]any{p(0, "components", 0, "method")}, "method is not a field"},
		{"KeyOfABand", set(0, "components", 2, "bands", 1, "note", "x"), [][]any{p(0, "components", 2, "bands", 1, "note")}, "note is not a field"},
		{"KeyOfAMarginalBand", set(0, "components", 3, "bands", 0, "note", "x"), [][]any{p(0, "components", 3, "bands", 0, "note")}, "note is not a field"},
		{"KeyOfAnInput", set(0, "inputs", "marketValue", "note", "x"), [][]any{p(0, "inputs", "marketValue", "note")}, "note is not a field"},
		{"KeyOfAnEnumInput", set(0, "inputs", "partyCategory", "positive", true), [][]any{p(0, "inputs", "partyCategory", "positive")}, "positive is not a field"},
		{"UnknownInput", set(0, "inputs", "buyerAge", obj{}), [][]any{p(0, "inputs", "buyerAge")}, "buyerAge is not a field"},
		{"KeyOfTheTotal", set(0, "total", "note", "x"), [][]any{p(0, "total", "note")}, "note is not a field"},
		{"KeyOfARounding", set(0, "total", "rounding", "note", "x"), [][]any{p(0, "total", "rounding", "note")}, "note is not a field"},
		{"KeyOfTheCitation", set(0, "citation", "note", "x"), [][]any{p(0, "citation", "note")}, "note is not a field"},
		{"UnknownOperation", set(0, "bases", "tenth", obj{"add": []any{obj{"const": "1"}}}), [][]any{p(0, "bases", "tenth", "add")}, "add is not a field"},
	})
}

func TestRefusesNamesNotDefinedBefore(t *testing.T) {
	checkRefusals(t, []refusal{
		{"IDsRepeated", set(0, "components", 6, "id", "duty"), [][]any{p(0, "components", 6, "id")}, `"duty" is already the id of components[0]`},
		{"OfALaterComponent", set(0, "components", 5, "of", []any{"duty", "fee"}), [][]any{p(0, "components", 5, "of", 1)}, `"fee" is not the id of an earlier component`},
		{"OfItself", set(0, "components", 5, "of", []any{"cess"}), [][]any{p(0, "components", 5, "of", 0)}, "earlier component"},
		{"OfAMissingComponent", set(0, "components", 5, "of", []any{"stamp"}), [][]any{p(0, "components", 5, "of", 0)}, "earlier component"},
		{"OfNothing", set(0, "components", 5, "of", []any{}), [][]any{p(0, "components", 5, "of")}, "non-empty"},
		{"BaseUndefined", set(0, "components", 0, "base", "worth"), [][]any{p(0, "components", 0, "base")}, `"worth" is neither a base nor a numeric input`},
		{"BaseAnEnumInput", set(0, "components", 0, "base", "partyCategory"), [][]any{p(0, "components", 0, "base")}, "neither a base nor a numeric input"},
		{"BaseAnInputNotDeclared", set(0, "components", 0, "base", "monthlyRent"), [][]any{p(0, "components", 0, "base")}, "neither a base nor a numeric input"},
		{"SelectByUndefined", set(0, "components", 2, "selectBy", "worth"), [][]any{p(0, "components", 2, "selectBy")}, "neither a base nor a numeric input"},
		{"SelectByAnEnumInput", set(0, "components", 2, "selectBy", "partyCategory"), [][]any{p(0, "components", 2, "selectBy")}, "neither a base nor a numeric input"},
		{"ExpressionOfALaterBase", set(0, "bases", "value", obj{"max": []any{obj{"input": "considerationPrice"}, obj{"base": "tenth"}}}),
			[][]any{p(0, "bases", "value", "max", 1, "base")}, `base "tenth" is not a base defined before this one`},
		{"ExpressionOfItself", set(0, "bases", "tenth", obj{"base": "tenth"}), [][]any{p(0, "bases", "tenth", "base")}, "defined before"},
		{"ExpressionOfAnEnumInput", set(0, "bases", "tenth", obj{"input": "partyCategory"}), [][]any{p(0, "bases", "tenth", "input")}, "not a numeric input the version declares"},
		{"ExpressionOfAnUndeclaredInput", set(0, "bases", "tenth", obj{"input": "monthlyRent"}), [][]any{p(0, "bases", "tenth", "input")}, "not a numeric input the version declares"},
		{"WhenAnUndeclaredInput", set(0, "components", 1, "when", obj{"locationClass": []any{"urban"}}), [][]any{p(0, "components", 1, "when", "locationClass")}, "not an enum input"},
		{"WhenAValueNotDeclared", set(0, "components", 1, "when", "partyCategory", 1, "widow"), [][]any{p(0, "components", 1, "when", "partyCategory", 1)}, `"widow" is not one of the values`},
	})
}

// addBase adds a base after the others of the first version.
func addBase(name string, e any) edit {
	return func(rs []any) []any {
		v := rs[0].(obj)
		v["bases"] = append(v["bases"].(ord), kv{name, e})
		return rs
	}
}

// nest returns an expression depth levels deep: sums around the input.
func nest(depth int) any {
	var e any = obj{"input": "considerationPrice"}
	for i := 1; i < depth; i++ {
		e = obj{"sum": []any{e}}
	}
	return e
}

func TestRefusesExpressions(t *testing.T) {
	div := func(divisor any) edit { return set(0, "bases", "monthly", "div", 1, divisor) }
	at := [][]any{p(0, "bases", "monthly", "div", 1)}
	const msg = "a divisor must be"
	deep := p(0, "bases", "tenth")
	for i := 1; i < 7; i++ {
		deep = append(deep, "sum", 0)
	}
	checkRefusals(t, []refusal{
		{"ANegativeConst", set(0, "bases", "tenth", "mul", 1, "const", "-0.10"), [][]any{p(0, "bases", "tenth", "mul", 1, "const")}, "at least 0"},
		{"AConstOf19Decimals", set(0, "bases", "tenth", "mul", 1, "const", "0.1000000000000000001"), [][]any{p(0, "bases", "tenth", "mul", 1, "const")}, "at most 18 decimals"},
		{"DivByAnInputWithoutMin", div(obj{"input": "marketValue"}), at, msg},
		{"DivByAnInputWithMin0", edits(div(obj{"input": "termMonths"}), set(0, "inputs", "termMonths", "min", "0")), at, msg},
		{"DivByAnOptionalInputWithoutDefault", del(0, "inputs", "termMonths", "default"), at, msg},
		{"DivByConst0", div(obj{"const": "0"}), at, msg},
		{"DivByABase", div(obj{"base": "value"}), at, msg},
		{"DivByASum", div(obj{"sum": []any{obj{"const": "1"}}}), at, msg},
		{"DivOfThree", set(0, "bases", "monthly", "div", []any{obj{"const": "1"}, obj{"const": "2"}, obj{"const": "3"}}), [][]any{p(0, "bases", "monthly", "div")}, "exactly 2"},
		{"TwoOperations", set(0, "bases", "tenth", obj{"const": "1", "input": "marketValue"}), [][]any{p(0, "bases", "tenth")}, "exactly one of"},
		{"DepthOf7", set(0, "bases", "tenth", nest(7)), [][]any{deep}, "at most 6 levels"},
		// Every input's name has a capital: a base's never does.
		{"ABaseCalledLikeAnInput", addBase("marketValue", obj{"const": "1"}), [][]any{p(0, "bases", "marketValue")}, "lower-case"},
		{"ABaseCalledWithADigitFirst", addBase("1value", obj{"const": "1"}), [][]any{p(0, "bases", "1value")}, "lower-case"},
	})
}

func TestAcceptsExpressionsAtTheirLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit edit
	}{
		{"DepthOf6", set(0, "bases", "tenth", nest(6))},
		{"DivByAPositiveRequiredInput", set(0, "bases", "monthly", "div", 1, obj{"input": "considerationPrice"})},
		{"DivByARequiredInputWithMin1", edits(del(0, "inputs", "termMonths", "default"), set(0, "inputs", "termMonths", "required", true))},
		{"DivByAConst", set(0, "bases", "monthly", "div", 1, obj{"const": "0.5"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, problems := ValidateRules(marshal(t, tc.edit([]any{validVersion()}))); problems != nil {
				t.Errorf("refused: %v", problems)
			}
		})
	}
}

func TestRefusesBands(t *testing.T) {
	band := func(i int, k string, v any) edit { return set(0, "components", 2, "bands", i, k, v) }
	marginal := func(k string, v any) edit { return set(0, "components", 3, "bands", 0, k, v) }
	checkRefusals(t, []refusal{
		{"OutOfOrder", band(1, "upTo", "50000"), [][]any{p(0, "components", 2, "bands", 1, "upTo")}, "ascending order"},
		{"UpToRepeated", band(1, "upTo", "100000"), [][]any{p(0, "components", 2, "bands", 1, "upTo")}, "ascending order"},
		{"LastUpToNotNull", band(2, "upTo", "9000000"), [][]any{p(0, "components", 2, "bands", 2, "upTo")}, "null on the last band"},
		{"NullUpToNotLast", band(0, "upTo", nil), [][]any{p(0, "components", 2, "bands", 0, "upTo")}, "only on the last band"},
		{"UpToMissing", del(0, "components", 2, "bands", 2, "upTo"), [][]any{p(0, "components", 2, "bands", 2, "upTo")}, "required"},
		{"NoBands", set(0, "components", 2, "bands", []any{}), [][]any{p(0, "components", 2, "bands")}, "1 to 16"},
		{"BandMinAboveMax", band(2, "min", "60000"), [][]any{p(0, "components", 2, "bands", 2, "max")}, "at least min"},
		{"MarginalWithAmount", marginal("amount", "100"), [][]any{p(0, "components", 3, "bands", 0, "amount")}, "whole slabs only"},
		{"MarginalWithMin", marginal("min", "100"), [][]any{p(0, "components", 3, "bands", 0, "min")}, "whole slabs only"},
		{"MarginalWithMax", marginal("max", "100"), [][]any{p(0, "components", 3, "bands", 0, "max")}, "whole slabs only"},
		{"MarginalWithBaseStep", marginal("baseStep", obj{"step": "100", "mode": "up"}), [][]any{p(0, "components", 3, "bands", 0, "baseStep")}, "whole slabs only"},
		{"MarginalWithoutRate", del(0, "components", 3, "bands", 1, "rate"), [][]any{p(0, "components", 3, "bands", 1, "rate")}, "required"},
		{"MarginalWithSelectBy", set(0, "components", 3, "selectBy", "value"), [][]any{p(0, "components", 3, "selectBy")}, "whole slabs only"},
		{"UnknownMethod", set(0, "components", 3, "method", "progressive"), [][]any{p(0, "components", 3, "method")}, "whole\" or \"marginal"},
	})
}

// sixteen is 16 bands, every upTo above the last.
func bands(n int, marginal bool) []any {
	var out []any
	for i := 1; i <= n; i++ {
		b := obj{"upTo": fmt.Sprint(i * 100000), "rate": "0.01"}
		if i == n {
			b["upTo"] = nil
		}
		if !marginal {
			b["amount"] = "10"
		}
		out = append(out, b)
	}
	return out
}

func TestBandsCount(t *testing.T) {
	ok := func(e edit) bool {
		_, problems := ValidateRules(marshal(t, e([]any{validVersion()})))
		return problems == nil
	}
	if !ok(set(0, "components", 2, "bands", bands(16, false))) {
		t.Error("16 whole bands refused")
	}
	if !ok(set(0, "components", 3, "bands", bands(16, true))) {
		t.Error("16 marginal bands refused")
	}
	checkRefusals(t, []refusal{
		{"SeventeenBands", set(0, "components", 2, "bands", bands(17, false)), [][]any{p(0, "components", 2, "bands")}, "1 to 16"},
	})
}

func TestRefusesPeriods(t *testing.T) {
	checkRefusals(t, []refusal{
		{"Overlapping", versions(dated("2021-04-01", "2022-05-01"), dated("2022-04-01", "")), [][]any{p(1, "effectiveFrom")}, "overlaps the period of duty_rules[0]"},
		{"AnOpenVersionBeforeAnother", versions(dated("2021-04-01", ""), dated("2022-04-01", "")), [][]any{p(1, "effectiveFrom")}, "overlaps"},
		{"TheSameStart", versions(dated("2021-04-01", "2022-04-01"), dated("2021-04-01", "")), [][]any{p(1, "effectiveFrom")}, "overlaps"},
		{"Unsorted", versions(dated("2022-04-01", "2023-04-01"), dated("2021-04-01", "2022-04-01")), [][]any{p(1, "effectiveFrom")}, "sorted by effectiveFrom"},
		{"ToEqualsFrom", versions(dated("2022-04-01", "2022-04-01")), [][]any{p(0, "effectiveTo")}, "after effectiveFrom"},
		{"ToBeforeFrom", versions(dated("2022-04-01", "2022-03-31")), [][]any{p(0, "effectiveTo")}, "after effectiveFrom"},
		{"NullFromNotOnTheFirst", versions(dated("", "2021-04-01"), dated("", "")), [][]any{p(1, "effectiveFrom")}, "only on the first version"},
		{"NotADate", set(0, "effectiveFrom", "2022-02-30"), [][]any{p(0, "effectiveFrom")}, "YYYY-MM-DD"},
		{"AnotherFormat", set(0, "effectiveTo", "01-04-2023"), [][]any{p(0, "effectiveTo")}, "YYYY-MM-DD"},
		{"NotAnArray", func([]any) []any { return nil }, [][]any{p()}, "array"},
	})
}

func TestAcceptsPeriods(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []any
	}{
		{"OneOpen", []any{dated("", "")}},
		{"Adjacent", []any{dated("", "2021-04-01"), dated("2021-04-01", "2022-04-01"), dated("2022-04-01", "")}},
		{"WithAGap", []any{dated("2019-01-01", "2020-01-01"), dated("2021-01-01", "")}},
		{"NoneInForceToday", []any{dated("2019-01-01", "2020-01-01")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, problems := ValidateRules(marshal(t, tc.vs)); problems != nil {
				t.Errorf("refused: %v", problems)
			}
		})
	}
}

// sized returns a valid version in force from from to to whose canonical
// JSON is exactly size bytes (from about 2,000 to 9,000): 32 fixed
// components whose labels make up the size.
func sized(t testing.TB, size int, from, to string) obj {
	t.Helper()
	labels := make([][]rune, MaxComponents)
	build := func() obj {
		var cs []any
		for i, l := range labels {
			cs = append(cs, obj{"id": fmt.Sprintf("c%02d", i), "label": "L" + string(l), "kind": "fixed", "amount": "1"})
		}
		return obj{"effectiveFrom": nullable(from), "effectiveTo": nullable(to),
			"citation": obj{"text": "size", "url": "https://example.org/"}, "components": cs}
	}
	measure := func() int {
		b, err := json.Marshal(build())
		if err != nil {
			t.Fatal(err)
		}
		c, err := Canonical(b)
		if err != nil {
			t.Fatal(err)
		}
		return len(c)
	}
	deficit := size - measure()
	for i := range labels { // "₹" is 3 bytes of UTF-8, "a" 1
		for ; deficit >= 3 && len(labels[i]) < maxLabel-1; deficit -= 3 {
			labels[i] = append(labels[i], '₹')
		}
	}
	for i := range labels {
		for ; deficit > 0 && len(labels[i]) < maxLabel-1; deficit-- {
			labels[i] = append(labels[i], 'a')
		}
	}
	if got := measure(); got != size {
		t.Fatalf("could not build a version of %d bytes: %d", size, got)
	}
	return build()
}

func TestSizeLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   func(t *testing.T) []any
		want [][]any
		msg  string
	}{
		{"AVersionOf8KiB", func(t *testing.T) []any { return []any{sized(t, MaxVersionBytes, "", "")} }, nil, ""},
		{"AVersionOver8KiB", func(t *testing.T) []any { return []any{sized(t, MaxVersionBytes+1, "", "")} },
			[][]any{p(0)}, "at most 8192 bytes of canonical JSON, not 8193"},
		{"TheSecondVersionOver8KiB", func(t *testing.T) []any {
			return []any{dated("", "2020-01-01"), sized(t, MaxVersionBytes+1, "2020-01-01", "")}
		}, [][]any{p(1)}, "at most 8192 bytes"},
		{"VersionsOf24KiBTogether", func(t *testing.T) []any {
			// [a,b,c]: 2 brackets, 2 commas.
			return []any{sized(t, 8190, "", "2020-01-01"), sized(t, 8190, "2020-01-01", "2021-01-01"), sized(t, 8192, "2021-01-01", "")}
		}, nil, ""},
		{"VersionsOver24KiBTogether", func(t *testing.T) []any {
			return []any{sized(t, 8190, "", "2020-01-01"), sized(t, 8191, "2020-01-01", "2021-01-01"), sized(t, 8192, "2021-01-01", "")}
		}, [][]any{p()}, "at most 24576 bytes of canonical JSON together, not 24577"},
		{"TwelveVersions", func(t *testing.T) []any { return yearly(12) }, nil, ""},
		{"ThirteenVersions", func(t *testing.T) []any { return yearly(13) }, [][]any{p()}, "at most 12 versions, not 13"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := ValidateRules(marshal(t, tc.vs(t)))
			if got, want := key(paths(problems)), key(tc.want); got != want {
				t.Fatalf("problems at %s, want at %s: %v", got, want, problems)
			}
			if tc.msg != "" && !strings.Contains(problems[0].Message, tc.msg) {
				t.Errorf("message = %q, want it to hold %q", problems[0].Message, tc.msg)
			}
		})
	}
}

// yearly returns n small versions, one a year from 2001.
func yearly(n int) []any {
	var out []any
	for i := 0; i < n; i++ {
		to := fmt.Sprintf("%d-01-01", 2002+i)
		if i == n-1 {
			to = ""
		}
		out = append(out, obj{"effectiveFrom": fmt.Sprintf("%d-01-01", 2001+i), "effectiveTo": nullable(to),
			"citation":   obj{"text": "t", "url": "https://example.org/"},
			"components": []any{obj{"id": "d", "label": "D", "kind": "fixed", "amount": "1"}}})
	}
	return out
}

// values returns n enum values: the ones validVersion's when names first.
func values(n int) []any {
	out := []any{"female", "joint"}
	for i := len(out); i < n; i++ {
		out = append(out, fmt.Sprintf("v%d", i))
	}
	return out[:n]
}

func TestRefusesInputs(t *testing.T) {
	checkRefusals(t, []refusal{
		{"EnumValueCapitalised", set(0, "inputs", "partyCategory", "values", 0, "Male"), [][]any{p(0, "inputs", "partyCategory", "values", 0)}, "lower-case"},
		{"EnumValueStartingWithADigit", set(0, "inputs", "partyCategory", "values", 0, "1st"), [][]any{p(0, "inputs", "partyCategory", "values", 0)}, "lower-case"},
		{"EnumValueWithAHyphen", set(0, "inputs", "partyCategory", "values", 0, "joint-male"), [][]any{p(0, "inputs", "partyCategory", "values", 0)}, "lower-case"},
		{"EnumValueOf41", set(0, "inputs", "partyCategory", "values", 0, "m"+rep("a", 40)), [][]any{p(0, "inputs", "partyCategory", "values", 0)}, "at most 40"},
		{"EnumValueRepeated", set(0, "inputs", "partyCategory", "values", []any{"male", "female", "joint", "male"}), [][]any{p(0, "inputs", "partyCategory", "values", 3)}, `repeats "male"`},
		{"SeventeenEnumValues", set(0, "inputs", "partyCategory", "values", values(17)), [][]any{p(0, "inputs", "partyCategory", "values")}, "1 to 16"},
		{"NoEnumValues", edits(set(0, "inputs", "partyCategory", "values", []any{}), del(0, "components", 1, "when")), [][]any{p(0, "inputs", "partyCategory", "values")}, "1 to 16"},
		{"EnumWithoutValues", edits(del(0, "inputs", "partyCategory", "values"), del(0, "components", 1, "when")), [][]any{p(0, "inputs", "partyCategory", "values")}, "required"},
		{"RequiredWithDefault", set(0, "inputs", "marketValue", "default", "0"), [][]any{p(0, "inputs", "marketValue", "default")}, "exclude each other"},
		{"RequiredEnumWithDefault", set(0, "inputs", "partyCategory", "default", "male"), [][]any{p(0, "inputs", "partyCategory", "default")}, "exclude each other"},
		{"EnumDefaultNotAValue", edits(set(0, "inputs", "partyCategory", "required", false), set(0, "inputs", "partyCategory", "default", "widow")), [][]any{p(0, "inputs", "partyCategory", "default")}, "one of the input's values"},
		{"DefaultBelowMin", set(0, "inputs", "termMonths", "default", "0"), [][]any{p(0, "inputs", "termMonths", "default")}, "between the input's min and max"},
		{"MinAboveMax", set(0, "inputs", "termMonths", "min", "61"), [][]any{p(0, "inputs", "termMonths", "max"), p(0, "inputs", "termMonths", "default")}, "at least min"},
		{"MaxOf16Digits", set(0, "inputs", "termMonths", "max", "1000000000000000"), [][]any{p(0, "inputs", "termMonths", "max")}, "999999999999999"},
		{"MinNegative", set(0, "inputs", "marketValue", "min", "-1"), [][]any{p(0, "inputs", "marketValue", "min")}, "whole number"},
		{"MinWithDecimals", set(0, "inputs", "marketValue", "min", "1.5"), [][]any{p(0, "inputs", "marketValue", "min")}, "whole number"},
		{"RequiredNotABoolean", set(0, "inputs", "marketValue", "required", "true"), [][]any{p(0, "inputs", "marketValue", "required")}, "true or false"},
	})
}

func TestAcceptsSixteenEnumValues(t *testing.T) {
	data := marshal(t, set(0, "inputs", "partyCategory", "values", values(16))([]any{validVersion()}))
	if _, problems := ValidateRules(data); problems != nil {
		t.Errorf("refused: %v", problems)
	}
}

func TestRefusesCitationsAndTotals(t *testing.T) {
	checkRefusals(t, []refusal{
		{"CitationMissing", del(0, "citation"), [][]any{p(0, "citation")}, "citation is required"},
		{"CitationNull", set(0, "citation", nil), [][]any{p(0, "citation")}, "citation is required"},
		{"CitationURLMissing", del(0, "citation", "url"), [][]any{p(0, "citation", "url")}, "required"},
		{"CitationURLFTP", set(0, "citation", "url", "ftp://example.org/art25"), [][]any{p(0, "citation", "url")}, "http or https"},
		{"CitationURLWithoutScheme", set(0, "citation", "url", "www.example.org/art25"), [][]any{p(0, "citation", "url")}, "http or https"},
		{"CitationURLJavaScript", set(0, "citation", "url", "javascript:alert(1)"), [][]any{p(0, "citation", "url")}, "http or https"},
		{"CitationURLOf501", set(0, "citation", "url", "https://example.org/"+rep("a", 481)), [][]any{p(0, "citation", "url")}, "at most 500"},
		{"CitationTextEmpty", set(0, "citation", "text", ""), [][]any{p(0, "citation", "text")}, "1 to 300"},
		{"CitationTextOf301", set(0, "citation", "text", rep("é", 301)), [][]any{p(0, "citation", "text")}, "1 to 300"},
		{"TotalStepInPaise", set(0, "total", "rounding", "step", "0.50"), [][]any{p(0, "total", "rounding", "step")}, "whole number of rupees"},
		{"TotalStepNotWhole", set(0, "total", "rounding", "step", "100.01"), [][]any{p(0, "total", "rounding", "step")}, "whole number of rupees"},
		{"TotalStep0", set(0, "total", "rounding", "step", "0"), [][]any{p(0, "total", "rounding", "step")}, "positive"},
		{"TotalModeUnknown", set(0, "total", "rounding", "mode", "nearest"), [][]any{p(0, "total", "rounding", "mode")}, "up, down, halfUp"},
		{"TotalMinInPaise", set(0, "total", "min", "100.50"), [][]any{p(0, "total", "min")}, "whole number of rupees"},
		{"TotalMinAboveMax", set(0, "total", "min", "1000000000000"), [][]any{p(0, "total", "max")}, "at least min"},
		{"ComponentStepOfAThirdPaisa", set(0, "components", 6, "rounding", "step", "0.005"), [][]any{p(0, "components", 6, "rounding", "step")}, "multiple of"},
		{"LabelOf81", set(0, "components", 6, "label", rep("₹", 81)), [][]any{p(0, "components", 6, "label")}, "1 to 80"},
		{"LabelWithANewline", set(0, "components", 6, "label", "Fee\n"), [][]any{p(0, "components", 6, "label")}, "printable"},
		{"IDCapitalised", set(0, "components", 6, "id", "Fee"), [][]any{p(0, "components", 6, "id")}, "lower-case"},
		{"DeclaredOther", edits(set(0, "declared", "more"), set(0, "inputs", "amount", obj{"required": true})), [][]any{p(0, "declared")}, `"equal" or absent`},
		{"DeclaredWithoutAmount", set(0, "declared", "equal"), [][]any{p(0, "declared")}, "inputs must declare amount"},
	})
}

func TestAcceptsALegacyCitation(t *testing.T) {
	v := validVersion()
	v["legacy"] = true
	v["citation"] = obj{"text": "migrated", "url": "shared/spec/decisions.md (Amounts)"}
	if _, problems := ValidateRules(marshal(t, []any{v})); problems != nil {
		t.Errorf("refused: %v", problems)
	}
	delete(v, "citation")
	if _, problems := ValidateRules(marshal(t, []any{v})); problems != nil {
		t.Errorf("refused without a citation: %v", problems)
	}
}

func TestRefusesComponentCounts(t *testing.T) {
	var many []any
	for i := 0; i < MaxComponents+1; i++ {
		many = append(many, obj{"id": fmt.Sprintf("c%d", i), "label": "C", "kind": "fixed", "amount": "1"})
	}
	checkRefusals(t, []refusal{
		{"None", set(0, "components", []any{}), [][]any{p(0, "components")}, "1 to 32"},
		{"ThirtyThree", set(0, "components", many), [][]any{p(0, "components")}, "1 to 32"},
		{"Missing", del(0, "components"), [][]any{p(0, "components")}, "required"},
	})
	if _, problems := ValidateRules(marshal(t, set(0, "components", many[:MaxComponents])([]any{validVersion()}))); problems != nil {
		t.Errorf("32 components refused: %v", problems)
	}
}

// checkOnly is a small version for Check's refusals: enum inputs and
// components as given, no numeric input unless a component reads one.
func checkOnly(inputs obj, components ...any) obj {
	return obj{"effectiveFrom": nil, "effectiveTo": nil, "citation": obj{"text": "t", "url": "https://example.org/"},
		"inputs": inputs, "components": components}
}

// withBases gives v bases.
func withBases(v obj, bases obj) obj {
	v["bases"] = bases
	return v
}

// enumValues returns n values of an enum input: a, b, c, …
func enumValues(n int) []any {
	var out []any
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("v%d", i))
	}
	return out
}

func TestCheckRefuses(t *testing.T) {
	party := obj{"required": true, "values": []any{"male", "female", "joint"}}
	fixedWhen := func(id string, values ...any) obj {
		return obj{"id": id, "label": "D", "kind": "fixed", "amount": "100", "when": obj{"partyCategory": values}}
	}
	cess := obj{"id": "cess", "label": "Cess", "kind": "percentOf", "of": []any{"duty"}, "rate": "0.1"}
	sixteen := obj{"required": true, "values": enumValues(16)}
	checkRefusals(t, []refusal{
		{"ACombinationWithOnlyAPercentOf", versions(checkOnly(obj{"partyCategory": party},
			fixedWhen("duty", "male", "female"), obj{"id": "cess", "label": "Cess", "kind": "percentOf", "of": []any{"duty"}, "rate": "0.1"})),
			[][]any{p(0, "components")}, "no component other than a percentOf applies when partyCategory is joint"},
		{"TwoCombinationsWithNone", versions(checkOnly(obj{"partyCategory": party}, fixedWhen("duty", "male"), cess)),
			[][]any{p(0, "components"), p(0, "components")}, "partyCategory is female"},
		{"AnOptionalEnumAbsent", versions(checkOnly(obj{"partyCategory": obj{"values": []any{"male", "female", "joint"}}},
			fixedWhen("duty", "male", "female", "joint"))),
			[][]any{p(0, "components")}, "partyCategory is absent"},
		{"ManyCombinationsWithNone", versions(checkOnly(obj{"partyCategory": sixteen},
			obj{"id": "duty", "label": "D", "kind": "fixed", "amount": "100", "when": obj{"partyCategory": []any{"v0"}}})),
			[][]any{p(0, "components"), p(0, "components"), p(0, "components"), p(0, "components"), p(0, "components"),
				p(0, "components"), p(0, "components"), p(0, "components"), p(0, "components")}, "partyCategory is v1"},
		{"ProbeNegative", versions(checkOnly(obj{"considerationPrice": obj{"required": true, "positive": true}, "marketValue": obj{"required": true}},
			obj{"id": "duty", "label": "Duty 5%", "kind": "percent", "base": "considerationPrice", "rate": "0.05"},
			obj{"id": "concession", "label": "Concession 6% of market value", "kind": "percent", "base": "marketValue", "rate": "-0.06"})),
			[][]any{p(0)}, "the probe breaks the rule: the total is -"},
		{"ProbeAboveTheMaximum", versions(checkOnly(obj{"considerationPrice": obj{"required": true}, "marketValue": obj{"required": true}},
			obj{"id": "duty", "label": "Duty 100%", "kind": "percent", "base": "considerationPrice", "rate": "1"},
			obj{"id": "more", "label": "And 100% more", "kind": "percent", "base": "marketValue", "rate": "1"})),
			[][]any{p(0)}, "the probe breaks the rule"},
		{"ProbeOneInputHighTheOtherLow", versions(checkOnly(obj{"considerationPrice": obj{"required": true, "max": "1000"}, "marketValue": obj{"required": true, "max": "1000"}},
			obj{"id": "duty", "label": "Duty 5%", "kind": "percent", "base": "considerationPrice", "rate": "0.05"},
			obj{"id": "concession", "label": "Concession", "kind": "percent", "base": "marketValue", "rate": "-0.05"})),
			[][]any{p(0)}, "the probe breaks the rule"},
		{"ProbeBreaksForOneValueOnly", versions(checkOnly(obj{"considerationPrice": obj{"required": true}, "partyCategory": party},
			obj{"id": "duty", "label": "Duty 5%", "kind": "percent", "base": "considerationPrice", "rate": "0.05"},
			obj{"id": "concession", "label": "Concession 6%", "kind": "percent", "base": "considerationPrice", "rate": "-0.06",
				"when": obj{"partyCategory": []any{"joint"}}})),
			[][]any{p(0)}, "the probe breaks the rule: the total is -9999999999999.00 when partyCategory is joint and considerationPrice is 999999999999999"},
		{"ProbeABasePast20Digits", versions(withBases(checkOnly(obj{"monthlyRent": obj{"required": true}, "termMonths": obj{"required": true}},
			obj{"id": "duty", "label": "Rent × months, unbounded", "kind": "percent", "base": "licence", "rate": "0.000000000000000001"}),
			obj{"licence": obj{"mul": []any{obj{"input": "monthlyRent"}, obj{"input": "termMonths"}}}})),
			[][]any{p(0)}, "the probe breaks the rule: base licence is 999999999999998000000000000001.00, past 20 digits"},
		{"MoreThan4096Combinations", versions(checkOnly(obj{"partyCategory": sixteen, "locationClass": sixteen, "propertyUse": obj{"values": enumValues(16)}},
			obj{"id": "duty", "label": "D", "kind": "fixed", "amount": "100"})),
			[][]any{p(0, "inputs")}, "more than 4096 combinations"},
	})
}

func TestCheckRefusesTheProbeOfTheSecondVersion(t *testing.T) {
	second := checkOnly(obj{"considerationPrice": obj{"required": true}},
		obj{"id": "concession", "label": "Concession", "kind": "percent", "base": "considerationPrice", "rate": "-0.05"})
	second["effectiveFrom"] = "2020-01-01"
	rules, problems := ValidateRules(marshal(t, []any{dated("", "2020-01-01"), second}))
	if rules != nil || key(paths(problems)) != key([][]any{p(1)}) {
		t.Errorf("problems %v, want one at [1]", problems)
	}
}

func TestCheckAccepts4096Combinations(t *testing.T) {
	sixteen := obj{"required": true, "values": enumValues(16)}
	v := checkOnly(obj{"partyCategory": sixteen, "locationClass": sixteen, "propertyUse": sixteen},
		obj{"id": "duty", "label": "D", "kind": "fixed", "amount": "100"})
	if _, problems := ValidateRules(marshal(t, []any{v})); problems != nil {
		t.Errorf("refused: %v", problems)
	}
}

func TestReportsEveryProblemAtOnce(t *testing.T) {
	rs := edits(
		set(0, "components", 0, "rate", num("0.05")),
		set(0, "total", "note", "x"),
		set(0, "citation", "url", "ftp://example.org/"),
	)([]any{validVersion()})
	_, problems := ValidateRules(marshal(t, rs))
	if got, want := key(paths(problems)), key([][]any{p(0, "citation", "url"), p(0, "components", 0, "rate"), p(0, "total", "note")}); got != want {
		t.Errorf("problems at %s, want at %s: %v", got, want, problems)
	}

	t.Run("InEveryVersion", func(t *testing.T) {
		rs := edits(
			set(0, "inputs", "marketValue", "note", "x"),
			set(1, "components", 2, "bands", 0, "upTo", nil),
			set(1, "bases", "tenth", "mul", 0, "base", "later"),
		)([]any{dated("", "2020-01-01"), dated("2020-01-01", "")})
		_, problems := ValidateRules(marshal(t, rs))
		want := [][]any{p(0, "inputs", "marketValue", "note"), p(1, "bases", "tenth", "mul", 0, "base"), p(1, "components", 2, "bands", 0, "upTo")}
		if got, want := key(paths(problems)), key(want); got != want {
			t.Errorf("problems at %s, want at %s: %v", got, want, problems)
		}
	})
}

func TestRefusesDuplicateNames(t *testing.T) {
	for _, tc := range []struct{ name, json string }{
		{"InAVersion", `[{"effectiveFrom": null, "effectiveFrom": "2020-01-01", "citation": {"text": "t", "url": "https://example.org/"},
			"components": [{"id": "d", "label": "D", "kind": "fixed", "amount": "1"}]}]`},
		{"InAComponent", `[{"effectiveFrom": null, "citation": {"text": "t", "url": "https://example.org/"},
			"components": [{"id": "d", "label": "D", "kind": "fixed", "amount": "1", "amount": "2"}]}]`},
		{"SpelledWithAnEscape", `[{"effectiveFrom": null, "citation": {"text": "t", "url": "https://example.org/"},
			"components": [{"id": "d", "label": "D", "kind": "fixed", "amount": "1", "\u0061mount": "2"}]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, problems := ValidateRules([]byte(tc.json))
			if rules != nil || len(problems) != 1 {
				t.Fatalf("ValidateRules = %v, %v; want one problem", rules, problems)
			}
			if got, want := problems[0].Message, "more than once"; !strings.Contains(got, want) {
				t.Errorf("message = %q, want it to hold %q", got, want)
			}
		})
	}
}

func TestRefusesJSONThatIsNotOneValue(t *testing.T) {
	for _, s := range []string{``, `[`, `[] []`, `[{"a":}]`, `nul`, strings.Repeat("[", 100) + strings.Repeat("]", 100)} {
		if rules, problems := ValidateRules([]byte(s)); rules != nil || len(problems) != 1 {
			t.Errorf("ValidateRules(%q) = %v, %v; want one problem", s, rules, problems)
		}
	}
}

func TestParseVersionPathsStartAtTheVersion(t *testing.T) {
	v := validVersion()
	v["components"].([]any)[0].(obj)["rate"] = num("0.05")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	_, problems := ParseVersion(b)
	if got, want := key(paths(problems)), key([][]any{p("components", 0, "rate")}); got != want {
		t.Errorf("problems at %s, want at %s", got, want)
	}
	if got, want := PathString(problems[0].Path), "components[0].rate"; got != want {
		t.Errorf("PathString = %q, want %q", got, want)
	}
}
