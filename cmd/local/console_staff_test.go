package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/store"
	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localdb"
)

// checkConsoleStaff drives the admin's Staff view and the Failing webhooks
// view in the browser, on a desktop and a phone (console.md, "Staff" and
// "Failing webhooks").
//
// cognito-local lets a disabled person sign in (TestLocalCognitoGaps), so
// these tests show that the account is disabled (listed so, by the API and
// the page), not that the person can no longer sign in: on AWS Cognito
// refuses them, which nothing here can show.
func checkConsoleStaff(t *testing.T, s *stack) {
	b := browser.Start(t)
	for _, screen := range screens {
		t.Run("AdminManagesStaff"+screen.name, func(t *testing.T) { checkStaffView(t, s, b, screen.vp, strings.ToLower(screen.name)) })
	}
	t.Run("OperatorSeesFailingWebhooks", func(t *testing.T) { checkFailingWebhooks(t, s, b) })
}

// checkStaffView: an admin invites a person as operator (after the page
// refused a malformed email beside the field), makes them admin, disables
// them, and is refused, in plain words, when demoting or disabling the only
// enabled admin left: themselves.
func checkStaffView(t *testing.T, s *stack, b *browser.Browser, vp browser.Viewport, screen string) {
	admin := s.Cognito.Staff[0]
	invited := "invited-" + screen + "@console.local"
	p := atQueue(t, s, b, vp, admin)
	p.Press(browser.Link("Staff"))
	p.Find(browser.Heading("Staff"))
	p.Find(browser.Role("group", admin.Email))
	p.Check("staff")

	form := p.Within(browser.Role("form", "Invite a person"))
	form.Fill(browser.TextBox("Email"), "invited at console.local")
	form.Press(browser.Button("Invite"))
	form.WaitText(browser.Role("alert", ""), "The email must be an address such as name@example.com.")
	p.Check("staff-invite-refused")

	form.Fill(browser.TextBox("Email"), invited)
	form.Choose(browser.Role("combobox", "Role"), "Operator")
	form.Press(browser.Button("Invite"))
	p.WaitText(browser.Role("status", ""), "Invited "+invited+" as Operator: Cognito emails them a temporary password.")
	person := p.Within(browser.Role("group", invited))
	p.Check("staff-invited")

	person.Choose(browser.Role("combobox", "Role"), "Admin")
	person.Press(browser.Button("Change role"))
	p.WaitText(browser.Role("status", ""), "The role of "+invited+" is now Admin.")
	person.Press(browser.Button("Disable"))
	p.WaitText(browser.Role("status", ""), invited+" is disabled.")
	person.Find(browser.Button("Enable"))
	p.Check("staff-disabled")

	// The admin is now the only enabled admin: neither a demotion nor a
	// disable of theirs is sent through, and the page says why.
	me := p.Within(browser.Role("group", admin.Email))
	me.Choose(browser.Role("combobox", "Role"), "Operator")
	me.Press(browser.Button("Change role"))
	me.WaitText(browser.Role("alert", ""), "cannot demote "+admin.Email+": they are the last enabled admin; make another person admin first")
	checkRefused(t, p, "staff-last-admin", "409 (Conflict) ("+s.URL+"/api/console/staff/role")
	me.Press(browser.Button("Disable"))
	me.WaitText(browser.Role("alert", ""), "cannot disable "+admin.Email+": they are the last enabled admin; make another person admin first")

	got := consoleGET(t, s, idToken(t, s, admin), "/api/console/staff")
	if got.status != http.StatusOK || !strings.Contains(got.body, `{"email":"`+admin.Email+`","role":"admin","enabled":true`) ||
		!strings.Contains(got.body, `{"email":"`+invited+`","role":"admin","enabled":false`) {
		t.Errorf("the staff after the changes: %d %s\nwant %s an enabled admin and %s a disabled admin", got.status, got.body, admin.Email, invited)
	}
	for _, u := range p.Requests() {
		if strings.Contains(u, "@") {
			t.Errorf("a URL holds an email: %s", u)
		}
	}
}

