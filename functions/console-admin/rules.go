package main

// An article's duty rules, as admins edit them in the console
// (duty-rules.md §11, §15): preview a quote from an edited rule version
// before saving, and save the article's duty_rules (a version edited,
// added or archived), over shared/catalogue (TryRule, EditRules).

import (
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/jsonobj"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// The rules' routes, under an article's.
const (
	rulesPath   = "/api/console/catalogue/articles/{documentId}/rules"
	previewPath = rulesPath + "/preview"
)

// ruleRoutes are the routes of an article's duty rules.
func (h *handler) ruleRoutes() []function.Path {
	return []function.Path{
		{Method: http.MethodPost, Pattern: previewPath, Serve: staffauth.AsAdmin(h.previewRule)},
		{Method: http.MethodPut, Pattern: rulesPath, Serve: staffauth.AsAdmin(h.saveRules)},
	}
}

// previewResponse is the body of a preview: {"data": <Quote>, "meta": {}},
// what GET /api/stamp-duty-quotes answers.
type previewResponse struct {
	Data stampduty.Quote `json:"data"`
	Meta struct{}        `json:"meta"`
}

// previewRule quotes the rule version of the body, as the admin edits it
// for the article the path names (not saved), for one paper: the body is
// {"rule": <the version's JSON object>, "inputs": {"<input>": <integer or
// enum value>, ...}, "instrumentDate": "YYYY-MM-DD"}, inputs and
// instrumentDate optional (today in India). Every problem at once, each
// at its path in the body: the version's under rule (["rule",
// "components", 2, "rate"]), the inputs' under inputs (["inputs",
// "marketValue"]), as the quote words them. Nothing is written.
func (h *handler) previewRule(r *http.Request, _ string) (any, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return nil, err
	}
	var (
		raw    []byte
		inputs []stampduty.Field
		date   = stampduty.Value{Kind: stampduty.Absent}
		bad    []stampduty.FieldError
	)
	for _, m := range members {
		switch m.Key {
		case "rule":
			if m.Value.Kind != jsonobj.Object {
				bad = append(bad, stampduty.FieldError{Path: "rule", Message: "rule must be the rule version's JSON object"})
				continue
			}
			raw = m.Value.Raw
		case "inputs":
			switch m.Value.Kind {
			case jsonobj.Null:
			case jsonobj.Object:
				ms, err := jsonobj.Members(m.Value.Raw, function.MaxDepth)
				if err != nil {
					return nil, function.InvalidJSON(err, "The body must be a JSON object")
				}
				inputs = stampjson.Fields(ms)
			default:
				bad = append(bad, stampduty.FieldError{Path: "inputs", Message: "inputs must be an object: each input of the rule by its name"})
			}
		case "instrumentDate":
			date = stampjson.Fields([]jsonobj.Member{m})[0].Value
		default:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of a preview: rule, inputs, instrumentDate"})
		}
	}
	if raw == nil && !hasError(bad, "rule") {
		bad = append(bad, stampduty.FieldError{Path: "rule", Message: "rule is a required field"})
	}
	if raw != nil {
		v, ruleErrs := stampduty.ReadRuleVersion("rule", raw)
		in, formErrs := stampduty.ReadInputs(inputs, date)
		if bad == nil && ruleErrs == nil {
			q, err := h.catalogue.TryRule(r.Context(), r.PathValue("documentId"), v, in, formErrs)
			return previewResponse{Data: q}, err
		}
		bad = append(append(bad, ruleErrs...), formErrs...)
	}
	return nil, stampduty.Invalid(bad)
}

// saveRules makes the body's duty_rules those of the article the path
// names, as the admin: {"version": <the article's version read>,
// "duty_rules": [<every version>, ...]}, one version edited, added or
// archived (left out). Checked whole first (duty-rules.md §11: 400 with
// every problem at its path, ["duty_rules", 1, "components", 2, "rate"],
// and nothing read or written); then as an edit: 409 with the article as
// it now is when it changed since version (or is retired), published at
// once, the change logged with duty_rules before and after.
func (h *handler) saveRules(r *http.Request, by string) (any, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return nil, err
	}
	version, raw, bad := int64(-1), []byte(nil), []stampduty.FieldError(nil)
	for _, m := range members {
		switch m.Key {
		case "version":
			n, ok := articleVersion(stampjson.Fields([]jsonobj.Member{m})[0].Value)
			if !ok {
				bad = append(bad, stampduty.FieldError{Path: "version", Message: msgVersion})
				continue
			}
			version = n
		case "duty_rules":
			if m.Value.Kind != jsonobj.Array {
				bad = append(bad, stampduty.FieldError{Path: "duty_rules", Message: "duty_rules must be an array of rule versions"})
				continue
			}
			raw = m.Value.Raw
		default:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of a rules' save: version, duty_rules"})
		}
	}
	if version < 0 && !hasError(bad, "version") {
		bad = append(bad, stampduty.FieldError{Path: "version", Message: "version is a required field"})
	}
	if raw == nil && !hasError(bad, "duty_rules") {
		bad = append(bad, stampduty.FieldError{Path: "duty_rules", Message: "duty_rules is a required field"})
	}
	if bad != nil {
		return nil, stampduty.Invalid(bad)
	}
	now, err := h.catalogue.EditRulesByDoc(r.Context(), by, r.PathValue("documentId"), version, raw)
	if stampduty.ErrorCode(err) == stampduty.ECONFLICT {
		return conflict(err, toArticle(now)), nil
	}
	return changed(now, err)
}

// hasError reports whether bad has an error of the field path.
func hasError(bad []stampduty.FieldError, path string) bool {
	for _, e := range bad {
		if e.Path == path {
			return true
		}
	}
	return false
}
