package catalogue

// An article's duty rules as the console edits them (duty-rules.md §11,
// §15): a preview of one edited version, and the save of all of them, the
// article named by its documentId.

import (
	"context"
	"encoding/json"

	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
)

// TryRule quotes v, a version of the article whose documentId is doc as
// an admin edits it (stampduty.ReadRuleVersion; nothing is saved), with
// the inputs in, as GET /api/stamp-duty-quotes would answer were v saved
// (stampduty.Article.QuoteVersion): formErrs are the inputs whose form was
// refused, reported with the rule's own problems. One Scan of the
// articles table finds the article (EntryByDoc); a retired one can be
// tried too.
func (a *Admin) TryRule(ctx context.Context, doc string, v *duty.Version, in duty.Request, formErrs []stampduty.FieldError) (stampduty.Quote, error) {
	e, err := a.Articles.EntryByDoc(ctx, doc)
	if err != nil {
		return stampduty.Quote{}, err
	}
	art := e.Article
	art.CatalogueVersion = e.Version
	return art.QuoteVersion(v, in, formErrs, duty.TodayInIndia(a.Now()))
}

// EditRulesByDoc makes rules, the JSON array of an article's rule versions,
// the duty_rules of the article whose documentId is doc, as by, from
// version (the article's version the editor read): one version edited,
// added or archived (left out: the change log keeps it), as `stampctl
// articles rules` does. The rules are checked whole first (§11,
// duty.ValidateRules), every problem at once at its path under duty_rules
// (["duty_rules", 1, "components", 2, "rate"]), and nothing is read or
// written when one fails. The article then has rules of its own: its
// legacy fields become their projection (§9). As Edit: a conflict when the
// article changed since version or is retired, nothing written when
// nothing changes, the catalogue published at once.
//
// Only the migration writes a legacy version (§9): a legacy version given
// must be one of the article's own (its effectiveTo may change, to end it
// on the day a new version starts), and rules that are all legacy must be
// the article's as they are: a legacy article's one version follows from
// its amounts, which Edit changes.
func (a *Admin) EditRulesByDoc(ctx context.Context, by, doc string, version int64, rules []byte) (stampduty.CatalogueEntry, error) {
	if err := checkActor(by); err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	parsed, problems := duty.ValidateRules(rules)
	if problems != nil {
		return stampduty.CatalogueEntry{}, stampduty.Invalid(stampduty.RuleErrors("duty_rules", problems))
	}
	if len(parsed) == 0 {
		return stampduty.CatalogueEntry{}, stampduty.Invalid([]stampduty.FieldError{{Path: "duty_rules",
			Message: "duty_rules must hold at least one version: retire the article to stop new orders and quotes"}})
	}
	old, err := a.Articles.EntryByDoc(ctx, doc)
	if err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	current, err := old.DutyRules()
	if err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	if errs := checkLegacy(parsed, current); errs != nil {
		return stampduty.CatalogueEntry{}, stampduty.Invalid(errs)
	}
	art := old.Article
	if !parsed.Legacy() {
		art.Rules = parsed
	}
	return a.Edit(ctx, by, version, art)
}

// checkLegacy returns the problems of the legacy versions of rules, an
// edit of current (EditRules): each must be one of current's legacy
// versions but for its effectiveTo, and rules all legacy must be current.
func checkLegacy(rules, current duty.Rules) []stampduty.FieldError {
	mine := map[string]bool{}
	for _, v := range current {
		if v.Legacy {
			mine[legacyKey(v)] = true
		}
	}
	var errs []stampduty.FieldError
	for i, v := range rules {
		if v.Legacy && !mine[legacyKey(v)] {
			where := []any{"duty_rules", i, "legacy"}
			errs = append(errs, stampduty.FieldError{Path: duty.PathString(where), Where: where,
				Message: "legacy is set only by the migration of the article's amounts (duty-rules.md §9): remove it to make this version the article's own, with a citation of the law"})
		}
	}
	if errs == nil && rules.Legacy() && !sameRules(rules, current) {
		errs = append(errs, stampduty.FieldError{Path: "duty_rules",
			Message: "duty_rules of legacy versions only are the article's amounts: edit the amounts, or add a version of the article's own"})
	}
	return errs
}

// legacyKey is the identity of a legacy version but for its effectiveTo,
// which an admin sets to end it.
func legacyKey(v *duty.Version) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v.JSON(), &m); err != nil {
		return v.Hash() // never: a version's JSON is an object
	}
	delete(m, "effectiveTo")
	b, err := json.Marshal(m)
	if err != nil {
		return v.Hash()
	}
	h, err := duty.Hash(b)
	if err != nil {
		return v.Hash()
	}
	return h
}

// sameRules reports whether x and y are the same versions, in order.
func sameRules(x, y duty.Rules) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Hash() != y[i].Hash() {
			return false
		}
	}
	return true
}
