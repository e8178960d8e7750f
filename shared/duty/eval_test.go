package duty

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// ruleOf returns the rules of one version in force on every date, with
// body's members (JSON text) besides its period and citation. It must pass
// ValidateRules.
func ruleOf(t testing.TB, body string) Rules {
	t.Helper()
	rules, problems := ValidateRules([]byte(versionOf(body)))
	if problems != nil {
		t.Fatalf("ValidateRules: %v\nrule: %s", problems, versionOf(body))
	}
	return rules
}

// parsedOf is ruleOf without Check: a rule as stored, which Evaluate must
// still answer safely.
func parsedOf(t testing.TB, body string) Rules {
	t.Helper()
	rules, problems := ParseRules([]byte(versionOf(body)))
	if problems != nil {
		t.Fatalf("ParseRules: %v\nrule: %s", problems, versionOf(body))
	}
	return rules
}

func versionOf(body string) string {
	return `[{"effectiveFrom": null, "effectiveTo": null, "citation": {"text": "t", "url": "https://example.org/"}, ` + body + `}]`
}

// quote is a request for a Sale Deed in Maharashtra on 2025-09-01.
func quote(nums map[string]int64, enums map[string]string) Request {
	return Request{Purpose: "Sale Deed", State: "Maharashtra", Date: "2025-09-01", Numbers: nums, Enums: enums}
}

// lineJSON is a line as a quote shows it.
func lineJSON(t testing.TB, l Line) string {
	t.Helper()
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// n is a request's numeric inputs.
type n = map[string]int64

// e is a request's enum inputs.
type e = map[string]string

// evalCase is a rule, a request's inputs, and the lines (as JSON, every
// field) and total of its quote.
type evalCase struct {
	name  string
	body  string
	nums  n
	enums e
	lines []string
	total string
}

func checkEval(t *testing.T, tests []evalCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules := ruleOf(t, tc.body)
			d, err := rules.Evaluate(quote(tc.nums, tc.enums))
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			var got []string
			for _, l := range d.Lines {
				got = append(got, lineJSON(t, l))
			}
			if got, want := strings.Join(got, "\n"), strings.Join(tc.lines, "\n"); got != want {
				t.Errorf("lines:\n%s\nwant:\n%s", got, want)
			}
			if got, want := d.Total, tc.total; got != want {
				t.Errorf("total = %s, want %s", got, want)
			}
			checkSum(t, d)
		})
	}
}

const priceInput = `"inputs": {"considerationPrice": {"required": true, "positive": true}}, `

func TestEvaluateFixedAndDeclared(t *testing.T) {
	checkEval(t, []evalCase{
		{"FixedWholeRupees", `"components": [{"id": "duty", "label": "Affidavit", "kind": "fixed", "amount": "500"}]`, nil, nil,
			[]string{`{"id":"duty","label":"Affidavit","kind":"fixed","exact":"500","amount":"500.00"}`}, "500.00"},
		{"FixedInPaiseRoundedUpToTheRupee", `"components": [{"id": "duty", "label": "Affidavit", "kind": "fixed", "amount": "0.50"}]`, nil, nil,
			[]string{
				`{"id":"duty","label":"Affidavit","kind":"fixed","exact":"0.5","amount":"0.50"}`,
				`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.50"}`},
			"1.00"},
		{"Declared", `"inputs": {"amount": {"required": true}}, "components": [{"id": "duty", "label": "Declared", "kind": "declared", "min": "10", "max": "1000"}]`,
			n{"amount": 500}, nil,
			[]string{`{"id":"duty","label":"Declared","kind":"declared","exact":"500","amount":"500.00"}`}, "500.00"},
		{"DeclaredAtItsMin", `"inputs": {"amount": {"required": true}}, "components": [{"id": "duty", "label": "Declared", "kind": "declared", "min": "10", "max": "1000"}]`,
			n{"amount": 10}, nil,
			[]string{`{"id":"duty","label":"Declared","kind":"declared","exact":"10","amount":"10.00"}`}, "10.00"},
	})
}

func TestEvaluateDeclaredOutOfRange(t *testing.T) {
	rules := ruleOf(t, `"inputs": {"amount": {"required": true}}, "components": [{"id": "duty", "label": "Declared", "kind": "declared", "min": "10", "max": "1000"}]`)
	for _, tc := range []struct {
		name   string
		amount int64
	}{{"Below", 9}, {"Above", 1001}, {"Zero", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.Evaluate(quote(n{"amount": tc.amount}, nil))
			checkInputError(t, err, []string{"amount"}, []string{
				"The purpose can take an amount in the range of: 10-1000, while the amount passed is equal to: " + big.NewInt(tc.amount).String()})
		})
	}
}

// checkInputError checks that err is an InputError with problems on
// these inputs, these messages, in order.
func checkInputError(t *testing.T, err error, names, messages []string) *InputError {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an InputError", err)
	}
	var gotNames, gotMessages []string
	for _, p := range ie.Problems {
		if len(p.Path) != 1 {
			t.Errorf("path %v, want one input's name", p.Path)
			continue
		}
		gotNames = append(gotNames, p.Path[0].(string))
		gotMessages = append(gotMessages, p.Message)
	}
	if got, want := strings.Join(gotNames, ", "), strings.Join(names, ", "); got != want {
		t.Errorf("paths %s, want %s", got, want)
	}
	if got, want := strings.Join(gotMessages, "\n"), strings.Join(messages, "\n"); got != want {
		t.Errorf("messages:\n%s\nwant:\n%s", got, want)
	}
	if got, want := ie.Error(), strings.Join(messages, "; "); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	return ie
}

func TestEvaluatePercent(t *testing.T) {
	const perHundred = priceInput + `"components": [{"id": "duty", "label": "₹4.90 for every ₹100 or part thereof", "kind": "percent",
		"base": "considerationPrice", "rate": "0.049", "baseStep": {"step": "100", "mode": "up"}}]`
	const small = priceInput + `"components": [{"id": "duty", "label": "0.015%", "kind": "percent", "base": "considerationPrice", "rate": "0.00015"}]`
	checkEval(t, []evalCase{
		{"BaseStepAPartCounts", perHundred, n{"considerationPrice": 1001}, nil, []string{
			`{"id":"duty","label":"₹4.90 for every ₹100 or part thereof","kind":"percent","base":"considerationPrice","baseAmount":"1100.00","rate":"0.049","exact":"53.9","amount":"53.90"}`,
			`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.10"}`}, "54.00"},
		{"BaseStepAWholeStep", perHundred, n{"considerationPrice": 1000}, nil, []string{
			`{"id":"duty","label":"₹4.90 for every ₹100 or part thereof","kind":"percent","base":"considerationPrice","baseAmount":"1000.00","rate":"0.049","exact":"49","amount":"49.00"}`}, "49.00"},
		{"BaseStepOfOneRupee", perHundred, n{"considerationPrice": 1}, nil, []string{
			`{"id":"duty","label":"₹4.90 for every ₹100 or part thereof","kind":"percent","base":"considerationPrice","baseAmount":"100.00","rate":"0.049","exact":"4.9","amount":"4.90"}`,
			`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.10"}`}, "5.00"},
		{"RoundedUpToThePaisa", small, n{"considerationPrice": 12345}, nil, []string{
			`{"id":"duty","label":"0.015%","kind":"percent","base":"considerationPrice","baseAmount":"12345.00","rate":"0.00015","exact":"1.85175","rounding":"up to ₹0.01","amount":"1.86"}`,
			`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.14"}`}, "2.00"},
		{"BaseStepDown", priceInput + `"components": [{"id": "duty", "label": "D", "kind": "percent",
			"base": "considerationPrice", "rate": "0.01", "baseStep": {"step": "1000", "mode": "down"}}]`, n{"considerationPrice": 1999}, nil, []string{
			`{"id":"duty","label":"D","kind":"percent","base":"considerationPrice","baseAmount":"1000.00","rate":"0.01","exact":"10","amount":"10.00"}`}, "10.00"},
	})
}

