package main

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localcognito"
)

// checkTestTokens drives the Callers page's test tokens (test-mode.md,
// "Test tokens"): an admin picks Test, issues the token, sees it shown once
// as a test token and listed with the mode Test, then issues a live one;
// an order created with the test token is a test order, which the test
// token lists and the caller's live token does not. On a desktop and a
// phone, each state checked and photographed. Then every operator and
// console route refuses the caller's tokens, test and live.
func checkTestTokens(t *testing.T, s *stack, b *browser.Browser) {
	admin := s.Cognito.Staff[0]
	for _, screen := range screens {
		t.Run("TestTokenIssuedFromCallers"+screen.name, func(t *testing.T) {
			owner := "testmode-" + strings.ToLower(screen.name) + "-" + time.Now().UTC().Format("150405")
			p := atQueue(t, s, b, screen.vp, admin)
			p.Press(browser.Link("Callers"))
			p.Fill(browser.TextBox("Owner"), owner)
			p.Press(browser.Button("Create caller"))
			p.Find(browser.Heading("Caller " + owner))
			caller := p.Within(browser.Role("region", "Caller "+owner))
			modes := caller.Within(browser.Role("group", "Mode of the token to issue"))
			modes.Find(browser.Role("radio", "Live"))
			p.Check("testtokens-mode-choice")

			// Test, chosen with the keyboard, then Issue token.
			modes.Tick(browser.Role("radio", "Test"))
			caller.Press(browser.Button("Issue token"))
			issued := caller.Within(browser.Role("group", "New token"))
			testToken := issued.Value(browser.TextBox("Token"))
			if !auth.IsTest(testToken) || !strings.HasPrefix(testToken, auth.TestPrefix) {
				t.Fatalf("the page shows %.9q… as the token; want a test token (%s…)", testToken, auth.TestPrefix)
			}
			issued.WaitText(browser.Role("note", ""), "Test token: it sees only "+owner+"'s test orders, never its live ones.")
			if got := issued.Text(browser.Role("group", "New token")); !strings.Contains(got, "it will not be shown again") {
				t.Errorf("the new token's box says %q; want the warning that it will not be shown again", got)
			}
			tokens := caller.Within(browser.Role("region", "Tokens of "+owner+", oldest first"))
			checkModeColumn(t, tokens.Text(browser.Role("table", "")), map[string]string{tokenID(testToken): "Test"})
			p.Check("testtokens-test-token-issued")

			// Live again, then Issue token: a live token, said so.
			modes.Tick(browser.Role("radio", "Live"))
			caller.Press(browser.Button("Issue token"))
			issued.WaitText(browser.Role("note", ""), "Live token: it sees "+owner+"'s live orders.")
			liveToken := issued.Value(browser.TextBox("Token"))
			if auth.IsTest(liveToken) || !auth.WellFormed(liveToken) || liveToken == testToken {
				t.Fatalf("the page shows %.9q… as the live token; want a live token", liveToken)
			}
			checkModeColumn(t, tokens.Text(browser.Role("table", "")), map[string]string{tokenID(testToken): "Test", tokenID(liveToken): "Live"})
			p.Check("testtokens-live-token-issued")

			// The test token's order is a test order: its own list has it,
			// the live token's list and read do not.
			doc := createOrderWith(t, s, testToken, 1)
			if got := listedWith(t, s, testToken); !strings.Contains(got, doc) {
				t.Errorf("the test token's list lacks its order %s: %s", doc, got)
			}
			if got := listedWith(t, s, liveToken); strings.Contains(got, doc) {
				t.Errorf("the live token's list holds the test order %s: %s", doc, got)
			}
			if status, body := send(t, s, liveToken, "GET", "/api/live-orders/"+doc, ""); status != http.StatusNotFound {
				t.Errorf("the live token reads the test order: %d %s; want 404", status, body)
			}
			if status, body := send(t, s, testToken, "GET", "/api/live-orders/"+doc, ""); status != http.StatusOK {
				t.Errorf("the test token reads its order: %d %s; want 200", status, body)
			}

			// Leaving the caller forgets the token and puts the mode back
			// to Live: the Test choice is not kept for the next caller.
			modes.Tick(browser.Role("radio", "Test"))
			p.Press(browser.Link("Queue"))
			p.Find(browser.Heading("Queue"))
			p.Open(s.URL + "/console#callers/" + owner)
			p.Find(browser.Heading("Caller " + owner))
			p.Gone(browser.TextBox("Token"))
			if got := p.Checked(browser.Role("radio", "Live")); !got {
				t.Error("back on the caller, Live is not checked; want the mode back to Live")
			}
			for _, u := range p.Requests() {
				if strings.Contains(u, testToken) || strings.Contains(u, liveToken) || strings.Contains(u, "@") {
					t.Errorf("a URL holds a token or an email: %s", u)
				}
			}
			for k, v := range p.WebStorage() {
				t.Errorf("web storage holds %s=%.20s…", k, v)
			}
		})
	}
	t.Run("CallerTokensRefusedOnOperatorPaths", func(t *testing.T) { checkOperatorPathsRefuseCallers(t, s) })
}

