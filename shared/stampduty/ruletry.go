package stampduty

// An admin's preview of a rule version being edited (duty-rules.md §11,
// §15: "The console previews a quote from the edited version before
// saving"): the version read with every problem at its path, the preview's
// inputs read as a create reads them, and the quote the version gives,
// exactly as GET /api/stamp-duty-quotes would answer were it saved.

import (
	"fmt"
	"slices"

	"stampduty/shared/duty"
)

// ReadRuleVersion reads one rule version as an admin edits it (its JSON
// object) and checks it as a save would, but for what depends on the
// article's other versions (their periods, the size of all together):
// every problem of §2–§5 and §11 (the enum combinations and the probe
// included) at once, each at its path under first ("rule": ["rule",
// "components", 2, "rate"]). The version is nil when there is a problem.
func ReadRuleVersion(first string, raw []byte) (*duty.Version, []FieldError) {
	v, problems := duty.ParseVersion(raw)
	if problems == nil {
		// Check names a version by its place among the article's: this
		// one is alone.
		for _, p := range duty.Check(duty.Rules{v}) {
			problems = append(problems, duty.Problem{Path: p.Path[1:], Message: p.Message})
		}
	}
	if problems != nil {
		return nil, RuleErrors(first, problems)
	}
	return v, nil
}

// previewInputs is the name of the member of a preview's body that holds
// its inputs.
const previewInputs = "inputs"

// ReadInputs reads the inputs of a preview: fields are the members of its
// inputs object, each an input of duty-rules.md §3 in the form a create
// takes (an integer, or an enum value's string; null is not sent), and
// date its instrumentDate (absent or null: today). Each value refused is a
// FieldError at its path in the body (["inputs", name], or
// ["instrumentDate"]) and is marked Malformed in the request, so that the
// rule's evaluation reports the others with it.
func ReadInputs(fields []Field, date Value) (duty.Request, []FieldError) {
	in := duty.Request{Numbers: map[string]int64{}, Enums: map[string]string{}, Malformed: map[string]bool{}}
	var errs []FieldError
	fail := func(name, msg string) {
		errs = append(errs, FieldError{Path: previewInputs + "." + name, Where: []any{previewInputs, name}, Message: name + msg})
		in.Malformed[name] = true
	}
	seen := map[string]bool{}
	for _, f := range fields {
		switch {
		case seen[f.Name]:
			fail(f.Name, msgDuplicateField)
		case !duty.IsNumericInput(f.Name) && !duty.IsEnumInput(f.Name):
			fail(f.Name, " is not an input of duty rules")
		case f.Value.Kind == Null:
		default:
			if msg := inputValue(f.Name, f.Value, &in); msg != "" {
				fail(f.Name, msg)
			}
		}
		seen[f.Name] = true
	}
	switch date.Kind {
	case Absent, Null:
	default:
		if _, err := duty.ParseDate(date.Text); date.Kind != String || err != nil {
			errs = append(errs, FieldError{Path: "instrumentDate", Message: "instrumentDate must be a date (YYYY-MM-DD)"})
			in.Malformed["instrumentDate"] = true
			break
		}
		in.Date = date.Text
	}
	return in, errs
}

// QuoteVersion quotes v, a rule version of a that an admin is editing
// (read by ReadRuleVersion, not saved), for one paper with the inputs in,
// on in.Date (today when none): what GET /api/stamp-duty-quotes would
// answer that day were v a's version in force, the same lines and the
// same refusals, its rule naming a's documentId and catalogue version and
// v's hash. formErrs are the inputs whose form ReadInputs refused: they
// are reported with the rule's own problems, every one at once, each at
// its path in the preview's body (["inputs", name]). A date outside v's
// period is an error of instrumentDate: the preview is of v alone.
func (a Article) QuoteVersion(v *duty.Version, in duty.Request, formErrs []FieldError, today string) (Quote, error) {
	date := in.Date
	if date == "" {
		date = today
	}
	if !v.Period.In(date) && !in.Malformed["instrumentDate"] {
		msg := fmt.Sprintf("instrumentDate %s is outside this version's period (%s): preview it on a day it is in force", date, PeriodText(v.Period))
		return Quote{}, Invalid(append(slices.Clone(formErrs), FieldError{Path: "instrumentDate", Message: msg}))
	}
	a.Rules = duty.Rules{v}
	req := QuoteRequest{Purpose: a.PurposeName, State: a.State, Quantity: 1, Inputs: in, InputErrors: formErrs}
	if n, ok := in.Numbers["amount"]; ok {
		req.Amount = &n
	}
	req.ConsiderationPrice = in.Numbers["considerationPrice"]
	q, err := a.Quote(req, today)
	if e := asError(err); e != nil && e.Code == EINVALID {
		for i, f := range e.Fields {
			if f.Where == nil && (duty.IsNumericInput(f.Path) || duty.IsEnumInput(f.Path)) {
				e.Fields[i].Path, e.Fields[i].Where = previewInputs+"."+f.Path, []any{previewInputs, f.Path}
			}
		}
	}
	return q, err
}

// PeriodText says when a version is in force, for a person: "from
// 2021-04-01 until 2022-04-01 (not included)", "until 2022-04-01 (not
// included)" (since before the catalogue knew), "from 2022-04-01" (open),
// "always".
func PeriodText(p duty.Period) string {
	switch {
	case p.From == "" && p.To == "":
		return "always"
	case p.From == "":
		return "until " + p.To + " (not included)"
	case p.To == "":
		return "from " + p.From
	}
	return "from " + p.From + " until " + p.To + " (not included)"
}
