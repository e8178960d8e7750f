package duty

import (
	"encoding/json"
	"fmt"
)

// Legacy is an article's amount rule as it was before duty rules
// (decisions.md, Amounts): a fixed amount, a range, or a factor of the
// consideration price clamped to bounds.
type Legacy struct {
	Min, Max int64
	Fixed    *int64
	Follows  bool
	// Factor is the factor of the consideration price as a decimal ("0.05"),
	// "" when there is none.
	Factor string
}

// legacySource is the citation of a migrated version: the contract's rule.
const legacySource = "shared/spec/decisions.md (Amounts)"

// Migrate returns the one version §9 gives a legacy article: in force
// always, marked legacy, answering exactly as the article's rule did.
func Migrate(l Legacy) (Rules, error) {
	type obj = map[string]any
	v := obj{"effectiveFrom": nil, "effectiveTo": nil, "legacy": true}
	switch {
	case l.Follows:
		lo, hi := l.Min, l.Max
		if l.Fixed != nil {
			lo, hi = *l.Fixed, *l.Fixed
		}
		v["citation"] = obj{"text": fmt.Sprintf("migrated: %s of consideration, [%d, %d]", l.Factor, lo, hi), "url": legacySource}
		v["inputs"] = obj{"considerationPrice": obj{"required": true, "positive": true}}
		v["components"] = []obj{{"id": "duty", "label": l.Factor + " × consideration price", "kind": KindPercent, "base": "considerationPrice", "rate": l.Factor}}
		v["total"] = obj{"rounding": obj{"step": "1", "mode": Up}, "min": fmt.Sprint(lo), "max": fmt.Sprint(hi)}
	case l.Fixed != nil:
		v["citation"] = obj{"text": fmt.Sprintf("migrated: fixed %d", *l.Fixed), "url": legacySource}
		v["inputs"] = obj{"amount": obj{"required": true}}
		v["components"] = []obj{{"id": "duty", "label": "Fixed amount", "kind": KindFixed, "amount": fmt.Sprint(*l.Fixed)}}
		v["declared"] = "equal"
	default:
		v["citation"] = obj{"text": fmt.Sprintf("migrated: range [%d, %d]", l.Min, l.Max), "url": legacySource}
		v["inputs"] = obj{"amount": obj{"required": true}}
		v["components"] = []obj{{"id": "duty", "label": "Amount declared by the caller", "kind": KindDeclared, "min": fmt.Sprint(l.Min), "max": fmt.Sprint(l.Max)}}
	}
	b, err := json.Marshal([]obj{v})
	if err != nil {
		return nil, fmt.Errorf("migrating a legacy rule: %w", err)
	}
	rules, problems := ParseRules(b)
	if problems != nil {
		return nil, fmt.Errorf("migrating a legacy rule: %v", problems)
	}
	return rules, nil
}