func TestEvaluatePerUnit(t *testing.T) {
	perUnit := func(fields string) string {
		return priceInput + `"components": [{"id": "duty", "label": "L", "kind": "perUnit", "base": "considerationPrice", ` + fields + `}]`
	}
	line := func(base, unit, units, exact, amount string) string {
		return `{"id":"duty","label":"L","kind":"perUnit","base":"considerationPrice","baseAmount":"` + base + `","unit":"` + unit +
			`","units":"` + units + `","exact":"` + exact + `","amount":"` + amount + `"}`
	}
	counts := perUnit(`"unit": "500", "amount": "10", "part": "counts"`)
	ignored := perUnit(`"unit": "500", "amount": "10", "part": "ignored"`)
	over := perUnit(`"unit": "500", "amount": "10", "part": "counts", "over": "1000"`)
	overIgnored := perUnit(`"unit": "500", "amount": "10", "part": "ignored", "over": "1000"`)
	checkEval(t, []evalCase{
		{"PartCounts", counts, n{"considerationPrice": 1001}, nil, []string{line("1001.00", "500", "3", "30", "30.00")}, "30.00"},
		{"PartCountsWholeUnits", counts, n{"considerationPrice": 1000}, nil, []string{line("1000.00", "500", "2", "20", "20.00")}, "20.00"},
		{"PartCountsBelowOneUnit", counts, n{"considerationPrice": 1}, nil, []string{line("1.00", "500", "1", "10", "10.00")}, "10.00"},
		{"PartIgnored", ignored, n{"considerationPrice": 1499}, nil, []string{line("1499.00", "500", "2", "20", "20.00")}, "20.00"},
		{"PartIgnoredBelowOneUnit", ignored, n{"considerationPrice": 499}, nil, []string{line("499.00", "500", "0", "0", "0.00")}, "0.00"},
		{"OverAPart", over, n{"considerationPrice": 1001}, nil, []string{line("1001.00", "500", "1", "10", "10.00")}, "10.00"},
		{"OverExactly", over, n{"considerationPrice": 1000}, nil, []string{line("1000.00", "500", "0", "0", "0.00")}, "0.00"},
		{"BelowOverCountsAs0", over, n{"considerationPrice": 400}, nil, []string{line("400.00", "500", "0", "0", "0.00")}, "0.00"},
		{"BelowOverIgnoredCountsAs0", overIgnored, n{"considerationPrice": 400}, nil, []string{line("400.00", "500", "0", "0", "0.00")}, "0.00"},
		{"OverIgnored", overIgnored, n{"considerationPrice": 2499}, nil, []string{line("2499.00", "500", "2", "20", "20.00")}, "20.00"},
		{"UnitAndAmountInPaise", perUnit(`"unit": "2.50", "amount": "0.25", "part": "counts"`), n{"considerationPrice": 11}, nil,
			[]string{line("11.00", "2.50", "5", "1.25", "1.25"), `{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.75"}`}, "2.00"},
	})
}

func TestEvaluateWholeSlabs(t *testing.T) {
	const slabs = priceInput + `"components": [{"id": "duty", "label": "Bands", "kind": "slabs", "method": "whole", "base": "considerationPrice", "bands": [
		{"upTo": "100000", "amount": "100"},
		{"upTo": "1000000", "amount": "500", "rate": "0.01"},
		{"upTo": null, "rate": "0.02", "min": "25000", "max": "30000"}]}]`
	const head = `{"id":"duty","label":"Bands","kind":"slabs","base":"considerationPrice",`
	const lease = `"inputs": {"monthlyRent": {"required": true, "positive": true}, "termMonths": {"required": true, "min": "1", "max": "360"}},
		"components": [{"id": "duty", "label": "Lease by term", "kind": "slabs", "method": "whole", "base": "monthlyRent", "selectBy": "termMonths", "bands": [
		{"upTo": "12", "rate": "0.01"}, {"upTo": "60", "rate": "0.02"}, {"upTo": null, "rate": "0.05"}]}]`
	checkEval(t, []evalCase{
		{"FirstBandAtItsUpTo", slabs, n{"considerationPrice": 100000}, nil, []string{
			head + `"band":{"index":0,"upTo":"100000"},"baseAmount":"100000.00","exact":"100","amount":"100.00"}`}, "100.00"},
		{"AmountAndRate", slabs, n{"considerationPrice": 100001}, nil, []string{
			head + `"band":{"index":1,"upTo":"1000000"},"baseAmount":"100001.00","rate":"0.01","exact":"1500.01","amount":"1500.01"}`,
			`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.99"}`}, "1501.00"},
		{"BandMin", slabs, n{"considerationPrice": 1000001}, nil, []string{
			head + `"band":{"index":2,"upTo":null},"baseAmount":"1000001.00","rate":"0.02","exact":"20000.02","limit":"min","amount":"25000.00"}`}, "25000.00"},
		{"BetweenBandMinAndMax", slabs, n{"considerationPrice": 1400000}, nil, []string{
			head + `"band":{"index":2,"upTo":null},"baseAmount":"1400000.00","rate":"0.02","exact":"28000","amount":"28000.00"}`}, "28000.00"},
		{"BandMax", slabs, n{"considerationPrice": 2000000}, nil, []string{
			head + `"band":{"index":2,"upTo":null},"baseAmount":"2000000.00","rate":"0.02","exact":"40000","limit":"max","amount":"30000.00"}`}, "30000.00"},
		{"BandBaseStep", priceInput + `"components": [{"id": "duty", "label": "Bands", "kind": "slabs", "method": "whole", "base": "considerationPrice", "bands": [
			{"upTo": "10000000", "rate": "0.0025", "baseStep": {"step": "100", "mode": "up"}, "max": "5000"},
			{"upTo": null, "rate": "0.0025", "baseStep": {"step": "100", "mode": "up"}}]}]`, n{"considerationPrice": 10000001}, nil, []string{
			head + `"band":{"index":1,"upTo":null},"baseAmount":"10000100.00","rate":"0.0025","exact":"25000.25","amount":"25000.25"}`,
			`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.75"}`}, "25001.00"},
		{"SelectByInTheFirstBand", lease, n{"monthlyRent": 10000, "termMonths": 12}, nil, []string{
			`{"id":"duty","label":"Lease by term","kind":"slabs","base":"monthlyRent","band":{"index":0,"upTo":"12"},"baseAmount":"10000.00","rate":"0.01","exact":"100","amount":"100.00"}`}, "100.00"},
		{"SelectByInTheNextBand", lease, n{"monthlyRent": 10000, "termMonths": 13}, nil, []string{
			`{"id":"duty","label":"Lease by term","kind":"slabs","base":"monthlyRent","band":{"index":1,"upTo":"60"},"baseAmount":"10000.00","rate":"0.02","exact":"200","amount":"200.00"}`}, "200.00"},
		{"SelectByInTheLastBand", lease, n{"monthlyRent": 10000, "termMonths": 360}, nil, []string{
			`{"id":"duty","label":"Lease by term","kind":"slabs","base":"monthlyRent","band":{"index":2,"upTo":null},"baseAmount":"10000.00","rate":"0.05","exact":"500","amount":"500.00"}`}, "500.00"},
	})
}

