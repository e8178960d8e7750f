package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localdb"
)

// ownerRule is what the Callers page says beside Owner for a name the
// callers' workflow refuses.
const ownerRule = "A caller's name (owner) is 1 to 64 ASCII letters, digits, '.', '_' or '-'."

// revokeBound is how long a revoked token may go on working
// (decisions.md; auth.CacheTTL), and revokeGrace the time the poll itself
// may add (requests through the local API Gateway).
const (
	revokeBound = 5 * time.Second
	revokeGrace = time.Second
)

// checkCallers drives the console's Callers view (console.md, "Callers"):
// an admin creates a caller and issues a token, read from the page as a
// person reads it, and an order created with that token through the API
// appears in the queue; revoking the token makes the API refuse it within
// 5 s; an operator does not see Callers, and the API refuses them the
// callers (403). Each state of the page is checked and photographed, on a
// desktop and a phone.
func checkCallers(t *testing.T, s *stack, b *browser.Browser) {
	admin, operator := s.Cognito.Staff[0], s.Cognito.Staff[1]
	for _, screen := range screens {
		t.Run("CallersAdminIssuesATokenThatOrders"+screen.name, func(t *testing.T) {
			owner := "console-" + strings.ToLower(screen.name) + "-" + time.Now().UTC().Format("150405")
			p := atQueue(t, s, b, screen.vp, admin)
			p.Press(browser.Link("Callers"))
			p.Find(browser.Heading("Callers"))
			p.Check("callers")

			// A name the workflow refuses is said beside the field, not sent.
			p.Fill(browser.TextBox("Owner"), "two words")
			p.Press(browser.Button("Create caller"))
			p.WaitText(browser.Role("alert", ""), ownerRule)
			p.Check("callers-invalid-owner")

			p.Fill(browser.TextBox("Owner"), owner)
			p.Press(browser.Button("Create caller"))
			p.Find(browser.Heading("Caller " + owner))
			p.WaitText(browser.Role("status", ""), "Caller "+owner+" created: issue its token.")
			caller := p.Within(browser.Role("region", "Caller "+owner))
			caller.Press(browser.Button("Issue token"))
			token := caller.Value(browser.TextBox("Token"))
			if !auth.WellFormed(token) {
				t.Fatalf("the page shows %q as the token; want one of sdt_ and 43 characters", token)
			}
			issued := caller.Within(browser.Role("group", "New token"))
			if got := issued.Text(browser.Role("group", "New token")); !strings.Contains(got, "it will not be shown again") {
				t.Errorf("the new token's box says %q; want the warning that it will not be shown again", got)
			}
			issued.Press(browser.Button("Copy"))
			issued.WaitText(browser.Role("status", ""), "Copied.")
			p.Check("callers-token-issued")

			// The caller orders with the token; the order is in the queue.
			doc := createOrderWith(t, s, token, 1)
			if got := listWith(t, s, token); got != http.StatusOK {
				t.Errorf("the caller lists its orders with the new token: %d, want 200", got)
			}
			p.Press(browser.Link("Queue"))
			p.Find(browser.Heading("Queue"))
			p.Find(browser.Link(doc))

			// Back on the caller (the browser's Back, or its address
			// typed: the same page), the token is no longer shown.
			p.Open(s.URL + "/console#callers/" + owner)
			p.Find(browser.Heading("Caller " + owner))
			p.Gone(browser.TextBox("Token"))
			// Revoke it.
			caller.Press(browser.Button("Revoke"))
			caller.Press(browser.Button("Yes, revoke"))
			caller.Gone(browser.Button("Revoke"))
			revoked := time.Now()
			p.WaitText(browser.Role("status", ""), "Token "+tokenID(token)+" revoked: it stops working within 5 seconds.")
			p.Check("callers-token-revoked")

			// The API refuses the token within 5 s (each function keeps a
			// lookup for auth.CacheTTL): polled, bounded.
			for {
				status := listWith(t, s, token)
				if status == http.StatusUnauthorized {
					t.Logf("the revoked token was refused %v after the page said it was revoked", time.Since(revoked).Round(time.Millisecond))
					break
				}
				if status != http.StatusOK {
					t.Fatalf("listing with the revoked token: %d, want 200 then 401", status)
				}
				if time.Since(revoked) > revokeBound+revokeGrace {
					t.Fatalf("the revoked token still works %v after it was revoked; want refused within %v", time.Since(revoked).Round(time.Millisecond), revokeBound)
				}
				time.Sleep(250 * time.Millisecond)
			}
			// A name taken: the API's refusal is said beside the field.
			p.Press(browser.Link("Callers"))
			p.Fill(browser.TextBox("Owner"), owner)
			p.Press(browser.Button("Create caller"))
			p.WaitText(browser.Role("alert", ""), "caller "+owner+" exists already")
			checkRefused(t, p, "callers-name-taken", "409 (Conflict) ("+s.URL+"/api/console/callers")
			for k, v := range p.WebStorage() {
				t.Errorf("web storage holds %s=%.20s…", k, v)
			}
			for _, u := range p.Requests() {
				if strings.Contains(u, token) || strings.Contains(u, "@") {
					t.Errorf("a URL holds the token or an email: %s", u)
				}
			}
		})
	}
	t.Run("CallersNotForOperators", func(t *testing.T) {
		p := atQueue(t, s, b, browser.Phone, operator)
		p.Gone(browser.Link("Callers"))
		p.Open(s.URL + "/console#callers") // the same page: still signed in
		p.Find(browser.Heading("Queue"))
		p.Gone(browser.Heading("Callers"))
		tokens, err := localcognito.SignIn(context.Background(), localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, operator.Email, operator.Password)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct{ method, path string }{{"GET", "/api/console/callers"}, {"POST", "/api/console/callers/dev/tokens"}} {
			if got, _ := send(t, s, tokens.ID, r.method, r.path, ""); got != http.StatusForbidden {
				t.Errorf("%s %s as an operator: %d, want 403", r.method, r.path, got)
			}
		}
	})
}

// listWith lists the caller's orders through the public API with token
// and returns the status.
func listWith(t *testing.T, s *stack, token string) int {
	t.Helper()
	status, _ := send(t, s, token, "GET", "/api/live-orders?pagination[pageSize]=1", "")
	return status
}

// tokenID is the ID the console shows for token: the first 12 hex digits
// of its keyed hash under the local stack's key.
func tokenID(token string) string {
	return auth.Token{Hash: localdb.Hasher().Hash(token)}.ID()
}