// checkModeColumn checks that the token table's text (a row a line, its
// cells separated by tabs) shows each token ID of want with its mode.
func checkModeColumn(t *testing.T, table string, want map[string]string) {
	t.Helper()
	for id, mode := range want {
		row := regexp.MustCompile(`(?m)^` + id + `\t([^\t]*)\t`).FindStringSubmatch(table)
		if row == nil || row[1] != mode {
			t.Errorf("token %s's Mode: %q; want %s\n%s", id, row, mode, table)
		}
	}
}

// listedWith lists the caller's orders (the first 100) with token.
func listedWith(t *testing.T, s *stack, token string) string {
	t.Helper()
	status, body := send(t, s, token, "GET", "/api/live-orders?pageSize=100", "")
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, body)
	}
	return string(body)
}

// checkOperatorPathsRefuseCallers: every route of the template that is an
// operator's or a staff member's (AWS_IAM: /api/ops/…; the console's
// JWT authorizer: /api/console/…) refuses a caller's test token, and its
// live one, as API Gateway does before any function runs: 403 on AWS_IAM
// routes, 401 on JWT routes, with API Gateway's own body (the service
// always answers in its envelope, so no function ran and nothing was
// read). Each route is sent what would change the caller's live order,
// tokens or callers if it were served; afterwards none changed.
func checkOperatorPathsRefuseCallers(t *testing.T, s *stack) {
	owner := "optest-" + time.Now().UTC().Format("150405")
	staff, err := localcognito.SignIn(context.Background(), localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, s.Cognito.Staff[0].Email, s.Cognito.Staff[0].Password)
	if err != nil {
		t.Fatal(err)
	}
	adminCall := func(method, path, body string) []byte {
		t.Helper()
		status, b := send(t, s, staff.ID, method, path, body)
		if status/100 != 2 {
			t.Fatalf("%s %s as an admin: %d %s", method, path, status, b)
		}
		return b
	}
	adminCall("POST", "/api/console/callers", `{"owner":"`+owner+`"}`)
	issue := func(body string) string {
		var got struct {
			Data struct{ Token string } `json:"data"`
		}
		if err := json.Unmarshal(adminCall("POST", "/api/console/callers/"+owner+"/tokens", body), &got); err != nil {
			t.Fatal(err)
		}
		return got.Data.Token
	}
	testToken, liveToken := issue(`{"test":true}`), issue("")
	liveDoc := createOrderWith(t, s, liveToken, 1)
	// purchasedBy test:stuck: a test order that stays Pending
	// (test-mode.md's magic value), so that its papers move only if a
	// refused request moved them.
	status, b := send(t, s, testToken, "POST", "/api/live-orders", `{"amount":20,"considerationPrice":0,"purpose":"Affidavit","state":"Karnataka",`+
		`"paidBy":"First Party","purchasedBy":"test:stuck","firstPartyMobileNumber":"9876543210","firstPartyName":"Console Party","secondPartyName":"B"}`)
	var created struct {
		OrderID string `json:"orderId"`
	}
	if err := json.Unmarshal(b, &created); err != nil || status != http.StatusOK || created.OrderID == "" {
		t.Fatalf("create the test order: %d %s", status, b)
	}
	testDoc := created.OrderID
	paperOf := func(token, doc string) string {
		_, b := send(t, s, token, "GET", "/api/live-orders/"+doc, "")
		var got struct {
			Data struct {
				Papers []struct {
					DocumentID string `json:"documentId"`
				} `json:"live_order_fulfillments"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &got); err != nil || len(got.Data.Papers) != 1 {
			t.Fatalf("read %s: %v %s", doc, err, b)
		}
		return got.Data.Papers[0].DocumentID
	}
	// What each order and the caller look like before: read again after.
	snapshot := func() map[string]string {
		_, live := send(t, s, liveToken, "GET", "/api/live-orders/"+liveDoc, "")
		_, test := send(t, s, testToken, "GET", "/api/live-orders/"+testDoc, "")
		return map[string]string{
			"the live order": string(live), "the test order's papers": papersOf(test),
			"the caller's tokens": string(adminCall("GET", "/api/console/callers/"+owner+"/tokens", "")),
		}
	}
	before := snapshot()

	for _, tc := range []struct{ name, token, doc, paper string }{
		{"TestToken", testToken, testDoc, paperOf(testToken, testDoc)},
		{"LiveToken", liveToken, liveDoc, paperOf(liveToken, liveDoc)},
	} {
		n := 0
		for _, f := range s.tmpl.Functions {
			for _, r := range f.Routes {
				if !r.IAM && r.Authorizer == "" {
					continue // a caller's or a public route
				}
				n++
				path := strings.NewReplacer("{documentId}", tc.doc, "{fulfillmentDocumentId}", tc.paper, "{owner}", owner,
					"{id}", tokenID(tc.token)).Replace(r.Path)
				status, body := send(t, s, tc.token, r.Method, path, changeBody(r.Path))
				want, message := http.StatusUnauthorized, `{"message":"Unauthorized"}`
				if r.IAM {
					want, message = http.StatusForbidden, `{"message":"Forbidden"}`
				}
				if status != want || string(body) != message {
					t.Errorf("%s on %s %s (%s): %d %s; want %d %s from API Gateway, no function run",
						tc.name, r.Method, path, f.LogicalID, status, body, want, message)
				}
			}
		}
		if n < 20 {
			t.Fatalf("%d operator and console routes in the template; want every one of them (more than 20)", n)
		}
	}
	for what, was := range before {
		if now := snapshot()[what]; now != was {
			t.Errorf("%s changed:\nbefore %s\nafter  %s", what, was, now)
		}
	}
	if body := string(adminCall("GET", "/api/console/callers", "")); strings.Contains(body, "sneaky") {
		t.Errorf("a refused request created a caller: %s", body)
	}
	for _, token := range []string{testToken, liveToken} {
		if got := listWith(t, s, token); got != http.StatusOK {
			t.Errorf("the caller's token after the refusals: %d, want 200 (not revoked)", got)
		}
	}
}

// changeBody is what each operator or console route is sent: what would
// change something if the route served it (move a paper, cancel, create
// a caller, issue a token, invite a person), "" for the others.
func changeBody(path string) string {
	switch {
	case strings.HasSuffix(path, "/fulfillments/{fulfillmentDocumentId}"), strings.HasSuffix(path, "/papers/{fulfillmentDocumentId}"):
		return `{"order_status":"Created","unique_doc_ref":"SUBIN-REFUSED-1"}`
	case strings.HasSuffix(path, "/cancel"):
		return `{"reason":"Refused token"}`
	case path == "/api/console/callers":
		return `{"owner":"sneaky"}`
	case strings.HasSuffix(path, "/tokens"):
		return `{"test":true}`
	case strings.HasPrefix(path, "/api/console/staff"):
		return `{"email":"sneaky@console.local","role":"admin"}`
	}
	return ""
}

// papersOf is the order's and its papers' states of an order's answer:
// what a refused request would have changed. (Not the whole answer: a test
// order's may carry what its own steps add.)
func papersOf(order []byte) string {
	var got struct {
		Data struct {
			Status string `json:"order_status"`
			Papers []struct {
				DocumentID string  `json:"documentId"`
				Status     string  `json:"order_status"`
				Ref        *string `json:"unique_doc_ref"`
			} `json:"live_order_fulfillments"`
		} `json:"data"`
	}
	if err := json.Unmarshal(order, &got); err != nil {
		return "unreadable: " + string(order)
	}
	b, _ := json.Marshal(got.Data)
	return string(b)
}