func TestEvaluateMarginalSlabs(t *testing.T) {
	// Maharashtra Art. 12: 0.75% up to ₹50 lakh; ₹37,500 + 0.5% up to ₹5
	// crore; ₹2,62,500 + 0.25% above.
	const art12 = priceInput + `"components": [{"id": "duty", "label": "Art. 12", "kind": "slabs", "method": "marginal", "base": "considerationPrice", "bands": [
		{"upTo": "5000000", "rate": "0.0075"}, {"upTo": "50000000", "rate": "0.005"}, {"upTo": null, "rate": "0.0025"}]}]`
	line := func(band, base, exact, rounding, amount string) string {
		s := `{"id":"duty","label":"Art. 12","kind":"slabs","base":"considerationPrice","band":` + band + `,"baseAmount":"` + base + `","exact":"` + exact + `",`
		if rounding != "" {
			s += `"rounding":"` + rounding + `",`
		}
		return s + `"amount":"` + amount + `"}`
	}
	const b0, b1, b2 = `{"index":0,"upTo":"5000000"}`, `{"index":1,"upTo":"50000000"}`, `{"index":2,"upTo":null}`
	rounded := func(amount string) string {
		return `{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"` + amount + `"}`
	}
	checkEval(t, []evalCase{
		{"One", art12, n{"considerationPrice": 1}, nil, []string{line(b0, "1.00", "0.0075", "up to ₹0.01", "0.01"), rounded("0.99")}, "1.00"},
		{"BelowFiftyLakh", art12, n{"considerationPrice": 4999999}, nil, []string{line(b0, "4999999.00", "37499.9925", "up to ₹0.01", "37500.00")}, "37500.00"},
		{"FiftyLakh", art12, n{"considerationPrice": 5000000}, nil, []string{line(b0, "5000000.00", "37500", "", "37500.00")}, "37500.00"},
		{"AboveFiftyLakh", art12, n{"considerationPrice": 5000001}, nil, []string{line(b1, "5000001.00", "37500.005", "up to ₹0.01", "37500.01"), rounded("0.99")}, "37501.00"},
		{"OneCrore", art12, n{"considerationPrice": 10000000}, nil, []string{line(b1, "10000000.00", "62500", "", "62500.00")}, "62500.00"},
		{"BelowFiveCrore", art12, n{"considerationPrice": 49999999}, nil, []string{line(b1, "49999999.00", "262499.995", "up to ₹0.01", "262500.00")}, "262500.00"},
		{"FiveCrore", art12, n{"considerationPrice": 50000000}, nil, []string{line(b1, "50000000.00", "262500", "", "262500.00")}, "262500.00"},
		{"AboveFiveCrore", art12, n{"considerationPrice": 50000001}, nil, []string{line(b2, "50000001.00", "262500.0025", "up to ₹0.01", "262500.01"), rounded("0.99")}, "262501.00"},
		{"TenCrore", art12, n{"considerationPrice": 100000000}, nil, []string{line(b2, "100000000.00", "387500", "", "387500.00")}, "387500.00"},
	})
}

func TestEvaluatePercentOfAndWhen(t *testing.T) {
	const body = `"inputs": {"partyCategory": {"required": true, "values": ["male", "female"]}, "locationClass": {"values": ["urban", "rural"]}},
		"components": [
		{"id": "a", "label": "A", "kind": "fixed", "amount": "1000", "when": {"partyCategory": ["female"]}},
		{"id": "b", "label": "B", "kind": "fixed", "amount": "500", "when": {"partyCategory": ["male"]}},
		{"id": "cess", "label": "Cess on A", "kind": "percentOf", "of": ["a"], "rate": "0.10"},
		{"id": "surcharge", "label": "Surcharge on A and B", "kind": "percentOf", "of": ["a", "b"], "rate": "0.02"},
		{"id": "urban", "label": "Urban women", "kind": "fixed", "amount": "7", "when": {"partyCategory": ["female"], "locationClass": ["urban"]}},
		{"id": "rural", "label": "Rural", "kind": "fixed", "amount": "3", "when": {"locationClass": ["rural"]}}]`
	const a, b = `{"id":"a","label":"A","kind":"fixed","exact":"1000","amount":"1000.00"}`, `{"id":"b","label":"B","kind":"fixed","exact":"500","amount":"500.00"}`
	const cess = `{"id":"cess","label":"Cess on A","kind":"percentOf","of":["a"],"baseAmount":"1000.00","rate":"0.10","exact":"100","amount":"100.00"}`
	checkEval(t, []evalCase{
		{"OfApplied", body, nil, e{"partyCategory": "female"}, []string{a, cess,
			`{"id":"surcharge","label":"Surcharge on A and B","kind":"percentOf","of":["a","b"],"baseAmount":"1000.00","rate":"0.02","exact":"20","amount":"20.00"}`}, "1120.00"},
		{"OfNotApplied", body, nil, e{"partyCategory": "male"}, []string{b,
			`{"id":"surcharge","label":"Surcharge on A and B","kind":"percentOf","of":["a","b"],"baseAmount":"500.00","rate":"0.02","exact":"10","amount":"10.00"}`}, "510.00"},
		{"WhenEveryInputHolds", body, nil, e{"partyCategory": "female", "locationClass": "urban"}, []string{a, cess,
			`{"id":"surcharge","label":"Surcharge on A and B","kind":"percentOf","of":["a","b"],"baseAmount":"1000.00","rate":"0.02","exact":"20","amount":"20.00"}`,
			`{"id":"urban","label":"Urban women","kind":"fixed","exact":"7","amount":"7.00"}`}, "1127.00"},
		{"WhenOneInputFails", body, nil, e{"partyCategory": "male", "locationClass": "urban"}, []string{b,
			`{"id":"surcharge","label":"Surcharge on A and B","kind":"percentOf","of":["a","b"],"baseAmount":"500.00","rate":"0.02","exact":"10","amount":"10.00"}`}, "510.00"},
		{"WhenOnAnAbsentInputFails", body, nil, e{"partyCategory": "female"}, []string{a, cess,
			`{"id":"surcharge","label":"Surcharge on A and B","kind":"percentOf","of":["a","b"],"baseAmount":"1000.00","rate":"0.02","exact":"20","amount":"20.00"}`}, "1120.00"},
		{"WhenOnTheOtherInput", body, nil, e{"partyCategory": "male", "locationClass": "rural"}, []string{b,
			`{"id":"surcharge","label":"Surcharge on A and B","kind":"percentOf","of":["a","b"],"baseAmount":"500.00","rate":"0.02","exact":"10","amount":"10.00"}`,
			`{"id":"rural","label":"Rural","kind":"fixed","exact":"3","amount":"3.00"}`}, "513.00"},
	})
}

