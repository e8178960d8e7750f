package stampduty

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"stampduty/shared/duty"
)

// legacyOf is the legacy rule of a, as §9 migrates it.
func legacyOf(a Article) duty.Legacy {
	l := duty.Legacy{Min: a.Min, Max: a.Max, Fixed: a.Fixed, Follows: a.FollowsConsideration}
	if a.Factor != nil {
		l.Factor = a.Factor.String()
	}
	return l
}

// TestLegacyEquivalence is §9's equivalence: over a grid of legacy
// articles, amounts and consideration prices, the migrated rule answers
// exactly what Article.Amount does, the same amount or the same message on
// the same field.
func TestLegacyEquivalence(t *testing.T) {
	factors := []string{"0.05", "0.07", "0.001", "0.000000000000000001", "0.333333333333333333", "1", "0.5", "0.0125"}
	bounds := [][2]int64{{0, MaxAmount}, {100, 2500000}, {1, 1}, {0, 0}, {500, 500}, {7, 10}, {MaxAmount, MaxAmount}}
	fixeds := []*int64{nil, ptr[int64](0), ptr[int64](20), ptr[int64](500), ptr[int64](MaxAmount)}
	values := []int64{0, 1, 2, 7, 99, 100, 101, 499, 500, 501, 1234567, 2500000, 10000001, 50000000000, MaxAmount - 1, MaxAmount}

	var arts []Article
	for _, b := range bounds {
		for _, f := range fixeds {
			if f != nil && (*f < b[0] || *f > b[1]) {
				continue // Validate refuses it: no stored article is like that
			}
			arts = append(arts, Article{PurposeName: "Sale", State: "Goa", Min: b[0], Max: b[1], Fixed: f})
			for _, fs := range factors {
				d, err := ParseDecimal(fs)
				if err != nil {
					t.Fatal(err)
				}
				arts = append(arts, Article{PurposeName: "Sale", State: "Goa", Min: b[0], Max: b[1], Fixed: f, FollowsConsideration: true, Factor: &d})
			}
		}
	}
	compared := 0
	for _, a := range arts {
		if errs := a.Validate(); errs != nil {
			t.Fatalf("article %+v: %v", a, errs)
		}
		rules, err := duty.Migrate(legacyOf(a))
		if err != nil {
			t.Fatalf("Migrate(%+v): %v", legacyOf(a), err)
		}
		if problems := duty.Check(rules); problems != nil {
			t.Fatalf("Check(Migrate(%+v)): %v", legacyOf(a), problems)
		}
		for _, amount := range values {
			for _, price := range values {
				want := describeAmount(a.Amount(amount, price))
				d, err := rules.Evaluate(duty.Request{Purpose: "Sale", State: "Goa", Date: "2025-09-01",
					Numbers: map[string]int64{"amount": amount, "considerationPrice": price}})
				var got string
				var ie *duty.InputError
				switch {
				case errors.As(err, &ie):
					got = fmt.Sprintf("%v: %s", ie.Problems[0].Path[0], ie.Problems[0].Message)
				case err != nil:
					got = "broken: " + err.Error()
				default:
					got = fmt.Sprint(d.Amount)
				}
				if got != want {
					t.Fatalf("article %+v (factor %v), amount %d, price %d: rule %q, Amount %q", a, legacyOf(a).Factor, amount, price, got, want)
				}
				compared++
			}
		}
	}
	t.Logf("%d articles, %d cases compared", len(arts), compared)
}

// describeAmount writes Article.Amount's answer as the test compares it.
func describeAmount(v int64, err error) string {
	var e *Error
	switch {
	case errors.As(err, &e) && e.Code == EINVALID:
		return fmt.Sprintf("%s: %s", e.Fields[0].Path, e.Fields[0].Message)
	case err != nil:
		return "broken: " + err.Error()
	}
	return fmt.Sprint(v)
}

// TestBrokenRuleIsInternal: a rule that cannot be applied to the inputs it
// is given (a total below 0: only a rule stored without §11's probe can
// do it) answers 500 with nothing of the rule in its message, the article
// in the error kept for the logs; Validate refuses to save it.
func TestBrokenRuleIsInternal(t *testing.T) {
	rules, problems := duty.ParseRules([]byte(`[{"citation": {"text": "t", "url": "https://example.org"},
	  "inputs": {"considerationPrice": {"required": true}, "marketValue": {"required": true}},
	  "components": [{"id": "duty", "label": "Duty", "kind": "percent", "base": "considerationPrice", "rate": "0.01"},
	                 {"id": "off", "label": "Concession", "kind": "percent", "base": "marketValue", "rate": "-0.05"}]}]`))
	if problems != nil {
		t.Fatal(problems)
	}
	a := Article{ID: 9, DocumentID: "d9", PurposeName: "Sale", State: "Goa", Rules: rules}
	req := QuoteRequest{Quantity: 1, Inputs: duty.Request{Numbers: map[string]int64{"considerationPrice": 100, "marketValue": 1000}}}
	_, err := a.Quote(req, "2025-09-01")
	if got, want := ErrorCode(err), EINTERNAL; got != want {
		t.Fatalf("code %q, want %q (%v)", got, want, err)
	}
	if got, want := ErrorMessage(err), "Internal Server Error"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if !strings.Contains(err.Error(), `"Sale"`) {
		t.Errorf("the logged error %q does not name the article", err)
	}
	if errs := a.Validate(); len(errs) == 0 || !strings.Contains(errs[0].Message, "probe") {
		t.Errorf("Validate() = %v, want the probe's problem", errs)
	}
}
