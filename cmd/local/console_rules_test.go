package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"stampduty/shared/duty"
	"stampduty/shared/testkit/browser"
)

// oneLine is rule JSON on one line, as a person may paste it.
func oneLine(rule string) string { return strings.Join(strings.Fields(rule), " ") }

// ruledArticle is an article as the console's list gives it: its version
// and its duty_rules, each version as a JSON object.
type ruledArticle struct {
	DocumentID string           `json:"documentId"`
	Version    int64            `json:"version"`
	Rules      []map[string]any `json:"duty_rules"`
}

// consoleArticle reads the article purpose in state through the console's
// list, as admin.
func consoleArticle(t *testing.T, s *stack, purpose, state string) ruledArticle {
	t.Helper()
	status, body := send(t, s, idToken(t, s, s.Cognito.Staff[0]), http.MethodGet,
		"/api/console/catalogue/articles?"+url.Values{"purpose": {purpose}, "state": {state}}.Encode(), "")
	var list struct{ Data []ruledArticle }
	if err := json.Unmarshal(body, &list); err != nil || status != http.StatusOK || len(list.Data) != 1 {
		t.Fatalf("listing %s in %s: %d %s", purpose, state, status, body)
	}
	return list.Data[0]
}

// checkRules drives an article's duty rules in the console (duty-rules.md
// §11, §15) on a desktop and a phone, with the keyboard alone: an admin
// adds a version to a legacy article (Space on Add a version), tabs from
// Duty rules through a field per input the version declares, labelled in
// words, to Preview quote; a bad rate is refused beside Duty rules with
// its path, by the preview and by Save rules, which saves nothing; the
// corrected version's inputs are refused beside each (a required one
// left out, one not in whole rupees), then it previews the quote's lines
// and saves, the list then
// showing it (and the migrated version ended on its first day); it is
// edited again, and the migrated version archived. Every state: axe, no
// console error but the refusals', no sideways scroll.
func checkRules(t *testing.T, s *stack, b *browser.Browser) {
	admin := s.Cognito.Staff[0]
	today := duty.TodayInIndia(time.Now())
	rule := func(rate, women string) string {
		r := strings.Replace(saleRule, `"effectiveFrom": null`, `"effectiveFrom": "`+today+`"`, 1)
		r = strings.Replace(r, `"rate": "0.05"`, `"rate": "`+rate+`"`, 1)
		return oneLine(strings.Replace(r, `"rate": "-0.01"`, `"rate": "`+women+`"`, 1))
	}
	for _, screen := range screens {
		t.Run("EditPreviewSave"+screen.name, func(t *testing.T) {
			purpose := "Browser Conveyance " + screen.name
			doc := addLegacyArticle(t, s, purpose, "Maharashtra")
			shot := func(state string) string { return "rules-" + state }
			p := atQueue(t, s, b, screen.vp, admin)
			p.Open(s.URL + "/console#article/" + doc)
			p.Find(browser.Heading(purpose + " — Maharashtra"))
			versions := browser.Role("table", "Rule versions, by the day they start")
			if got, want := p.Text(versions), "Version 1 (migrated)\talways\tmigrated: 0.05 of consideration, [100, 2500000] (shared/spec/decisions.md (Amounts))"; !strings.Contains(got, want) {
				t.Errorf("the versions read\n%s\nwant %q", got, want)
			}
			p.Gone(browser.Link("migrated: 0.05 of consideration, [100, 2500000]"))
			p.Check(shot("list"))

			// Add a version, with Space: the editor opens on the newest
			// version's copy from today, the focus in Duty rules.
			p.Focus(browser.Button("Add a version"))
			p.Key(" ")
			jsonField := browser.TextBox("Duty rules")
			p.Find(jsonField)
			if !p.Focused(jsonField) {
				t.Error("after Add a version, the focus is not in Duty rules")
			}
			if got := p.Value(jsonField); !strings.Contains(got, `"effectiveFrom": "`+today+`"`) {
				t.Errorf("a new version starts %q; want from today, %s", got, today)
			}

			// A bad rate, previewed with the keyboard: Tab from Duty rules
			// goes through each input's field, in words, to Preview quote.
			p.Fill(jsonField, rule("5", "-0.01"))
			p.Fill(browser.TextBox("Consideration price"), "8000000")
			p.Fill(browser.TextBox("Market value"), "9000000")
			p.Choose(browser.Role("combobox", "Party category"), "female")
			if got := p.Value(browser.TextBox("Instrument date")); got != today {
				t.Errorf("Instrument date %q, want today, %s (the version starts today)", got, today)
			}
			p.Focus(jsonField)
			p.TabTo(browser.TextBox("Consideration price"))
			p.TabTo(browser.TextBox("Market value"))
			p.TabTo(browser.Role("combobox", "Party category"))
			p.TabTo(browser.TextBox("Instrument date"))
			p.TabTo(browser.Button("Preview quote"))
			p.Key(kb.Enter)
			const badRate = `components[0].rate: rate must be a fraction from -1 to 1 with at most 18 decimals, such as "0.05" for 5%`
			p.WaitText(browser.Role("alert", ""), badRate)
			if !p.Focused(jsonField) {
				t.Error("after the refusal, the focus is not in Duty rules, beside which it is said")
			}
			// The page's console has the refusals from here on: they are
			// the only errors it may have.
			refusals := "400 (Bad Request) (" + s.URL + "/api/console/catalogue/articles/" + doc + "/rules"
			checkRefused(t, p, shot("preview-refused"), refusals)

			// Saved as it is: refused beside the field, nothing saved.
			before := consoleArticle(t, s, purpose, "Maharashtra")
			p.Press(browser.Button("Save rules"))
			p.WaitText(browser.Role("alert", ""), badRate)
			if after := consoleArticle(t, s, purpose, "Maharashtra"); after.Version != before.Version || len(after.Rules) != 1 {
				t.Errorf("a refused save changed the article: version %d → %d, %d versions", before.Version, after.Version, len(after.Rules))
			}
			checkRefused(t, p, shot("save-refused"), refusals)

			// Corrected, the version is tried: an input's problem is said
			// beside that input, the API's (a required input left out)
			// and the page's own (not whole rupees, nothing sent).
			p.Fill(jsonField, rule("0.05", "-0.01"))
			p.Fill(browser.TextBox("Market value"), "")
			p.Press(browser.Button("Preview quote"))
			p.WaitText(browser.Role("alert", ""), "marketValue is required by the duty rule of "+purpose+" in Maharashtra in force on "+today)
			if !p.Focused(browser.TextBox("Market value")) {
				t.Error("after the refusal, the focus is not in Market value, beside which it is said")
			}
			p.Fill(browser.TextBox("Market value"), "90000.50")
			p.Press(browser.Button("Preview quote"))
			p.WaitText(browser.Role("alert", ""), "marketValue must be a whole number of rupees, at most 15 digits")
			checkRefused(t, p, shot("input-refused"), refusals)
			p.Fill(browser.TextBox("Market value"), "9000000")

			// The quote's lines.
			p.Press(browser.Button("Preview quote"))
			preview := browser.Role("table", "Preview quote: duty of one paper")
			p.Find(preview)
			got := dutyText(p.Text(preview))
			for _, want := range []string{"Stamp duty 5% of value\t₹90,00,000.00 (value)\t0.05 (5%)\t₹4,50,000.00",
				"Women purchasers' remission 1%\t₹90,00,000.00 (value)\t-0.01 (−1%)\t−₹90,000.00", "Total\t\t\t₹3,60,000.00"} {
				if !strings.Contains(got, want) {
					t.Errorf("the preview reads\n%s\nwant a row %q", got, want)
				}
			}
			p.WaitText(browser.Role("status", ""), "Preview quote: ₹3,60,000.00 for one paper on "+today+".")
			checkRefused(t, p, shot("preview"), refusals)

			// Saved: the list shows the new version, the migrated one ended.
			p.Press(browser.Button("Save rules"))
			p.WaitText(browser.Role("status", ""), "Saved the duty rules. Version 1 now ends on "+today+".")
			got = p.Text(versions)
			for _, want := range []string{"Version 1 (migrated)\tuntil " + today + " (not included)", "Version 2\tfrom " + today + "\tArt. 25(b); women's 1% remission"} {
				if !strings.Contains(got, want) {
					t.Errorf("after the save the versions read\n%s\nwant %q", got, want)
				}
			}
			saved := consoleArticle(t, s, purpose, "Maharashtra")
			if len(saved.Rules) != 2 || saved.Rules[1]["effectiveFrom"] != today || saved.Rules[0]["effectiveTo"] != today || saved.Version != before.Version+1 {
				t.Errorf("the list gives version %d with %v; want the new version from %s after the migrated one", saved.Version, saved.Rules, today)
			}
			p.Gone(jsonField)
			checkRefused(t, p, shot("saved"), refusals)

			// Edited again, from the list.
			p.Press(browser.Button("Edit version 2"))
			if got := p.Value(jsonField); !strings.Contains(got, `"rate": "-0.01"`) || !p.Focused(jsonField) {
				t.Errorf("Edit version 2 opens %q (focused %v); want version 2's JSON, focused", got, p.Focused(jsonField))
			}
			p.Fill(jsonField, rule("0.05", "-0.02"))
			p.Press(browser.Button("Save rules"))
			p.WaitText(browser.Role("status", ""), "Saved the duty rules.")
			if r := consoleArticle(t, s, purpose, "Maharashtra").Rules; len(r) != 2 || !strings.Contains(fmt.Sprint(r[1]["components"]), "rate:-0.02") {
				t.Errorf("after editing version 2 the list gives %v; want its remission at -0.02", r)
			}

			// The migrated version archived, after a confirmation.
			p.Press(browser.Button("Archive version 1"))
			p.Find(browser.Button("Keep it"))
			if !p.Focused(browser.Button("Keep it")) {
				t.Error("the archive's question does not put the focus on Keep it")
			}
			checkRefused(t, p, shot("archive-confirm"), refusals)
			p.Press(browser.Button("Yes, archive it"))
			p.WaitText(browser.Role("status", ""), "Archived version 1: the change log keeps it.")
			p.Gone(browser.Button("Archive version 1"))
			if r := consoleArticle(t, s, purpose, "Maharashtra").Rules; len(r) != 1 || r[0]["effectiveFrom"] != today {
				t.Errorf("after archiving the list gives %v; want the version from %s alone", r, today)
			}
			if log := p.Text(browser.Role("table", "Change log, newest first")); strings.Count(log, "duty_rules") < 3 || !strings.Contains(log, admin.Email) {
				t.Errorf("the change log %q does not show the three saves of duty_rules by %s", log, admin.Email)
			}
			checkRefused(t, p, shot("archived"), refusals)
		})
	}
	t.Run("ConflictKeepsTheEdit", func(t *testing.T) { checkRulesConflict(t, s, b, rule) })
}

