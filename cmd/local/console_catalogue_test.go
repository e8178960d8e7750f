package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localcognito"
)

// checkCatalogue drives the console's Catalogue (console.md, "Catalogue
// (admin)") on a desktop and a phone: an admin filters the articles, adds
// one, edits it (a bad amount is refused beside its field before anything
// is sent), reads its change log with their email, previews an import and
// applies it, and retires an article with a confirm. An operator sees no
// Catalogue in the navigation, and the API refuses their token (403).
// Every state is checked (axe, screenshot, no console error or CSP
// violation).
func checkCatalogue(t *testing.T, s *stack, b *browser.Browser) {
	admin, operator := s.Cognito.Staff[0], s.Cognito.Staff[1]
	for _, screen := range screens {
		t.Run("AdminKeepsTheCatalogue"+screen.name, func(t *testing.T) {
			shot := func(state string) string { return "catalogue-" + state }
			bond, imported := "Browser Bond "+screen.name, "Imported Bond "+screen.name
			p := atQueue(t, s, b, screen.vp, admin)
			p.Press(browser.Link("Catalogue"))
			p.Find(browser.Heading("Catalogue"))
			p.Find(browser.Link("Affidavit — Maharashtra"))
			p.Check(shot("list"))

			filter := p.Within(browser.Role("form", "Filter the articles"))
			filter.Fill(browser.Role("combobox", "State"), "Karnataka")
			filter.Fill(browser.TextBox("Purpose"), "affi")
			filter.Press(browser.Button("Filter"))
			p.Gone(browser.Link("Affidavit — Maharashtra"))
			p.Find(browser.Link("Affidavit — Karnataka"))
			p.Gone(browser.Link("Rent Agreement — Karnataka"))
			p.Check(shot("filtered"))
			filter.Fill(browser.TextBox("Purpose"), "")
			filter.Press(browser.Button("Filter"))
			p.Find(browser.Link("Rent Agreement — Karnataka"))

			add := p.Within(browser.Role("form", "Add an article"))
			add.Fill(browser.TextBox("Purpose name"), bond)
			add.Fill(browser.Role("combobox", "State"), "Karnataka")
			add.Fill(browser.TextBox("Min (₹)"), "10")
			add.Fill(browser.TextBox("Max (₹)"), "5")
			add.Press(browser.Button("Add article"))
			add.WaitText(browser.Role("alert", ""), "max must be greater than or equal to min")
			p.Check(shot("add-refused"))
			add.Fill(browser.TextBox("Max (₹)"), "500")
			add.Press(browser.Button("Add article"))
			p.Find(browser.Heading(bond + " — Karnataka"))
			p.WaitText(browser.Role("status", ""), "Added "+bond+" — Karnataka.")
			retireAfter(t, s, admin, p.URL())
			p.Check(shot("added"))

			edit := p.Within(browser.Role("form", "Edit the amounts"))
			edit.Fill(browser.TextBox("Fixed (₹, empty for none)"), "900")
			edit.Press(browser.Button("Save changes"))
			edit.WaitText(browser.Role("alert", ""), "fixed must be between min and max")
			p.Check(shot("edit-refused"))
			edit.Fill(browser.TextBox("Fixed (₹, empty for none)"), "")
			edit.Fill(browser.TextBox("Max (₹)"), "800")
			edit.Press(browser.Button("Save changes"))
			p.WaitText(browser.Role("status", ""), "Saved.")
			log := p.Text(browser.Role("table", "Change log, newest first"))
			for _, want := range []string{admin.Email, "edited", "max 500 → 800", "added"} {
				if !strings.Contains(log, want) {
					t.Errorf("the change log %q does not show %q", log, want)
				}
			}
			p.Check(shot("edited"))

			file := filepath.Join(t.TempDir(), "catalogue.json")
			data := fmt.Sprintf(`[
  {"purpose_name": %q, "state": "Karnataka", "min": 10, "max": 900, "fixed": null, "toFollowConsiderationPrice": false, "amountPercentConsideration": null},
  {"purpose_name": %q, "state": "Karnataka", "min": 0, "max": 100, "fixed": null, "toFollowConsiderationPrice": true, "amountPercentConsideration": 0.05}
]`, bond, imported)
			if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			p.Press(browser.Link("Back to the catalogue"))
			p.Find(browser.Heading("Catalogue"))
			imp := p.Within(browser.Role("form", "Import a catalogue file"))
			imp.Upload(browser.FileField("Catalogue file (JSON)"), file)
			imp.Press(browser.Button("Preview import"))
			p.Find(browser.Heading("Preview of the import"))
			preview := p.Text(browser.Role("table", "What the import would change"))
			for _, want := range []string{"change", bond, "max 800 → 900", "add", imported} {
				if !strings.Contains(preview, want) {
					t.Errorf("the preview %q does not show %q", preview, want)
				}
			}
			p.Gone(browser.Link(imported + " — Karnataka"))
			p.Check(shot("import-preview"))
			p.Press(browser.Button("Apply import"))
			p.Find(browser.Link(imported + " — Karnataka"))
			if got := p.Text(browser.Role("status", "")); !strings.HasPrefix(got, "Imported: 1 added, 1 changed, 0 retired") {
				t.Errorf("status %q, want the import's counts", got)
			}
			p.Check(shot("imported"))

			p.Press(browser.Link(imported + " — Karnataka"))
			p.Find(browser.Heading(imported + " — Karnataka"))
			p.Press(browser.Button("Retire article"))
			p.Find(browser.Button("Keep it"))
			p.Check(shot("retire-confirm"))
			p.Press(browser.Button("Yes, retire it"))
			p.WaitText(browser.Role("status", ""), "Retired "+imported+" — Karnataka.")
			p.Gone(browser.Button("Retire article"))
			if log := p.Text(browser.Role("table", "Change log, newest first")); !strings.Contains(log, "retired") || !strings.Contains(log, admin.Email) {
				t.Errorf("the change log %q does not show the retirement by %s", log, admin.Email)
			}
			p.Check(shot("retired"))
			for _, u := range p.Requests() {
				if strings.Contains(u, "@") {
					t.Errorf("a URL holds personal data: %s", u)
				}
			}
		})
	}
	t.Run("RefusalsSayWhy", func(t *testing.T) { checkCatalogueRefusals(t, s, b) })
	t.Run("DutyRules", func(t *testing.T) { checkRules(t, s, b) })
	t.Run("OperatorHasNoCatalogue", func(t *testing.T) {
		p := atQueue(t, s, b, browser.Phone, operator)
		p.Gone(browser.Link("Catalogue"))
		p.Check("catalogue-operator-nav")
		tokens, err := localcognito.SignIn(context.Background(), localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, operator.Email, operator.Password)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := send(t, s, tokens.ID, http.MethodGet, "/api/console/catalogue/articles", ""); got != http.StatusForbidden {
			t.Errorf("an operator's GET /api/console/catalogue/articles: %d, want 403", got)
		}
	})
}

