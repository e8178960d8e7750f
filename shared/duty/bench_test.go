package duty

import (
	"fmt"
	"sync"
	"testing"
)

// largestRule is the largest rule §2–§5 allow, as the spec's cost claim
// reads it (§15): 32 components, among them whole and marginal slabs of
// 16 bands each, percentOf and when conditions; every numeric input; and
// enum inputs making 4,096 combinations, the most Check takes. Its
// canonical JSON is within 8 KiB.
func largestRule(tb testing.TB) []byte {
	tb.Helper()
	vals := func(prefix string) []any {
		var out []any
		for i := 0; i < 16; i++ {
			out = append(out, fmt.Sprintf("%s%d", prefix, i))
		}
		return out
	}
	var whole, marginal []any
	for i := 1; i <= 16; i++ { // §5: 1–16 bands
		upTo := any(fmt.Sprint(int64(i) * 2000000))
		if i == 16 {
			upTo = nil
		}
		b := obj{"upTo": upTo, "rate": fmt.Sprintf("0.0%02d", i), "amount": fmt.Sprint(i * 100)}
		switch i % 4 {
		case 1:
			b["baseStep"] = obj{"step": "100", "mode": "up"}
		case 2:
			b["min"] = "500"
		case 3:
			b["max"] = "9000000"
		}
		whole = append(whole, b)
		marginal = append(marginal, obj{"upTo": upTo, "rate": fmt.Sprintf("0.00%02d", i)})
	}
	cs := []any{
		obj{"id": "whole", "label": "Whole slabs", "kind": "slabs", "method": "whole", "base": "value", "bands": whole},
		obj{"id": "marginal", "label": "Marginal slabs", "kind": "slabs", "method": "marginal", "base": "value", "bands": marginal},
		obj{"id": "lease", "label": "Lease by term", "kind": "slabs", "method": "whole", "base": "licence", "selectBy": "termMonths", "bands": []any{
			obj{"upTo": "12", "rate": "0.001"}, obj{"upTo": "60", "rate": "0.002"}, obj{"upTo": nil, "rate": "0.005"}}},
		obj{"id": "pages", "label": "₹10 per ₹500 or part", "kind": "perUnit", "base": "licence", "unit": "500", "amount": "10", "part": "counts", "over": "1000"},
	}
	for i := 0; len(cs) < 24; i++ {
		c := obj{"id": fmt.Sprintf("p%d", i), "label": fmt.Sprintf("Part %d", i), "kind": "percent", "base": "value",
			"rate": fmt.Sprintf("0.00%d", i%10+1), "rounding": obj{"step": "1", "mode": []string{"up", "down", "halfUp"}[i%3]}}
		switch i % 4 {
		case 0:
			c["when"] = obj{"partyCategory": vals("a")[:8]}
		case 1:
			c["when"] = obj{"locationClass": vals("b")[i%8 : i%8+8], "propertyUse": vals("c")[:12]}
		case 2:
			c["baseStep"] = obj{"step": "100", "mode": "up"}
			c["min"] = "100"
		case 3:
			c["rate"] = "-0.001"
			c["when"] = obj{"partyCategory": []any{"a1", "a3"}}
		}
		cs = append(cs, c)
	}
	for i := 0; len(cs) < 31; i++ { // §2: 1–32 components, with the fee
		cs = append(cs, obj{"id": fmt.Sprintf("cess%d", i), "label": fmt.Sprintf("Cess %d", i), "kind": "percentOf",
			"of": []any{"whole", "marginal", fmt.Sprintf("p%d", 2*i), fmt.Sprintf("p%d", 2*i+1)}, "rate": "0.01"})
	}
	cs = append(cs, obj{"id": "fee", "label": "Fee", "kind": "fixed", "amount": "100", "when": obj{"propertyUse": vals("c")[4:]}})
	v := obj{
		"effectiveFrom": "2022-04-01", "effectiveTo": nil,
		"citation": obj{"text": "The largest rule the spec allows", "url": "https://example.org/largest"},
		"inputs": obj{
			"considerationPrice": obj{"required": true, "positive": true}, "marketValue": obj{"required": true},
			"monthlyRent": obj{"max": "10000000"}, "refundableDeposit": obj{"default": "0", "max": "100000000"},
			"nonRefundableDeposit": obj{"default": "0", "max": "100000000"}, "termMonths": obj{"required": true, "min": "1", "max": "360"},
			"amount":        obj{},
			"partyCategory": obj{"required": true, "values": vals("a")}, "locationClass": obj{"required": true, "values": vals("b")},
			"propertyUse": obj{"required": true, "values": vals("c")},
		},
		"bases": ord{
			{"value", obj{"max": []any{obj{"input": "considerationPrice"}, obj{"input": "marketValue"}}}},
			{"licence", obj{"sum": []any{obj{"mul": []any{obj{"input": "monthlyRent"}, obj{"input": "termMonths"}}}, obj{"input": "nonRefundableDeposit"},
				obj{"mul": []any{obj{"input": "refundableDeposit"}, obj{"const": "0.10"}, obj{"div": []any{obj{"input": "termMonths"}, obj{"const": "12"}}}}}}}},
		},
		"components": cs,
		"total":      obj{"rounding": obj{"step": "100", "mode": "halfUp"}, "min": "100", "max": "999999999999999"},
	}
	data := marshal(tb, []any{v})
	rules, problems := ValidateRules(data)
	if problems != nil {
		tb.Fatalf("the largest rule is not valid: %v", problems)
	}
	if got, want := len(rules[0].Components), 32; got != want {
		tb.Fatalf("%d components, want %d", got, want)
	}
	for _, c := range rules[0].Components[:2] {
		if got, want := len(c.Bands), 16; got != want {
			tb.Fatalf("%s: %d bands, want %d", c.ID, got, want)
		}
	}
	return data
}