// addLegacyArticle adds a legacy article of purpose in state (a factor of
// the consideration price), through the console's API as admin, retired
// when t ends, and returns its documentId.
func addLegacyArticle(t *testing.T, s *stack, purpose, state string) string {
	t.Helper()
	admin := s.Cognito.Staff[0]
	status, body := send(t, s, idToken(t, s, admin), http.MethodPost, "/api/console/catalogue/articles",
		fmt.Sprintf(`{"purpose_name": %q, "state": %q, "min": 100, "max": 2500000, "fixed": null, "toFollowConsiderationPrice": true, "amountPercentConsideration": 0.05}`, purpose, state))
	var added struct {
		Data struct {
			DocumentID string `json:"documentId"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &added); err != nil || status != http.StatusOK {
		t.Fatalf("adding %s in %s: %d %s", purpose, state, status, body)
	}
	retireAfter(t, s, admin, s.URL+"/console#article/"+added.Data.DocumentID)
	return added.Data.DocumentID
}

// checkRulesConflict: when another admin saved the article's rules after
// the page read them, Save rules says so (409), shows the versions as
// they now are and keeps what was typed in Duty rules.
func checkRulesConflict(t *testing.T, s *stack, b *browser.Browser, rule func(rate, women string) string) {
	admin := s.Cognito.Staff[0]
	doc := addRuledArticle(t, s, "Browser Stale Conveyance", "Maharashtra", saleRule)
	p := atQueue(t, s, b, browser.Desktop, admin)
	p.Open(s.URL + "/console#article/" + doc)
	p.Find(browser.Heading("Browser Stale Conveyance — Maharashtra"))
	p.Press(browser.Button("Edit version 1"))
	mine := strings.Replace(oneLine(saleRule), `"rate": "0.05"`, `"rate": "0.06"`, 1)
	p.Fill(browser.TextBox("Duty rules"), mine)
	if status, body := send(t, s, idToken(t, s, admin), http.MethodPut, "/api/console/catalogue/articles/"+doc+"/rules",
		`{"version":1,"duty_rules":[`+strings.Replace(saleRule, `"rate": "0.05"`, `"rate": "0.04"`, 1)+`]}`); status != http.StatusOK {
		t.Fatalf("the other admin's save: %d %s", status, body)
	}
	p.Press(browser.Button("Save rules"))
	p.WaitText(browser.Role("status", ""), `Someone else changed this article first: article "Browser Stale Conveyance" in Maharashtra was changed by someone else (version 2, not 1); read it again. Its versions are shown as they are now; your edit is kept: save again to replace them.`)
	if got := p.Value(browser.TextBox("Duty rules")); got != mine {
		t.Errorf("Duty rules after the conflict %q; want what was typed, %q", got, mine)
	}
	checkRefused(t, p, "rules-conflict", "409 (Conflict) ("+s.URL+"/api/console/catalogue/articles/")
	// Saved again, from the version now read: the admin's edit wins.
	p.Press(browser.Button("Save rules"))
	p.WaitText(browser.Role("status", ""), "Saved the duty rules.")
	if r := consoleArticle(t, s, "Browser Stale Conveyance", "Maharashtra"); r.Version != 3 || !strings.Contains(fmt.Sprint(r.Rules[0]["components"]), "rate:0.06") {
		t.Errorf("after saving again: version %d, %v; want version 3 at 0.06", r.Version, r.Rules)
	}
}
