package main

import (
	"context"
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
	for _, screen := range []struct {
		name string
		vp   browser.Viewport
	}{{"Desktop", browser.Desktop}, {"Phone", browser.Phone}} {
		t.Run("AdminKeepsTheCatalogue"+screen.name, func(t *testing.T) {
			shot := func(state string) string { return "catalogue-" + state }
			bond, imported := "Browser Bond "+screen.name, "Imported Bond "+screen.name
			p := b.NewPage(t, screen.vp)
			signIn(p, s.URL, admin.Email, admin.Password)
			p.Find(browser.Heading("Queue"))
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
	t.Run("OperatorHasNoCatalogue", func(t *testing.T) {
		p := b.NewPage(t, browser.Phone)
		signIn(p, s.URL, operator.Email, operator.Password)
		p.Find(browser.Heading("Queue"))
		p.Gone(browser.Link("Catalogue"))
		p.Check("catalogue-operator-nav")
		tokens, err := localcognito.SignIn(context.Background(), localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, operator.Email, operator.Password)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/console/catalogue/articles", nil)
		req.Header.Set("Authorization", "Bearer "+tokens.ID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, want := resp.StatusCode, http.StatusForbidden; got != want {
			t.Errorf("an operator's GET /api/console/catalogue/articles: %d, want %d", got, want)
		}
	})
}