// checkFailingWebhooks: a caller's webhook at a receiver on this machine
// that answers 500 fails its first delivery (the stack's dispatcher runs as
// on AWS); an operator opens Failing webhooks and finds the caller listed
// with the last attempt. The operator has no Staff in the navigation, and
// the staff route refuses their token (403). The webhook is deleted at the
// end, so that no other test sees it fail.
func checkFailingWebhooks(t *testing.T, s *stack, b *browser.Browser) {
	operator := s.Cognito.Staff[1]
	var hits atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(receiver.Close)

	token := idToken(t, s, operator)
	p := atQueue(t, s, b, browser.Phone, operator)
	p.Gone(browser.Link("Staff"))
	if got := consoleGET(t, s, token, "/api/console/staff"); got.status != http.StatusForbidden || !strings.Contains(got.body, "Forbidden: this needs the admin role") {
		t.Errorf("GET /api/console/staff with an operator's token: %d %s, want 403", got.status, got.body)
	}
	if none := consoleGET(t, s, token, "/api/console/webhooks/failing"); none.body == `{"data":[],"meta":{}}` {
		p.Press(browser.Link("Failing webhooks"))
		p.Find(browser.Heading("Failing webhooks"))
		p.Within(browser.Role("region", "Failing webhooks")).WaitText(browser.Role("status", ""), "No webhook is failing.")
		p.Check("webhooks-none")
	} else {
		t.Logf("webhooks fail already (%s): the empty view is not shown", none.body)
	}

	const owner = "console-failing"
	secret, hash, err := localdb.Hasher().NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.New(localdb.Client(s.Endpoint)).Tokens("TokensTable").Create(context.Background(), auth.Token{Hash: hash, Owner: owner, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	caller := func(method, path, body string) (int, string) {
		t.Helper()
		status, out := send(t, s, secret, method, path, body)
		return status, string(out)
	}
	status, body := caller("POST", "/api/webhooks", `{"url":"`+receiver.URL+`/hooks","events":["order.created"]}`)
	var hook struct {
		Data struct {
			DocumentID string `json:"documentId"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &hook); err != nil || status != http.StatusCreated && status != http.StatusOK || hook.Data.DocumentID == "" {
		t.Fatalf("register the webhook: %d %s", status, body)
	}
	t.Cleanup(func() {
		if status, body := caller("DELETE", "/api/webhooks/"+hook.Data.DocumentID, ""); status >= 300 {
			t.Errorf("delete the webhook: %d %s", status, body)
		}
	})
	if status, body := caller("POST", "/api/live-orders", `{"amount":20,"considerationPrice":0,"purpose":"Affidavit","state":"Karnataka","paidBy":"First Party","firstPartyMobileNumber":"9876543210","firstPartyName":"Hook Party","secondPartyName":"B"}`); status != http.StatusOK {
		t.Fatalf("create an order: %d %s", status, body)
	}

	// The dispatcher polls every few seconds: the first attempt, answered
	// 500, is recorded within the minute.
	var listed string
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if got := consoleGET(t, s, token, "/api/console/webhooks/failing"); strings.Contains(got.body, `"owner":"`+owner+`"`) && strings.Contains(got.body, `"status":500`) {
			listed = got.body
			break
		}
	}
	if listed == "" {
		t.Fatalf("the webhook is not listed as failing after a minute (the receiver was called %d times)", hits.Load())
	}
	p.Press(browser.Link("Failing webhooks"))
	p.Find(browser.Heading("Failing webhooks"))
	p.Press(browser.Button("Refresh"))
	p.Find(browser.Role("rowheader", owner))
	p.Find(browser.Role("cell", hook.Data.DocumentID))
	if text := p.Text(browser.Role("table", "Failing webhooks, the oldest waiting event first")); !strings.Contains(text, "HTTP 500 at") || !strings.Contains(text, receiver.URL+"/hooks") {
		t.Errorf("the table says\n%s\nwant the last attempt answered HTTP 500 and the receiver's URL", text)
	}
	p.Check("webhooks-failing")

	d := b.NewPage(t, browser.Desktop)
	signIn(d, s.URL, operator.Email, operator.Password)
	d.Find(browser.Heading("Queue"))
	d.Press(browser.Link("Failing webhooks"))
	d.Find(browser.Heading("Failing webhooks"))
	d.Find(browser.Role("rowheader", owner))
	d.Check("webhooks-failing")
}

// consoleAnswer is a console route's status and body.
type consoleAnswer struct {
	status int
	body   string
}

// idToken signs a in at the local Cognito and returns their id token, the
// one the page sends.
func idToken(t *testing.T, s *stack, a localcognito.Account) string {
	t.Helper()
	tokens, err := localcognito.SignIn(context.Background(), localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, a.Email, a.Password)
	if err != nil {
		t.Fatal(err)
	}
	return tokens.ID
}

// consoleGET sends GET path to the console's API with the id token.
func consoleGET(t *testing.T, s *stack, token, path string) consoleAnswer {
	t.Helper()
	status, out := send(t, s, token, "GET", path, "")
	return consoleAnswer{status, string(out)}
}