func TestEvaluatePercentOfAConcession(t *testing.T) {
	// A cess on a duty and its concession is on what they add up to, rounded.
	checkEval(t, []evalCase{
		{"OnTheNet", priceInput + `"components": [
			{"id": "duty", "label": "Duty", "kind": "percent", "base": "considerationPrice", "rate": "0.05"},
			{"id": "women", "label": "Women", "kind": "percent", "base": "considerationPrice", "rate": "-0.01"},
			{"id": "cess", "label": "Cess", "kind": "percentOf", "of": ["duty", "women"], "rate": "0.10"}]`, n{"considerationPrice": 12345}, nil, []string{
			`{"id":"duty","label":"Duty","kind":"percent","base":"considerationPrice","baseAmount":"12345.00","rate":"0.05","exact":"617.25","amount":"617.25"}`,
			`{"id":"women","label":"Women","kind":"percent","base":"considerationPrice","baseAmount":"12345.00","rate":"-0.01","exact":"-123.45","amount":"-123.45"}`,
			`{"id":"cess","label":"Cess","kind":"percentOf","of":["duty","women"],"baseAmount":"493.80","rate":"0.10","exact":"49.38","amount":"49.38"}`,
			`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.82"}`}, "544.00"},
	})
}

func TestEvaluateComponentLimits(t *testing.T) {
	const body = priceInput + `"components": [{"id": "duty", "label": "1%, ₹100 to ₹1,000", "kind": "percent", "base": "considerationPrice", "rate": "0.01", "min": "100", "max": "1000"}]`
	line := func(base, exact, limit, amount string) string {
		s := `{"id":"duty","label":"1%, ₹100 to ₹1,000","kind":"percent","base":"considerationPrice","baseAmount":"` + base + `","rate":"0.01","exact":"` + exact + `",`
		if limit != "" {
			s += `"limit":"` + limit + `",`
		}
		return s + `"amount":"` + amount + `"}`
	}
	checkEval(t, []evalCase{
		{"Min", body, n{"considerationPrice": 5000}, nil, []string{line("5000.00", "50", "min", "100.00")}, "100.00"},
		{"AtMin", body, n{"considerationPrice": 10000}, nil, []string{line("10000.00", "100", "", "100.00")}, "100.00"},
		{"Between", body, n{"considerationPrice": 50000}, nil, []string{line("50000.00", "500", "", "500.00")}, "500.00"},
		{"Max", body, n{"considerationPrice": 200000}, nil, []string{line("200000.00", "2000", "max", "1000.00")}, "1000.00"},
		{"MinAfterRounding", priceInput + `"components": [{"id": "duty", "label": "D", "kind": "percent", "base": "considerationPrice", "rate": "0.001",
			"rounding": {"step": "1", "mode": "down"}, "min": "1"}]`, n{"considerationPrice": 1500}, nil, []string{
			`{"id":"duty","label":"D","kind":"percent","base":"considerationPrice","baseAmount":"1500.00","rate":"0.001","exact":"1.5","rounding":"down to ₹1","amount":"1.00"}`}, "1.00"},
		{"MinOfARoundedDownAmount", priceInput + `"components": [{"id": "duty", "label": "D", "kind": "percent", "base": "considerationPrice", "rate": "0.001",
			"rounding": {"step": "1", "mode": "down"}, "min": "1"}]`, n{"considerationPrice": 999}, nil, []string{
			`{"id":"duty","label":"D","kind":"percent","base":"considerationPrice","baseAmount":"999.00","rate":"0.001","exact":"0.999","rounding":"down to ₹1","limit":"min","amount":"1.00"}`}, "1.00"},
	})
}

func TestEvaluateRoundingModes(t *testing.T) {
	// A fixed ₹1,000 and a percent rounded by mode: the total stays above 0.
	body := func(rate, step, mode string) string {
		return `"inputs": {"considerationPrice": {"required": true, "positive": true, "max": "100000"}}, "components": [{"id": "fee", "label": "Fee", "kind": "fixed", "amount": "1000"},
			{"id": "duty", "label": "D", "kind": "percent", "base": "considerationPrice", "rate": "` + rate + `", "rounding": {"step": "` + step + `", "mode": "` + mode + `"}}]`
	}
	const fee = `{"id":"fee","label":"Fee","kind":"fixed","exact":"1000","amount":"1000.00"}`
	line := func(base, rate, exact, rounding, amount string) string {
		s := `{"id":"duty","label":"D","kind":"percent","base":"considerationPrice","baseAmount":"` + base + `","rate":"` + rate + `","exact":"` + exact + `",`
		if rounding != "" {
			s += `"rounding":"` + rounding + `",`
		}
		return s + `"amount":"` + amount + `"}`
	}
	rounded := func(amount string) string {
		return `{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"` + amount + `"}`
	}
	checkEval(t, []evalCase{
		{"Up", body("0.01", "1", "up"), n{"considerationPrice": 12345}, nil, []string{fee, line("12345.00", "0.01", "123.45", "up to ₹1", "124.00")}, "1124.00"},
		{"Down", body("0.01", "1", "down"), n{"considerationPrice": 12345}, nil, []string{fee, line("12345.00", "0.01", "123.45", "down to ₹1", "123.00")}, "1123.00"},
		{"HalfUpBelowHalf", body("0.01", "1", "halfUp"), n{"considerationPrice": 12345}, nil, []string{fee, line("12345.00", "0.01", "123.45", "half up to ₹1", "123.00")}, "1123.00"},
		{"HalfUpAtHalf", body("0.01", "1", "halfUp"), n{"considerationPrice": 12350}, nil, []string{fee, line("12350.00", "0.01", "123.5", "half up to ₹1", "124.00")}, "1124.00"},
		{"UpOfANegativeGoesTowardZero", body("-0.01", "1", "up"), n{"considerationPrice": 12345}, nil, []string{fee, line("12345.00", "-0.01", "-123.45", "up to ₹1", "-123.00")}, "877.00"},
		{"DownOfANegativeGoesAwayFromZero", body("-0.01", "1", "down"), n{"considerationPrice": 12345}, nil, []string{fee, line("12345.00", "-0.01", "-123.45", "down to ₹1", "-124.00")}, "876.00"},
		{"HalfUpOfANegative", body("-0.01", "1", "halfUp"), n{"considerationPrice": 12355}, nil, []string{fee, line("12355.00", "-0.01", "-123.55", "half up to ₹1", "-124.00")}, "876.00"},
		{"HalfUpOfANegativeTieGoesUp", body("-0.01", "1", "halfUp"), n{"considerationPrice": 12350}, nil, []string{fee, line("12350.00", "-0.01", "-123.5", "half up to ₹1", "-123.00")}, "877.00"},
		{"UpOfANegativeInPaise", body("-0.00015", "0.01", "up"), n{"considerationPrice": 12345}, nil, []string{fee, line("12345.00", "-0.00015", "-1.85175", "up to ₹0.01", "-1.85"), rounded("0.85")}, "999.00"},
		{"AStepOfFivePaise", body("0.01", "0.05", "up"), n{"considerationPrice": 12346}, nil, []string{fee, line("12346.00", "0.01", "123.46", "up to ₹0.05", "123.50"), rounded("0.50")}, "1124.00"},
		{"ExactIsNotRounded", body("0.01", "1", "up"), n{"considerationPrice": 12300}, nil, []string{fee, line("12300.00", "0.01", "123", "", "123.00")}, "1123.00"},
	})
}

