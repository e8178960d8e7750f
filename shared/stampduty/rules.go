package stampduty

import (
	"errors"
	"fmt"
	"math/big"
	"slices"

	"stampduty/shared/duty"
)

// Legacy returns the article's legacy amount rule (decisions.md, Amounts),
// as §9 of duty-rules.md migrates it.
func (a Article) Legacy() duty.Legacy {
	l := duty.Legacy{Min: a.Min, Max: a.Max, Fixed: a.Fixed, Follows: a.FollowsConsideration}
	if a.Factor != nil {
		l.Factor = a.Factor.String()
	}
	return l
}

// DutyRules returns the article's rules: Rules, or, for an article made
// without them (a test's, an old item's), the version §9 migrates its
// legacy fields to.
func (a Article) DutyRules() (duty.Rules, error) {
	if a.Rules != nil {
		return a.Rules, nil
	}
	rules, err := duty.Migrate(a.Legacy())
	if err != nil {
		return nil, a.broken(err.Error())
	}
	return rules, nil
}

// Schedule reports whether the article's rules are not only the legacy
// rule (§9): its legacy fields are then a projection of them.
func (a Article) Schedule() bool { return a.Rules != nil && !a.Rules.Legacy() }

// WithRules returns a with its rules set: migrated from its legacy fields
// when it has none (§1: an article given without duty_rules is a legacy
// article), its legacy fields projected for date when its rules are not
// legacy.
func (a Article) WithRules(date string) (Article, error) {
	if a.Rules == nil {
		rules, err := a.DutyRules()
		if err != nil {
			return a, err
		}
		a.Rules = rules
		return a, nil
	}
	return a.Projected(date), nil
}

// Projected returns a with the legacy fields of an article whose rules are
// not legacy computed for date (§9): toFollowConsiderationPrice when any
// version reads considerationPrice; amountPercentConsideration null; fixed
// the amount when the version in force is a single unconditional fixed
// component of whole rupees; min and max that version's total bounds, else
// 0 and MaxAmount. A legacy article is returned as it is.
func (a Article) Projected(date string) Article {
	if !a.Schedule() {
		return a
	}
	a.Factor, a.Fixed, a.Min, a.Max, a.FollowsConsideration = nil, nil, 0, MaxAmount, false
	for _, v := range a.Rules {
		for _, in := range v.Inputs {
			if in.Name == "considerationPrice" {
				a.FollowsConsideration = true
			}
		}
	}
	v, ok := a.Rules.InForce(date)
	if !ok {
		return a
	}
	if c := v.Components; len(c) == 1 && c[0].Kind == duty.KindFixed && len(c[0].When) == 0 && c[0].Amount.IsInt() {
		n := c[0].Amount.Num().Int64()
		a.Fixed = &n
	}
	rupees := func(r *big.Rat, or int64) int64 {
		if r == nil || !r.IsInt() || !r.Num().IsInt64() {
			return or
		}
		return min(r.Num().Int64(), MaxAmount)
	}
	a.Min, a.Max = rupees(v.Total.Min, 0), rupees(v.Total.Max, MaxAmount)
	return a
}

// readRules reads an article's duty_rules as a catalogue file or a
// console edit gives them, checked whole (§11): the errors' paths start
// at duty_rules.
func readRules(v Value) (duty.Rules, []FieldError) {
	switch v.Kind {
	case Absent, Null:
		return nil, nil
	case Other:
	default:
		return nil, []FieldError{{Path: "duty_rules", Message: "duty_rules must be an array of rule versions"}}
	}
	rules, problems := duty.ValidateRules(v.Raw)
	return rules, RuleErrors("duty_rules", problems)
}

// RuleErrors returns the problems of a rule as field errors under the
// given first element of their paths (duty_rules, or nothing for one
// version), each message naming where it is.
func RuleErrors(first string, problems []duty.Problem) []FieldError {
	var errs []FieldError
	for _, p := range problems {
		where := p.Path
		if first != "" {
			where = append([]any{first}, p.Path...)
		}
		name := duty.PathString(where)
		errs = append(errs, FieldError{Path: name, Where: where, Message: p.Message})
	}
	return errs
}

