package duty

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"testing"
	"time"
)

var (
	// amountPattern is a line's amount and a total (§6).
	amountPattern = regexp.MustCompile(`^-?\d{1,15}\.\d{2}$`)
	// basePattern is a base's amount and a line's baseAmount (§6).
	basePattern = regexp.MustCompile(`^-?\d{1,20}\.\d{2}$`)
	// integerPattern is the only number a quote's JSON may hold.
	integerPattern = regexp.MustCompile(`^-?\d+$`)
)

// fuzzSeeds are rule sets besides the examples': validVersion (a field
// of every kind), and ones changed to reach other paths.
func fuzzSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		marshal(t, []any{validVersion()}),
		marshal(t, []any{dated("", "2020-01-01"), dated("2020-01-01", "")}),
		marshal(t, set(0, "components", 3, "bands", bands(16, true))([]any{validVersion()})),
		marshal(t, set(0, "components", 2, "selectBy", "considerationPrice")([]any{validVersion()})),
		marshal(t, set(0, "components", 0, "rate", num("0.05"))([]any{validVersion()})),
		marshal(t, set(0, "inputs", "partyCategory", "values", values(16))([]any{validVersion()})),
		marshal(t, yearly(12)),
		[]byte(versionOf(`"inputs": {"considerationPrice": {"required": true, "positive": true}}, "components": [{"id": "duty", "label": "Art. 12", "kind": "slabs",
			"method": "marginal", "base": "considerationPrice", "bands": [{"upTo": "5000000", "rate": "0.0075"}, {"upTo": "50000000", "rate": "0.005"}, {"upTo": null, "rate": "0.0025"}]}]`)),
		[]byte(versionOf(`"inputs": {"considerationPrice": {"required": true}, "marketValue": {"required": true}}, "components": [
			{"id": "duty", "label": "Duty", "kind": "percent", "base": "considerationPrice", "rate": "0.05"},
			{"id": "concession", "label": "Concession", "kind": "percent", "base": "marketValue", "rate": "-0.06", "rounding": {"step": "1", "mode": "halfUp"}}],
			"total": {"rounding": {"step": "100", "mode": "down"}, "min": "0", "max": "999999999999999"}`)),
		[]byte(versionOf(`"legacy": true, "inputs": {"amount": {"required": true}}, "declared": "equal", "components": [{"id": "duty", "label": "Fixed", "kind": "fixed", "amount": "500"}]`)),
		[]byte(versionOf(`"inputs": {"amount": {"required": true}}, "components": [{"id": "duty", "label": "Declared", "kind": "declared", "min": "10", "max": "1000"}]`)),
		[]byte(versionOf(`"inputs": {"considerationPrice": {"required": true}}, "bases": {"third": {"div": [{"input": "considerationPrice"}, {"const": "3"}]}},
			"components": [{"id": "duty", "label": "Per unit", "kind": "perUnit", "base": "third", "unit": "0.07", "amount": "0.03", "part": "ignored", "over": "10"}]`)),
		// A licence base of rent × months that no max bounds.
		[]byte(versionOf(`"inputs": {"monthlyRent": {"required": true}, "termMonths": {"required": true}},
			"bases": {"licence": {"mul": [{"input": "monthlyRent"}, {"input": "termMonths"}]}},
			"components": [{"id": "duty", "label": "D", "kind": "percent", "base": "licence", "rate": "0.000000000000000001"}]`)),
		[]byte(`[{"effectiveFrom": null, "effectiveFrom": null}]`),
		[]byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`),
		[]byte(`{"not": "an array"}`),
	}
	for _, l := range []Legacy{{Min: 100, Max: 2500000, Follows: true, Factor: "0.05"}, {Min: 7, Max: 10}, {Fixed: ptr[int64](500), Max: MaxInput}} {
		rules, err := Migrate(l)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, []byte("["+string(rules[0].JSON())+"]"))
	}
	return seeds
}

func FuzzRules(f *testing.F) {
	ex := loadExamples(f)
	names := make([]string, 0, len(ex.Rules))
	for name := range ex.Rules {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f.Add([]byte(ex.Rules[name].DutyRules), int64(4000000), int64(4500001), int64(25000), int64(500000), int64(-1), int64(24), int64(-1), "", "", uint8(0), uint16(9000))
		// Every input wrong at once.
		f.Add([]byte(ex.Rules[name].DutyRules), int64(0), int64(-1), int64(0), int64(-1), int64(-1), int64(0), int64(-1), "nobody", "not_a_value", uint8(0), uint16(9000))
	}
	for _, c := range ex.Cases { // each case's inputs, on its date
		num := func(name string) int64 {
			if v, ok := c.Inputs[name].(json.Number); ok {
				n, _ := v.Int64()
				return n
			}
			return -1
		}
		str := func(name string) string { s, _ := c.Inputs[name].(string); return s }
		date, err := time.Parse(dateLayout, c.Date)
		if err != nil {
			f.Fatal(err)
		}
		day := uint16(date.Sub(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).Hours() / 24)
		party := str("partyCategory") + str("tradeType")
		f.Add([]byte(ex.Rules[c.Rule].DutyRules), num("considerationPrice"), num("marketValue"), num("monthlyRent"), num("refundableDeposit"),
			num("nonRefundableDeposit"), num("termMonths"), num("amount"), party, str("locationClass"), uint8(0), day)
	}
	for i, seed := range fuzzSeeds(f) {
		f.Add(seed, int64(1234567), int64(-1), int64(1), int64(0), int64(999999999999999), int64(60), int64(500), "", "not_a_value", uint8(i), uint16(9000))
		f.Add(seed, int64(999999999999999), int64(999999999999999), int64(999999999999999), int64(-1), int64(-1), int64(1), int64(-1), "", "", uint8(i+1), uint16(0))
		f.Add(seed, MaxInput, MaxInput, MaxInput, MaxInput, MaxInput, MaxInput, MaxInput, "", "", uint8(i+2), uint16(10000))
	}

	f.Fuzz(func(t *testing.T, data []byte, price, market, rent, deposit, nonRefundable, term, amount int64, party, location string, pick uint8, day uint16) {
		rules, problems := ParseRules(data)
		if (rules == nil) == (problems == nil) {
			t.Fatalf("ParseRules = %v, %v: rules or problems, never both or neither", rules, problems)
		}
		checkProblems(t, problems)
		if rules == nil {
			return
		}
		valid := Check(rules) == nil
		if validated, problems := ValidateRules(data); (validated != nil) != valid {
			t.Fatalf("ValidateRules: %v, but ParseRules and Check: valid %v", problems, valid)
		}
		for i, v := range rules { // a version read again is the same version
			again, problems := ParseRules([]byte("[" + string(v.JSON()) + "]"))
			if problems != nil || again[0].Hash() != v.Hash() {
				t.Fatalf("version %d read again: %v, hash %s", i, problems, v.Hash())
			}
		}

		date := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(day)).Format(dateLayout)
		req := Request{Purpose: "Sale Deed", State: "Goa", Date: date, Numbers: map[string]int64{}, Enums: map[string]string{}}
		for i, x := range []int64{price, market, rent, deposit, nonRefundable, term, amount} {
			if x >= 0 { // a negative one is not sent
				req.Numbers[numericInputs[i]] = x % (MaxInput + 1)
			}
		}
		v, inForce := rules.InForce(date)
		for i, name := range enumInputs {
			s := []string{party, location}[i%2]
			if s == "" && inForce {
				if in := v.input(name); in != nil && in.Enum && len(in.Values) > 0 {
					s = in.Values[(int(pick)+i)%len(in.Values)]
				}
			}
			if s != "" && s != "absent" {
				req.Enums[name] = s
			}
		}
		d, err := rules.Evaluate(req)
		var ie *InputError
		var broken *BrokenError
		switch {
		case errors.As(err, &ie):
			checkInputProblems(t, ie, inForce)
			return
		case errors.As(err, &broken):
			return // a rule Check passed may still break between its probes: a 500, logged
		case err != nil:
			t.Fatalf("Evaluate: %v, neither an InputError nor a BrokenError", err)
		}
		checkDuty(t, d)
	})
}

// checkProblems checks that each problem of a rule has a path of names
// and indexes and a message.
func checkProblems(t *testing.T, problems []Problem) {
	t.Helper()
	for _, p := range problems {
		if p.Message == "" {
			t.Errorf("a problem at %v without a message", p.Path)
		}
		for _, e := range p.Path {
			switch e.(type) {
			case string, int:
			default:
				t.Errorf("path %v holds a %T", p.Path, e)
			}
		}
	}
}

// checkInputProblems checks §10's form of a quote's problems: one per
// input, each at [name], in InputNames' order.
func checkInputProblems(t *testing.T, ie *InputError, inForce bool) {
	t.Helper()
	if !inForce {
		if len(ie.Problems) != 1 || fmt.Sprint(ie.Problems[0].Path) != "[instrumentDate]" || ie.Version != nil {
			t.Fatalf("no version in force: %+v", ie)
		}
		return
	}
	last := -1
	for _, p := range ie.Problems {
		if len(p.Path) != 1 {
			t.Fatalf("problem at %v: want [input]", p.Path)
		}
		name, _ := p.Path[0].(string)
		if ie.Version.input(name) == nil {
			t.Errorf("problem with %s, an input the version does not read", name)
		}
		rank := InputRank(name)
		if rank <= last {
			t.Errorf("problems not one per input in InputNames' order: %v", ie.Problems)
		}
		last = rank
	}
}

// checkDuty checks §6 and §8 on a quote: the lines add up to the total,
// every amount has 1 to 15 digits and 2 decimals, the total is whole
// rupees from 0 to the maximum, and its JSON holds no number but the
// integer inputs, band indexes and the article's version.
func checkDuty(t *testing.T, d *Duty) {
	t.Helper()
	checkSum(t, d)
	for _, l := range d.Lines {
		if !amountPattern.MatchString(l.Amount) {
			t.Errorf("line %s: amount %q", l.ID, l.Amount)
		}
		if l.BaseAmount != "" && !basePattern.MatchString(l.BaseAmount) {
			t.Errorf("line %s: baseAmount %q", l.ID, l.BaseAmount)
		}
	}
	for _, b := range d.Bases {
		if !basePattern.MatchString(b.Amount) {
			t.Errorf("base %s: amount %q", b.Name, b.Amount)
		}
	}
	if !amountPattern.MatchString(d.Total) || d.Total[0] == '-' || d.Amount < 0 || d.Amount > MaxInput {
		t.Errorf("total %q, amount %d", d.Total, d.Amount)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	walkNumbers(v, nil, func(path []string, n json.Number) {
		p := fmt.Sprint(path)
		allowed := len(path) == 2 && path[0] == "inputs" ||
			len(path) == 4 && path[0] == "lines" && path[2] == "band" && path[3] == "index" ||
			p == "[rule articleVersion]"
		if !allowed || !integerPattern.MatchString(n.String()) {
			t.Errorf("a number %s at %s in %s", n, p, b)
		}
	})
}

// walkNumbers calls f with each number in v and its path.
func walkNumbers(v any, path []string, f func([]string, json.Number)) {
	switch v := v.(type) {
	case json.Number:
		f(path, v)
	case map[string]any:
		for k, x := range v {
			walkNumbers(x, append(path[:len(path):len(path)], k), f)
		}
	case []any:
		for i, x := range v {
			walkNumbers(x, append(path[:len(path):len(path)], fmt.Sprint(i)), f)
		}
	}
}