func TestEvaluateTotal(t *testing.T) {
	total := func(t string) string {
		return priceInput + `"components": [{"id": "duty", "label": "D", "kind": "percent", "base": "considerationPrice", "rate": "0.05"}], "total": ` + t
	}
	line := func(base, exact, amount string) string {
		return `{"id":"duty","label":"D","kind":"percent","base":"considerationPrice","baseAmount":"` + base + `","rate":"0.05","exact":"` + exact + `","amount":"` + amount + `"}`
	}
	const hundredHalfUp = `{"rounding": {"step": "100", "mode": "halfUp"}}`
	hundred := func(amount string) string {
		return `{"id":"rounding","label":"Total rounded half up to ₹100","kind":"rounding","amount":"` + amount + `"}`
	}
	const bounded = `{"min": "100", "max": "1000"}`
	checkEval(t, []evalCase{
		{"ToHundredHalfUpDown", total(hundredHalfUp), n{"considerationPrice": 34980}, nil, []string{line("34980.00", "1749", "1749.00"), hundred("-49.00")}, "1700.00"},
		{"ToHundredHalfUpAtHalf", total(hundredHalfUp), n{"considerationPrice": 35000}, nil, []string{line("35000.00", "1750", "1750.00"), hundred("50.00")}, "1800.00"},
		{"ToHundredHalfUpOfPaise", total(hundredHalfUp), n{"considerationPrice": 34999}, nil, []string{line("34999.00", "1749.95", "1749.95"), hundred("-49.95")}, "1700.00"},
		{"ToHundredWhole", total(hundredHalfUp), n{"considerationPrice": 34000}, nil, []string{line("34000.00", "1700", "1700.00")}, "1700.00"},
		{"ToHundredHalfUpToZero", total(hundredHalfUp), n{"considerationPrice": 999}, nil, []string{line("999.00", "49.95", "49.95"), hundred("-49.95")}, "0.00"},
		{"DownToTheRupee", total(`{"rounding": {"step": "1", "mode": "down"}}`), n{"considerationPrice": 19}, nil, []string{line("19.00", "0.95", "0.95"),
			`{"id":"rounding","label":"Total rounded down to ₹1","kind":"rounding","amount":"-0.95"}`}, "0.00"},
		{"Minimum", total(bounded), n{"considerationPrice": 1}, nil, []string{line("1.00", "0.05", "0.05"),
			`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.95"}`,
			`{"id":"minimum","label":"Minimum duty ₹100","kind":"cap","amount":"99.00"}`}, "100.00"},
		{"AtTheMinimum", total(bounded), n{"considerationPrice": 2000}, nil, []string{line("2000.00", "100", "100.00")}, "100.00"},
		{"Between", total(bounded), n{"considerationPrice": 10000}, nil, []string{line("10000.00", "500", "500.00")}, "500.00"},
		{"Maximum", total(bounded), n{"considerationPrice": 100001}, nil, []string{line("100001.00", "5000.05", "5000.05"),
			`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.95"}`,
			`{"id":"maximum","label":"Maximum duty ₹1000","kind":"cap","amount":"-4001.00"}`}, "1000.00"},
		{"MinimumAfterRoundingToHundred", total(`{"rounding": {"step": "100", "mode": "up"}, "min": "250"}`), n{"considerationPrice": 20}, nil, []string{line("20.00", "1", "1.00"),
			`{"id":"rounding","label":"Total rounded up to ₹100","kind":"rounding","amount":"99.00"}`,
			`{"id":"minimum","label":"Minimum duty ₹250","kind":"cap","amount":"150.00"}`}, "250.00"},
	})
}