// largest is largestRule, built and validated once for every benchmark.
var largest struct {
	once sync.Once
	data []byte
}

func largestRuleOnce(tb testing.TB) []byte {
	tb.Helper()
	largest.once.Do(func() { largest.data = largestRule(tb) })
	if largest.data == nil {
		tb.Fatal("the largest rule could not be built")
	}
	return largest.data
}

// largestRequest applies every component it can: a value above every
// band, so that the marginal slabs add up all 16.
func largestRequest() Request {
	return Request{Purpose: "Sale Deed", State: "Maharashtra", Date: "2025-09-01",
		Numbers: map[string]int64{"considerationPrice": 987654321987, "marketValue": 123456789, "monthlyRent": 250000,
			"refundableDeposit": 5000000, "nonRefundableDeposit": 100000, "termMonths": 37},
		Enums: map[string]string{"partyCategory": "a3", "locationClass": "b5", "propertyUse": "c7"}}
}

func TestLargestRule(t *testing.T) {
	data := largestRuleOnce(t)
	rules, _ := ParseRules(data)
	if size := rules[0].size; size > MaxVersionBytes {
		t.Fatalf("%d bytes", size)
	}
	d, err := rules.Evaluate(largestRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(d.Lines), 32+1; got != want { // every component and the rounding
		t.Errorf("%d lines, want %d", got, want)
	}
	if got, want := *d.Lines[1].Band, (BandRef{Index: 15}); got.Index != want.Index || got.UpTo != nil {
		t.Errorf("marginal band = %+v, want the last", got)
	}
	checkDuty(t, d)
}

func BenchmarkEvaluateLargest(b *testing.B) {
	rules, _ := ParseRules(largestRuleOnce(b))
	req := largestRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rules.Evaluate(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateLargest(b *testing.B) {
	data := largestRuleOnce(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := ValidateRules(data); problems != nil {
			b.Fatal(problems)
		}
	}
}

func BenchmarkParseLargest(b *testing.B) {
	data := largestRuleOnce(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := ParseRules(data); problems != nil {
			b.Fatal(problems)
		}
	}
}
