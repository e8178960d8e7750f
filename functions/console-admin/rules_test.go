package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// leaseRule is a rule version of the article's own: 1% of the rent for
// the term, at least ₹100 (its effectiveFrom and rate as given).
func leaseRule(from, rate string) string {
	return fmt.Sprintf(`{"effectiveFrom": %s, "effectiveTo": null,
  "citation": {"text": "Karnataka Stamp Act Art. 30", "url": "https://example.in/ka/30"},
  "inputs": {"monthlyRent": {"required": true, "positive": true}, "termMonths": {"required": true, "min": "1", "max": "60"}},
  "bases": {"rent": {"mul": [{"input": "monthlyRent"}, {"input": "termMonths"}]}},
  "components": [{"id": "duty", "label": "1%% of the rent for the term", "kind": "percent", "base": "rent", "rate": %q}],
  "total": {"min": "100"}}`, from, rate)
}

func (c catalogueClient) tryRule(doc, body string) functest.Response {
	c.t.Helper()
	return c.do(http.MethodPost, "/api/console/catalogue/articles/"+doc+"/rules/preview", "", body)
}

func (c catalogueClient) saveRules(doc string, version int64, rules ...string) functest.Response {
	c.t.Helper()
	return c.do(http.MethodPut, "/api/console/catalogue/articles/"+doc+"/rules", "",
		`{"version":`+jsonInt(version)+`,"duty_rules":[`+strings.Join(rules, ",")+`]}`)
}

// TestRulesPreview: an admin previews an edited rule version of an
// article (not saved) with inputs: the quote's lines, or every problem at
// once at its path in the body (the version's under rule, the inputs'
// under inputs), with one Scan to find the article and nothing written.
func TestRulesPreview(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	c := asAdmin(t, s)
	rent := c.find("Rent Agreement", "Karnataka")
	t.Run("TheLinesOfTheQuote", func(t *testing.T) {
		s.Proxy.Take()
		got := functest.OK[previewResponse](t, c.tryRule(rent.DocumentID,
			`{"rule":`+leaseRule("null", "0.01")+`,"inputs":{"monthlyRent":25000,"termMonths":11,"partyCategory":null},"instrumentDate":"2025-09-01"}`)).Data
		if ops := s.Env.Operations(s.Proxy.Take()); ops != "Scan:ArticlesTable=1" {
			t.Errorf("DynamoDB calls of a preview %q, want one Scan", ops)
		}
		d := got.Duty
		if got.Amount == nil || *got.Amount != 2750 || got.Rule != stampduty.RuleSchedule || d == nil || d.InstrumentDate != "2025-09-01" {
			t.Fatalf("preview %+v; want a schedule's 2750 on 2025-09-01", got)
		}
		if l := d.Lines; len(l) != 1 || l[0].ID != "duty" || l[0].BaseAmount != "275000.00" || l[0].Rate != "0.01" || l[0].Amount != "2750.00" {
			t.Errorf("lines %+v; want 1%% of 275000.00", l)
		}
		if d.Rule.Article != rent.DocumentID || d.Rule.ArticleVersion != rent.Version || d.Rule.Citation == nil || d.Rule.Citation.URL != "https://example.in/ka/30" {
			t.Errorf("rule %+v; want the article at version %d and the edited version's citation", d.Rule, rent.Version)
		}
		if after := c.find("Rent Agreement", "Karnataka"); after.Version != rent.Version {
			t.Errorf("version %d after a preview; want %d", after.Version, rent.Version)
		}
	})
	for _, tc := range []struct {
		name, body string
		paths      []string
		reads      bool // the article was read: the problems are the rule's evaluation's
	}{
		{"ABadRate", `{"rule":` + leaseRule("null", "1.5") + `,"inputs":{"monthlyRent":"25000"}}`,
			[]string{"rule.components.0.rate", "inputs.monthlyRent"}, false},
		{"InputsTheRuleRefuses", `{"rule":` + leaseRule("null", "0.01") + `,"inputs":{"monthlyRent":0,"termMonths":61}}`,
			[]string{"inputs.monthlyRent", "inputs.termMonths"}, true},
		{"ADayOutsideTheVersion", `{"rule":` + leaseRule(`"2030-01-01"`, "0.01") + `,"inputs":{"monthlyRent":1,"termMonths":1},"instrumentDate":"2025-09-01"}`,
			[]string{"instrumentDate"}, true},
		{"NoRule", `{"inputs":{}}`, []string{"rule"}, false},
		{"ARuleThatIsNotAnObject", `{"rule":"[]","inputs":[],"colour":1}`, []string{"rule", "inputs", "colour"}, false},
		{"ABadDateAndAnUnknownInput", `{"rule":` + leaseRule("null", "0.01") + `,"inputs":{"colour":"red"},"instrumentDate":"01/09/2025"}`,
			[]string{"inputs.colour", "instrumentDate", "inputs.monthlyRent", "inputs.termMonths"}, true},
	} {
		t.Run("Refuses"+tc.name, func(t *testing.T) {
			s.Proxy.Take()
			e := status(t, c.tryRule(rent.DocumentID, tc.body), http.StatusBadRequest)
			if got := e.Paths(); !slices.Equal(got, tc.paths) {
				t.Errorf("paths %q, want %q (%s)", got, tc.paths, e.Error.Message)
			}
			ops := s.Env.Operations(s.Proxy.Take())
			if want := map[bool]string{true: "Scan:ArticlesTable=1", false: ""}[tc.reads]; ops != want {
				t.Errorf("DynamoDB calls %q, want %q", ops, want)
			}
		})
	}
	t.Run("TheRuleRefusingInputsIsNamed", func(t *testing.T) {
		e := status(t, c.tryRule(rent.DocumentID, `{"rule":`+leaseRule("null", "0.01")+`}`), http.StatusBadRequest)
		if r := e.Error.Details.DutyRule; r == nil || r.Article != rent.DocumentID || r.Citation == nil {
			t.Errorf("details.dutyRule %+v; want the edited version of the article", r)
		}
		if !strings.Contains(e.Error.Message, "monthlyRent is required by the duty rule of Rent Agreement in Karnataka in force on ") {
			t.Errorf("message %q; want the quote's words", e.Error.Message)
		}
	})
	t.Run("AnUnknownArticleIsNotFound", func(t *testing.T) {
		status(t, c.tryRule("zzzzzzzzzzzzzzzzzzzzzzzz", `{"rule":`+leaseRule("null", "0.01")+`,"inputs":{"monthlyRent":1,"termMonths":1}}`), http.StatusNotFound)
	})
}