func TestEvaluateBasesAndExact(t *testing.T) {
	const third = priceInput + `"bases": {"third": {"div": [{"input": "considerationPrice"}, {"const": "3"}]}},
		"components": [{"id": "duty", "label": "D", "kind": "percent", "base": "third", "rate": "0.05"}]`
	rules := ruleOf(t, third)
	d, err := rules.Evaluate(quote(n{"considerationPrice": 1000}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Bases, []BaseValue{{"third", "333.34"}}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("bases = %v, want %v (1000/3 rounded up to the paisa)", got, want)
	}
	if got, want := lineJSON(t, d.Lines[0]),
		`{"id":"duty","label":"D","kind":"percent","base":"third","baseAmount":"333.34","rate":"0.05","exact":"16.667","rounding":"up to ₹0.01","amount":"16.67"}`; got != want {
		t.Errorf("line = %s, want %s", got, want)
	}
	checkSum(t, d)

	// Maharashtra's leave and licence base over 7 months: 25,000 × 7 +
	// 5,00,000 × 10% × 7/12 = 2,04,166.666…, shown as 2,04,166.67.
	rules = ruleOf(t, `"inputs": {"monthlyRent": {"required": true, "positive": true}, "termMonths": {"required": true, "min": "1", "max": "60"},
		"refundableDeposit": {"default": "0"}, "nonRefundableDeposit": {"default": "0"}},
		"bases": {"licence": {"sum": [{"mul": [{"input": "monthlyRent"}, {"input": "termMonths"}]}, {"input": "nonRefundableDeposit"},
		{"mul": [{"input": "refundableDeposit"}, {"const": "0.10"}, {"div": [{"input": "termMonths"}, {"const": "12"}]}]}]}},
		"components": [{"id": "duty", "label": "0.25%", "kind": "percent", "base": "licence", "rate": "0.0025"}],
		"total": {"rounding": {"step": "100", "mode": "halfUp"}}`)
	d, err = rules.Evaluate(quote(n{"monthlyRent": 25000, "termMonths": 7, "refundableDeposit": 500000}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Bases[0].Amount, "204166.67"; got != want {
		t.Errorf("licence base = %s, want %s", got, want)
	}
	var got []string
	for _, l := range d.Lines {
		got = append(got, lineJSON(t, l))
	}
	want := []string{
		`{"id":"duty","label":"0.25%","kind":"percent","base":"licence","baseAmount":"204166.67","rate":"0.0025","exact":"510.416675","rounding":"up to ₹0.01","amount":"510.42"}`,
		`{"id":"rounding","label":"Total rounded half up to ₹100","kind":"rounding","amount":"-10.42"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := d.Total, "500.00"; got != want {
		t.Errorf("total = %s, want %s", got, want)
	}
	checkSum(t, d)
}

func TestFormatExact(t *testing.T) {
	// Every value a component multiplies is a decimal (rates, amounts, and
	// bases rounded to the paisa), so a quote's exact terminates; a value
	// that does not is written p/q.
	for _, tc := range []struct {
		x    *big.Rat
		want string
	}{
		{big.NewRat(500, 1), "500"},
		{big.NewRat(4500001, 1000), "4500.001"},
		{big.NewRat(-12345, 100), "-123.45"},
		{big.NewRat(-1, 2), "-0.5"},
		{big.NewRat(0, 1), "0"},
		{big.NewRat(1, 1<<20), "0.00000095367431640625"},
		{big.NewRat(1, 3), "1/3"},
		{big.NewRat(-2, 3), "-2/3"},
		{big.NewRat(1000, 6), "500/3"},
		{big.NewRat(1, 30), "1/30"},
	} {
		if got := formatExact(tc.x); got != tc.want {
			t.Errorf("formatExact(%s) = %s, want %s", tc.x.RatString(), got, tc.want)
		}
	}
}

func TestEvaluateInputErrors(t *testing.T) {
	rules := ruleOf(t, `"inputs": {
		"considerationPrice": {"required": true, "positive": true}, "marketValue": {"required": true}, "monthlyRent": {"positive": true},
		"refundableDeposit": {"min": "1000"}, "nonRefundableDeposit": {"max": "500"}, "termMonths": {"required": true, "min": "1", "max": "60"},
		"amount": {"min": "1"},
		"partyCategory": {"required": true, "values": ["male", "female", "joint_male_female"]}, "locationClass": {"required": true, "values": ["urban"]},
		"propertyUse": {"values": ["residential"]}},
		"components": [{"id": "duty", "label": "D", "kind": "fixed", "amount": "1"}]`)
	const required = " is required by the duty rule of Sale Deed in Maharashtra in force on 2025-09-01"
	for _, tc := range []struct {
		name     string
		nums     n
		enums    e
		names    []string
		messages []string
	}{
		{"AllAtOnceInOrder",
			n{"termMonths": 61, "considerationPrice": 0, "monthlyRent": 0, "refundableDeposit": 999, "nonRefundableDeposit": 501, "amount": 0},
			e{"propertyUse": "commercial", "partyCategory": "widow"},
			[]string{"considerationPrice", "marketValue", "monthlyRent", "refundableDeposit", "nonRefundableDeposit", "termMonths", "amount", "partyCategory", "locationClass", "propertyUse"},
			[]string{
				"considerationPrice must be greater than 0 for this purpose",
				"marketValue" + required,
				"monthlyRent must be greater than 0 for this purpose",
				"refundableDeposit must be at least 1000 for this purpose",
				"nonRefundableDeposit must be at most 500 for this purpose",
				"termMonths must be at most 60 for this purpose",
				"amount must be at least 1 for this purpose",
				"partyCategory must be one of: male, female, joint_male_female",
				"locationClass" + required,
				"propertyUse must be one of: residential"}},
		{"BelowMin", n{"considerationPrice": 1, "marketValue": 0, "termMonths": 0}, e{"partyCategory": "male", "locationClass": "urban"},
			[]string{"termMonths"}, []string{"termMonths must be at least 1 for this purpose"}},
		{"EveryRequiredAbsent", nil, nil,
			[]string{"considerationPrice", "marketValue", "termMonths", "partyCategory", "locationClass"},
			[]string{"considerationPrice" + required, "marketValue" + required, "termMonths" + required, "partyCategory" + required, "locationClass" + required}},
		{"AnEmptyEnumValueIsAbsent", n{"considerationPrice": 1, "marketValue": 0, "termMonths": 1}, e{"partyCategory": "", "locationClass": "urban"},
			[]string{"partyCategory"}, []string{"partyCategory" + required}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.Evaluate(quote(tc.nums, tc.enums))
			if ie := checkInputError(t, err, tc.names, tc.messages); ie.Version != rules[0] {
				t.Errorf("InputError.Version = %p, want the version in force %p", ie.Version, rules[0])
			}
		})
	}
	t.Run("AtTheBounds", func(t *testing.T) {
		d, err := rules.Evaluate(quote(n{"considerationPrice": 1, "marketValue": 0, "monthlyRent": 1, "refundableDeposit": 1000,
			"nonRefundableDeposit": 500, "termMonths": 60, "amount": 1}, e{"partyCategory": "joint_male_female", "locationClass": "urban", "propertyUse": "residential"}))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := d.Total, "1.00"; got != want {
			t.Errorf("total = %s, want %s", got, want)
		}
	})
}

func TestEvaluateDefaultsAndIgnoredInputs(t *testing.T) {
	rules := ruleOf(t, `"inputs": {"marketValue": {"max": "1000"}, "refundableDeposit": {"default": "0", "max": "1000"}, "nonRefundableDeposit": {"default": "100", "max": "1000"},
		"locationClass": {"values": ["urban", "rural"], "default": "urban"}},
		"bases": {"deposits": {"sum": [{"input": "marketValue"}, {"input": "refundableDeposit"}, {"input": "nonRefundableDeposit"}]}},
		"components": [{"id": "duty", "label": "D", "kind": "percent", "base": "deposits", "rate": "1"},
		{"id": "urban", "label": "Urban", "kind": "fixed", "amount": "10", "when": {"locationClass": ["urban"]}}]`)
	for _, tc := range []struct {
		name    string
		nums    n
		enums   e
		total   string
		inputs  string
		ignored string
	}{
		{"DefaultsUsed", nil, nil, "110.00", `{"locationClass":"urban","nonRefundableDeposit":100,"refundableDeposit":0}`, `[]`},
		{"DefaultsReplaced", n{"refundableDeposit": 5, "nonRefundableDeposit": 0}, e{"locationClass": "rural"}, "5.00",
			`{"locationClass":"rural","nonRefundableDeposit":0,"refundableDeposit":5}`, `[]`},
		{"AnOptionalInputWithoutDefaultReads0", n{"marketValue": 7}, nil, "117.00",
			`{"locationClass":"urban","marketValue":7,"nonRefundableDeposit":100,"refundableDeposit":0}`, `[]`},
		{"IgnoredInTheirOrderAndNotChecked", n{"termMonths": 999999999999999, "considerationPrice": 0, "amount": 5},
			e{"tradeType": "whatever", "partyCategory": "Not A Value"}, "110.00",
			`{"locationClass":"urban","nonRefundableDeposit":100,"refundableDeposit":0}`, `["considerationPrice","termMonths","amount","partyCategory","tradeType"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := rules.Evaluate(quote(tc.nums, tc.enums))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := d.Total, tc.total; got != want {
				t.Errorf("total = %s, want %s", got, want)
			}
			if got, want := mustJSON(t, d.Inputs), tc.inputs; got != want {
				t.Errorf("inputs = %s, want %s", got, want)
			}
			if got, want := mustJSON(t, d.IgnoredInputs), tc.ignored; got != want {
				t.Errorf("ignoredInputs = %s, want %s", got, want)
			}
			checkSum(t, d)
		})
	}
}

// normJSON is JSON text with its members sorted and no space.
func normJSON(t testing.TB, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, v)
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEvaluateMalformedInputs(t *testing.T) {
	rules := ruleOf(t, `"inputs": {"considerationPrice": {"required": true, "positive": true}, "marketValue": {"required": true}},
		"bases": {"per": {"div": [{"input": "marketValue"}, {"input": "considerationPrice"}]}},
		"components": [{"id": "duty", "label": "D", "kind": "percent", "base": "per", "rate": "0.05"}]`)
	t.Run("NotReportedAgain", func(t *testing.T) {
		req := quote(nil, nil)
		req.Malformed = map[string]bool{"considerationPrice": true}
		_, err := rules.Evaluate(req)
		checkInputError(t, err, []string{"marketValue"}, []string{"marketValue is required by the duty rule of Sale Deed in Maharashtra in force on 2025-09-01"})
	})
	t.Run("NeverEvaluated", func(t *testing.T) {
		// The caller reports a malformed input; the rule is not evaluated
		// without it (here it would divide by 0: a broken rule, a 500).
		req := quote(n{"marketValue": 100}, nil)
		req.Malformed = map[string]bool{"considerationPrice": true}
		d, err := rules.Evaluate(req)
		var ie *InputError
		if !errors.As(err, &ie) || len(ie.Problems) != 0 || d != nil {
			t.Errorf("Evaluate = %v, %v; want an InputError without problems of its own", d, err)
		}
	})
	t.Run("IgnoredWhenNotDeclared", func(t *testing.T) {
		req := quote(n{"considerationPrice": 10, "marketValue": 100}, nil)
		req.Malformed = map[string]bool{"termMonths": true}
		d, err := rules.Evaluate(req)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := mustJSON(t, d.IgnoredInputs), `["termMonths"]`; got != want {
			t.Errorf("ignoredInputs = %s, want %s", got, want)
		}
	})
}

func TestEvaluateNoVersionInForce(t *testing.T) {
	rules, problems := ValidateRules(marshal(t, []any{dated("2021-07-09", "2023-10-01"), dated("2024-01-01", "")}))
	if problems != nil {
		t.Fatal(problems)
	}
	for _, date := range []string{"2021-07-08", "2023-10-01", "2023-12-31"} {
		t.Run(date, func(t *testing.T) {
			_, err := rules.Evaluate(Request{Purpose: "Sale Deed", State: "West Bengal", Date: date,
				Numbers: n{"considerationPrice": 1, "marketValue": 1}, Enums: e{"partyCategory": "male"}})
			ie := checkInputError(t, err, []string{"instrumentDate"}, []string{"no duty rule of Sale Deed in West Bengal is in force on " + date})
			if ie.Version != nil {
				t.Errorf("InputError.Version = %v, want nil", ie.Version)
			}
		})
	}
	t.Run("InForce", func(t *testing.T) {
		for _, date := range []string{"2021-07-09", "2023-09-30", "2024-01-01"} {
			if _, err := rules.Evaluate(Request{Date: date, Numbers: n{"considerationPrice": 1, "marketValue": 1}, Enums: e{"partyCategory": "male"}}); err != nil {
				t.Errorf("on %s: %v", date, err)
			}
		}
	})
}

func TestEvaluateDeclaredEqual(t *testing.T) {
	const body = `"inputs": {"amount": {"required": true}}, "declared": "equal", "components": [{"id": "duty", "label": "Fixed", "kind": "fixed", "amount": "500"}]`
	for _, tc := range []struct {
		name, body, message string
	}{
		{"NotLegacy", body, "The duty for the purpose is: 500, while the amount passed is equal to: 400"},
		{"Legacy", `"legacy": true, ` + body, "The purpose have a fixed amount of: 500, while the amount passed is equal to: 400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := ruleOf(t, tc.body)
			_, err := rules.Evaluate(quote(n{"amount": 400}, nil))
			checkInputError(t, err, []string{"amount"}, []string{tc.message})
			d, err := rules.Evaluate(quote(n{"amount": 500}, nil))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := d.Amount, int64(500); got != want {
				t.Errorf("amount = %d, want %d", got, want)
			}
		})
	}
	t.Run("AgainstTheRoundedTotal", func(t *testing.T) {
		rules := ruleOf(t, `"inputs": {"amount": {"required": true}}, "declared": "equal", "components": [{"id": "duty", "label": "Fixed", "kind": "fixed", "amount": "0.50"}]`)
		if _, err := rules.Evaluate(quote(n{"amount": 1}, nil)); err != nil {
			t.Errorf("amount 1 for a total of ₹0.50 rounded up to ₹1: %v", err)
		}
		_, err := rules.Evaluate(quote(n{"amount": 0}, nil))
		checkInputError(t, err, []string{"amount"}, []string{"The duty for the purpose is: 1, while the amount passed is equal to: 0"})
	})
}

func TestEvaluateBroken(t *testing.T) {
	const twoInputs = `"inputs": {"considerationPrice": {"required": true}, "marketValue": {"required": true}}, `
	for _, tc := range []struct {
		name  string
		body  string
		nums  n
		why   string // "" when the rule is not broken
		total string
	}{
		{"TotalAboveTheMaximum", twoInputs + `"components": [
			{"id": "a", "label": "A", "kind": "percent", "base": "considerationPrice", "rate": "1"},
			{"id": "b", "label": "B", "kind": "percent", "base": "marketValue", "rate": "1"}]`,
			n{"considerationPrice": 600000000000000, "marketValue": 400000000000000}, "the total is 1000000000000000.00", ""},
		{"TotalAtTheMaximum", twoInputs + `"components": [
			{"id": "a", "label": "A", "kind": "percent", "base": "considerationPrice", "rate": "1"},
			{"id": "b", "label": "B", "kind": "percent", "base": "marketValue", "rate": "1"}]`,
			n{"considerationPrice": 599999999999999, "marketValue": 400000000000000}, "", "999999999999999.00"},
		{"RoundedAboveTheMaximum", twoInputs + `"components": [
			{"id": "a", "label": "A", "kind": "percent", "base": "considerationPrice", "rate": "1"},
			{"id": "b", "label": "B", "kind": "fixed", "amount": "0.01"}]`,
			n{"considerationPrice": MaxInput, "marketValue": 0}, "the total is 1000000000000000.00", ""},
		{"ALinePast15Digits", twoInputs + `"bases": {"sum": {"sum": [{"input": "considerationPrice"}, {"input": "marketValue"}]}},
			"components": [{"id": "a", "label": "A", "kind": "percent", "base": "sum", "rate": "1"},
			{"id": "b", "label": "B", "kind": "percent", "base": "sum", "rate": "-1"}]`,
			n{"considerationPrice": MaxInput, "marketValue": 1}, "line a is 1000000000000000.00, past 15 digits", ""},
		{"ABasePast20Digits", twoInputs + `"bases": {"licence": {"mul": [{"input": "considerationPrice"}, {"input": "marketValue"}]}},
			"components": [{"id": "a", "label": "A", "kind": "percent", "base": "licence", "rate": "0.000000000000000001"}]`,
			n{"considerationPrice": 100001, "marketValue": MaxInput}, "base licence is 100000999999999899999.00, past 20 digits", ""},
		{"ABaseOf20Digits", twoInputs + `"bases": {"licence": {"mul": [{"input": "considerationPrice"}, {"input": "marketValue"}]}},
			"components": [{"id": "a", "label": "A", "kind": "percent", "base": "licence", "rate": "0.000000000000000001"}]`,
			n{"considerationPrice": 99999, "marketValue": MaxInput}, "", "100.00"},
		{"ABaseAmountPast20Digits", twoInputs + `"bases": {"licence": {"mul": [{"input": "considerationPrice"}, {"input": "marketValue"}]}},
			"components": [{"id": "a", "label": "A", "kind": "percent", "base": "licence", "rate": "0.000000000000000001",
			"baseStep": {"step": "50000000000000000000", "mode": "up"}}]`,
			n{"considerationPrice": 99999, "marketValue": MaxInput}, "line a has a base of 100000000000000000000.00, past 20 digits", ""},
		{"TotalBelow0", twoInputs + `"components": [{"id": "a", "label": "A", "kind": "percent", "base": "considerationPrice", "rate": "-0.5"}]`,
			n{"considerationPrice": 100, "marketValue": 0}, "the total is -50.00", ""},
		{"TotalOfAConcessionRoundedTo0", twoInputs + `"components": [{"id": "a", "label": "A", "kind": "percent", "base": "considerationPrice", "rate": "-0.5"}]`,
			n{"considerationPrice": 1, "marketValue": 0}, "", "0.00"},
		{"TotalAt0", twoInputs + `"components": [
			{"id": "a", "label": "A", "kind": "percent", "base": "considerationPrice", "rate": "1"},
			{"id": "b", "label": "B", "kind": "percent", "base": "considerationPrice", "rate": "-1"}]`,
			n{"considerationPrice": MaxInput, "marketValue": 0}, "", "0.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parsedOf(t, tc.body).Evaluate(quote(tc.nums, nil))
			if tc.why == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got, want := d.Total, tc.total; got != want {
					t.Errorf("total = %s, want %s", got, want)
				}
				checkSum(t, d)
				return
			}
			var broken *BrokenError
			if !errors.As(err, &broken) {
				t.Fatalf("Evaluate = %v, %v; want a BrokenError", d, err)
			}
			if got, want := broken.Why, tc.why; got != want {
				t.Errorf("Why = %q, want %q", got, want)
			}
			if got, want := err.Error(), "the duty rule is broken: "+tc.why; got != want {
				t.Errorf("Error() = %q, want %q", got, want)
			}
		})
	}
}