// checkCatalogueRefusals: a catalogue file over 4 MiB is refused before it
// is sent; an invalid one is refused with the API's reason for each
// article; an edit from a version someone else has changed since says so
// and shows the article as it now is.
func checkCatalogueRefusals(t *testing.T, s *stack, b *browser.Browser) {
	admin := s.Cognito.Staff[0]
	p := atQueue(t, s, b, browser.Desktop, admin)
	p.Press(browser.Link("Catalogue"))
	p.Find(browser.Heading("Catalogue"))
	imp := p.Within(browser.Role("form", "Import a catalogue file"))
	dir := t.TempDir()
	big, invalid := filepath.Join(dir, "big.json"), filepath.Join(dir, "invalid.json")
	if err := os.WriteFile(big, []byte("["+strings.Repeat(" ", 4<<20)+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(invalid, []byte(`[{"purpose_name": "Bad Bond", "state": "Goa", "min": 5, "max": 1, "fixed": null, "toFollowConsiderationPrice": false, "amountPercentConsideration": null}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	imp.Upload(browser.FileField("Catalogue file (JSON)"), big)
	imp.Press(browser.Button("Preview import"))
	imp.WaitText(browser.Role("alert", ""), "The catalogue file is larger than 4 MiB")
	p.Check("catalogue-import-too-large") // nothing was sent: no failed request
	imp.Upload(browser.FileField("Catalogue file (JSON)"), invalid)
	imp.Press(browser.Button("Preview import"))
	imp.WaitText(browser.Role("alert", ""), "1 article is invalid · [0].max: max must be greater than or equal to min")
	checkRefused(t, p, "catalogue-import-invalid", "400 (Bad Request) ("+s.URL+"/api/console/catalogue/import/preview")

	// Another admin edits the article after this page read it.
	tokens, err := localcognito.SignIn(context.Background(), localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, admin.Email, admin.Password)
	if err != nil {
		t.Fatal(err)
	}
	console := func(method, path, body string) map[string]any {
		t.Helper()
		status, b := send(t, s, tokens.ID, method, path, body)
		var out struct{ Data map[string]any }
		if err := json.Unmarshal(b, &out); err != nil || status != http.StatusOK {
			t.Fatalf("%s %s: %d %v", method, path, status, err)
		}
		return out.Data
	}
	art := console(http.MethodPost, "/api/console/catalogue/articles", `{"purpose_name":"Stale Bond","state":"Goa","min":10,"max":500,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}`)
	doc := art["documentId"].(string)
	p = atQueue(t, s, b, browser.Desktop, admin) // a page whose only failed request will be the 409
	p.Open(s.URL + "/console#article/" + doc)
	p.Find(browser.Heading("Stale Bond — Goa"))
	console(http.MethodPut, "/api/console/catalogue/articles/"+doc, `{"version":1,"min":10,"max":600,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}`)
	edit := p.Within(browser.Role("form", "Edit the amounts"))
	edit.Fill(browser.TextBox("Max (₹)"), "700")
	edit.Press(browser.Button("Save changes"))
	p.WaitText(browser.Role("status", ""), `Someone else changed this article first: article "Stale Bond" in Goa was changed by someone else (version 2, not 1); read it again. It is shown as it is now.`)
	if got, want := edit.Value(browser.TextBox("Max (₹)")), "600"; got != want {
		t.Errorf("max shown after the conflict %q, want %q, the article as it now is", got, want)
	}
	checkRefused(t, p, "catalogue-edit-conflict", "409 (Conflict) ("+s.URL+"/api/console/catalogue/articles/")
}

// retireAfter retires, when t ends, the article whose page is at url
// (…#article/<documentId>), through the console's API as admin, so that
// what the browser test added leaves the public catalogue the other
// tests of the stack read (the README's examples count its articles).
func retireAfter(t *testing.T, s *stack, admin localcognito.Account, url string) {
	t.Helper()
	_, doc, ok := strings.Cut(url, "#article/")
	if !ok || doc == "" {
		t.Fatalf("the article's page is at %s: no #article/<documentId>", url)
	}
	t.Cleanup(func() {
		if status, body := send(t, s, idToken(t, s, admin), http.MethodPost, "/api/console/catalogue/articles/"+doc+"/retire", ""); status != http.StatusOK {
			t.Errorf("retiring %s after the test: %d %s", doc, status, body)
		}
	})
}