// ruleBroken is the EINTERNAL error of a rule that cannot be applied
// (§6 step 7): logged with the article, never shown.
func (a Article) ruleBroken(err error) *Error {
	return Internal(fmt.Errorf("article %d (%q, %q): %w", a.ID, a.PurposeName, a.State, err))
}

// evaluate prices one paper of a by rules (duty-rules.md §6): the duty,
// its rule named with the article. formErrs are the inputs whose form the
// caller refused: with the rule's own problems they make one EINVALID
// error naming every failing input, and the rule (details.dutyRule). A
// rule broken at run time is EINTERNAL, logged with the article.
func (a Article) evaluate(rules duty.Rules, in duty.Request, formErrs []FieldError) (*duty.Duty, error) {
	d, err := rules.Evaluate(in)
	var ie *duty.InputError
	var broken *duty.BrokenError
	switch {
	case errors.As(err, &ie):
		errs := slices.Clone(formErrs)
		for _, p := range ie.Problems {
			name := fmt.Sprint(p.Path[0])
			errs = append(errs, FieldError{Path: name, Message: p.Message})
		}
		e := Invalid(errs)
		if len(errs) == 1 && len(formErrs) == 0 && ie.Version != nil && ie.Version.Legacy {
			// A legacy rule keeps the contract's message word for word (§9).
			e.Message = errs[0].Message
		}
		if ie.Version != nil {
			ref := a.ruleRef(ie.Version)
			e.DutyRule = &ref
		}
		return nil, e
	case errors.As(err, &broken):
		return nil, a.ruleBroken(err)
	case err != nil:
		return nil, a.ruleBroken(err)
	case len(formErrs) > 0:
		e := Invalid(formErrs)
		if v, ok := rules.InForce(in.Date); ok {
			ref := a.ruleRef(v)
			e.DutyRule = &ref
		}
		return nil, e
	}
	d.Rule = a.ruleRef(mustInForce(rules, in.Date))
	return d, nil
}

// ruleRef is the reference of v, one of a's versions (§8).
func (a Article) ruleRef(v *duty.Version) duty.RuleRef {
	ref := v.Ref()
	ref.Article, ref.ArticleVersion = a.DocumentID, a.CatalogueVersion
	return ref
}

// mustInForce is the version in force on date, which an evaluation that
// succeeded used.
func mustInForce(rules duty.Rules, date string) *duty.Version {
	v, _ := rules.InForce(date)
	return v
}

// Price prices one paper of an order for a under req (duty-rules.md §8),
// on today (the instrument date of every order, in India: §7): the duty
// of the rule version in force, computed exactly as a quote would, with
// the contract's messages for a legacy rule. An instrumentDate sent must
// be today; a dutyRule sent must be the hash of the version in force
// (else ECONFLICT, both hashes in full); an amount sent for a rule of the
// article's own must equal its total.
func (a Article) Price(req OrderRequest, today string) (*duty.Duty, error) {
	in := req.Inputs
	in.Purpose, in.State = a.PurposeName, a.State
	formErrs := req.InputErrors
	if in.Date != "" && in.Date != today {
		msg := fmt.Sprintf("instrumentDate must be today's date in India (%s) for an order", today)
		formErrs = append(slices.Clone(formErrs), FieldError{Path: "instrumentDate", Message: msg})
	}
	in.Date = today
	rules, err := a.DutyRules()
	if err != nil {
		return nil, err
	}
	v, ok := rules.InForce(today)
	if ok && req.DutyRule != "" && req.DutyRule != v.Hash() {
		return nil, Errorf(ECONFLICT, "The duty rule for this purpose changed since the quote (%s is now %s); quote again.", req.DutyRule, v.Hash())
	}
	d, err := a.evaluate(rules, in, formErrs)
	if err != nil {
		return nil, err
	}
	if !v.Legacy && req.AmountSent && req.Amount != d.Amount {
		msg := fmt.Sprintf("The duty for the purpose is: %d, while the amount passed is equal to: %d", d.Amount, req.Amount)
		e := &Error{Code: EINVALID, Message: msg, Fields: []FieldError{{Path: "amount", Message: msg}}}
		ref := a.ruleRef(v)
		e.DutyRule = &ref
		return nil, e
	}
	return d, nil
}