func TestEvaluateTheSpecsExplainedQuote(t *testing.T) {
	// §8's example, KA-SALE-03: every line, base and input as shown there.
	ex := loadExamples(t)
	rules, problems := ValidateRules(ex.Rules["Karnataka/Sale Deed"].DutyRules)
	if problems != nil {
		t.Fatal(problems)
	}
	d, err := rules.Evaluate(quote(n{"considerationPrice": 4000000, "marketValue": 4500001}, e{"locationClass": "urban"}))
	if err != nil {
		t.Fatal(err)
	}
	d.Rule = RuleRef{}
	const want = `{"rule": {"article": "", "articleVersion": 0, "effectiveFrom": null, "effectiveTo": null, "hash": "", "citation": null},
   "instrumentDate": "2025-09-01",
   "inputs": {"considerationPrice": 4000000, "marketValue": 4500001, "locationClass": "urban"},
   "ignoredInputs": [],
   "bases": [{"name": "value", "amount": "4500001.00"}],
   "lines": [
    {"id": "duty", "label": "Stamp duty 5% of value", "kind": "percent", "base": "value", "baseAmount": "4500001.00",
     "rate": "0.05", "exact": "225000.05", "amount": "225000.05"},
    {"id": "additional_urban", "label": "Additional duty 2% of duty", "kind": "percentOf", "of": ["duty"],
     "baseAmount": "225000.05", "rate": "0.02", "exact": "4500.001", "rounding": "up to ₹0.01", "amount": "4500.01"},
    {"id": "cess", "label": "Cess 10% of duty", "kind": "percentOf", "of": ["duty"], "baseAmount": "225000.05",
     "rate": "0.10", "exact": "22500.005", "rounding": "up to ₹0.01", "amount": "22500.01"},
    {"id": "rounding", "label": "Total rounded up to ₹1", "kind": "rounding", "amount": "0.93"}],
   "total": "252001.00"}`
	if got, want := normJSON(t, mustJSON(t, d)), normJSON(t, want); got != want {
		t.Errorf("duty:\n%s\nwant:\n%s", got, want)
	}
	if got, want := d.Amount, int64(252001); got != want {
		t.Errorf("amount = %d, want %d", got, want)
	}
	ref := rules[0].Ref()
	if ref.Hash != rules[0].Hash() || !strings.HasPrefix(ref.Hash, "sha256:") || len(ref.Hash) != len("sha256:")+64 {
		t.Errorf("Ref().Hash = %q", ref.Hash)
	}
	if ref.EffectiveFrom != nil || ref.EffectiveTo != nil || ref.Citation == nil || ref.Citation.URL != "http://karnatakapropertylaws.blogspot.com/2019" {
		t.Errorf("Ref() = %+v", ref)
	}
}