// TestRulesSave: an admin saves an article's duty_rules (a new version
// that ends the migrated one, then one archived): checked whole before
// anything is read (400, every problem at ["duty_rules", i, …]), stored
// from the version read (409 with the article as it now is otherwise),
// logged with duty_rules before and after, and listed.
func TestRulesSave(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	c := asAdmin(t, s)
	rent := c.find("Rent Agreement", "Karnataka")
	if len(rent.Rules) != 1 || !rent.Rules[0].Legacy {
		t.Fatalf("the sample Rent Agreement's rules %d; want its migrated version", len(rent.Rules))
	}
	legacy := string(rent.Rules[0].JSON())
	ended := strings.Replace(legacy, `"effectiveTo":null`, `"effectiveTo":"2026-01-01"`, 1)
	for _, tc := range []struct {
		name, body string
		paths      []string
	}{
		{"ABadRateInTheSecondVersion", `{"version":` + jsonInt(rent.Version) + `,"duty_rules":[` + ended + `,` + leaseRule(`"2026-01-01"`, "5") + `]}`,
			[]string{"duty_rules.1.components.0.rate"}},
		{"OverlappingVersions", `{"version":` + jsonInt(rent.Version) + `,"duty_rules":[` + legacy + `,` + leaseRule(`"2026-01-01"`, "0.01") + `]}`,
			[]string{"duty_rules.1.effectiveFrom"}},
		{"NoVersion", `{"version":` + jsonInt(rent.Version) + `,"duty_rules":[]}`, []string{"duty_rules"}},
		{"NoVersionRead", `{"duty_rules":{}}`, []string{"duty_rules", "version"}},
		{"AnUnknownField", `{"version":"1","duty_rules":[],"min":5}`, []string{"version", "min"}},
	} {
		t.Run("Refuses"+tc.name, func(t *testing.T) {
			s.Proxy.Take()
			e := status(t, c.do(http.MethodPut, "/api/console/catalogue/articles/"+rent.DocumentID+"/rules", "", tc.body), http.StatusBadRequest)
			if got := e.Paths(); !slices.Equal(got, tc.paths) {
				t.Errorf("paths %q, want %q (%s)", got, tc.paths, e.Error.Message)
			}
			if got := s.Proxy.Take(); len(got) != 0 {
				t.Errorf("%d DynamoDB calls for rules that fail", len(got))
			}
		})
	}
	var saved article
	t.Run("ANewVersionIsStoredLoggedAndListed", func(t *testing.T) {
		got := functest.OK[articleResponse](t, c.saveRules(rent.DocumentID, rent.Version, ended, leaseRule(`"2026-01-01"`, "0.01")))
		saved = got.Data
		if !got.Meta.Published || saved.Version != rent.Version+1 || len(saved.Rules) != 2 || saved.Rules[1].Period.From != "2026-01-01" {
			t.Fatalf("saved %+v; want both versions at version %d, published", saved, rent.Version+1)
		}
		listed := c.find("Rent Agreement", "Karnataka")
		if len(listed.Rules) != 2 || listed.Rules[1].Hash() != saved.Rules[1].Hash() {
			t.Errorf("the list shows %d versions; want the two saved", len(listed.Rules))
		}
		change := c.log(rent.DocumentID).Data.Changes[0]
		if change.By != catalogueAdminEmail || change.Kind != stampduty.ArticleEdited {
			t.Errorf("newest change %+v; want edited by %s", change, catalogueAdminEmail)
		}
		var rules *stampduty.FieldChange
		for i := range change.Changes {
			if change.Changes[i].Field == "duty_rules" {
				rules = &change.Changes[i]
			}
		}
		if rules == nil || rules.Before != "null" || !strings.Contains(rules.After, `"effectiveFrom":"2026-01-01"`) {
			t.Errorf("changes %+v; want duty_rules null → the two versions", change.Changes)
		}
	})
	t.Run("AStaleVersionIsConflictWithTheArticleAsItIs", func(t *testing.T) {
		r := c.saveRules(rent.DocumentID, rent.Version, leaseRule("null", "0.01"))
		status(t, r, http.StatusConflict)
		var body struct{ Data article }
		if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
			t.Fatal(err)
		}
		if body.Data.Version != saved.Version || len(body.Data.Rules) != 2 {
			t.Errorf("409's data at version %d with %d versions; want the article as it is (%d, 2)", body.Data.Version, len(body.Data.Rules), saved.Version)
		}
	})
	t.Run("ArchivingAVersion", func(t *testing.T) {
		got := functest.OK[articleResponse](t, c.saveRules(rent.DocumentID, saved.Version, leaseRule(`"2026-01-01"`, "0.01"))).Data
		if len(got.Rules) != 1 || got.Version != saved.Version+1 {
			t.Errorf("after archiving: %d versions at version %d; want 1 at %d", len(got.Rules), got.Version, saved.Version+1)
		}
	})
	t.Run("AnUnknownArticleIsNotFound", func(t *testing.T) {
		status(t, c.saveRules("zzzzzzzzzzzzzzzzzzzzzzzz", 1, leaseRule("null", "0.01")), http.StatusNotFound)
	})
	s.CheckRoutes()
}

func init() {
	exercises["rules"] = func(t *testing.T, s *functest.Stack) {
		c := asAdmin(t, s)
		art := c.find("Indemnity Bond", "West Bengal")
		functest.OK[previewResponse](t, c.tryRule(art.DocumentID, `{"rule":`+leaseRule("null", "0.01")+`,"inputs":{"monthlyRent":1,"termMonths":1}}`))
		functest.OK[articleResponse](t, c.saveRules(art.DocumentID, art.Version, leaseRule("null", "0.01")))
	}
	catalogueRequests = append(catalogueRequests,
		struct{ method, path, query, body string }{http.MethodPost, "/api/console/catalogue/articles/zzzzzzzzzzzzzzzzzzzzzzzz/rules/preview", "", `{"rule":{}}`},
		struct{ method, path, query, body string }{http.MethodPut, "/api/console/catalogue/articles/zzzzzzzzzzzzzzzzzzzzzzzz/rules", "", `{"version":1,"duty_rules":[]}`})
}
