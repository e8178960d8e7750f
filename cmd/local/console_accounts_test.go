package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localcognito"
)

// checkAccounts drives a caller's Account in the console (accounts.md,
// Staff): an admin sees Balance, Held, Available and Credit limit and the
// entries; records a credit, an adjustment (its missing note said beside
// Note, as the API names it) and a limit below what is held (asked twice),
// each after a confirmation, the outcome said in the status line; an
// operator sees the order's Payment and gets 403 from the account routes.
// Checked on a desktop (each state) and a phone (the section).
func checkAccounts(t *testing.T, s *stack, b *browser.Browser) {
	start := time.Now()
	defer func() { t.Logf("the accounts' browser test ran %v", time.Since(start).Round(time.Millisecond)) }()
	admin, operator := s.Cognito.Staff[0], s.Cognito.Staff[1]
	ctx := context.Background()
	adminTokens, err := localcognito.SignIn(ctx, localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, admin.Email, admin.Password)
	if err != nil {
		t.Fatal(err)
	}
	owner := "acct-" + time.Now().UTC().Format("150405")
	if status, body := send(t, s, adminTokens.ID, "POST", "/api/console/callers", `{"owner":"`+owner+`"}`); status != http.StatusCreated {
		t.Fatalf("create the caller: %d %s", status, body)
	}
	status, body := send(t, s, adminTokens.ID, "POST", "/api/console/callers/"+owner+"/tokens", "")
	var issued struct {
		Data struct{ Token string } `json:"data"`
	}
	if json.Unmarshal(body, &issued); status != http.StatusCreated || issued.Data.Token == "" {
		t.Fatalf("issue its token: %d %s", status, body)
	}
	doc := createOrderWith(t, s, issued.Data.Token, 1) // holds ₹20.00

	t.Run("AdminRecordsCreditAdjustmentAndLimit", func(t *testing.T) {
		p := atQueue(t, s, b, browser.Desktop, admin)
		p.Open(s.URL + "/console#callers/" + owner)
		account := p.Within(browser.Role("region", "Account"))
		waitFigures(t, p, "Balance ₹0.00", "Held ₹20.00", "Available Unlimited", "Credit limit Unlimited")
		p.Check("account")

		credit := account.Within(browser.Role("form", "Record credit"))
		credit.Fill(browser.TextBox("Amount"), "10")
		credit.Press(browser.Button("Record credit"))
		credit.WaitText(browser.Role("alert", ""), "Rupees with exactly two decimals, such as 1000.00.")
		credit.Fill(browser.TextBox("Amount"), "10.00")
		credit.Fill(browser.TextBox("Reference"), "utr-browser-1")
		credit.Fill(browser.TextBox("Note"), "NEFT")
		credit.Press(browser.Button("Record credit"))
		p.Check("account-credit-confirm")
		credit.Press(browser.Button("Yes, record credit"))
		account.WaitText(browser.Role("status", ""), "Credit of ₹10.00 recorded, reference UTR-BROWSER-1.")
		account.Find(browser.Role("cell", "UTR-BROWSER-1"))

		adjust := account.Within(browser.Role("form", "Record adjustment"))
		adjust.Fill(browser.TextBox("Amount"), "-2.50")
		adjust.Press(browser.Button("Record adjustment"))
		adjust.Press(browser.Button("Yes, record adjustment"))
		adjust.WaitText(browser.Role("alert", ""), "note is required: say why the balance is adjusted")
		refusedAs := s.URL + "/api/console/accounts/" + owner
		checkRefusedAs(t, p, "account-adjustment-refused", "400 (Bad Request) ("+refusedAs+"/adjustments")
		adjust.Fill(browser.TextBox("Note"), "bank charge")
		adjust.Press(browser.Button("Record adjustment"))
		adjust.Press(browser.Button("Yes, record adjustment"))
		account.WaitText(browser.Role("status", ""), "Adjustment of -₹2.50 recorded.")

		limit := account.Within(browser.Role("form", "Credit limit"))
		limit.Fill(browser.TextBox("Credit limit"), "0.00")
		limit.Press(browser.Button("Save limit"))
		limit.Press(browser.Button("Yes, save limit"))
		// Below what is held: asked again, with what it means.
		limit.Press(browser.Button("Yes, save it below what is held"))
		account.WaitText(browser.Role("status", ""), "Credit limit saved: ₹0.00.")
		waitFigures(t, p, "Balance ₹7.50", "Held ₹20.00", "Available -₹12.50", "Credit limit ₹0.00")
		checkRefusedAs(t, p, "account-limit-saved", "400 (Bad Request) ("+refusedAs+"/adjustments", "409 (Conflict) ("+refusedAs+"/limit")
		account.Press(browser.Button("Download CSV"))
		account.WaitText(browser.Role("status", ""), "Downloaded 3 entries as "+owner+"-entries.csv.")
		for _, u := range p.Requests() {
			if strings.Contains(u, "@") || strings.Contains(u, "UTR") {
				t.Errorf("a URL holds an email or a reference: %s", u)
			}
		}
		// Every new order is refused now (available below zero).
		body := `{"amount":20,"considerationPrice":0,"purpose":"Affidavit","state":"Karnataka","paidBy":"First Party","firstPartyMobileNumber":"9876543210","firstPartyName":"Console Party","secondPartyName":"B","quantity":1}`
		if status, body := send(t, s, issued.Data.Token, "POST", "/api/live-orders", body); status != http.StatusPaymentRequired {
			t.Errorf("a create with available below zero: %d %s, want 402", status, body)
		}
	})
	t.Run("AccountOnAPhone", func(t *testing.T) {
		p := atQueue(t, s, b, browser.Phone, admin)
		p.Open(s.URL + "/console#callers/" + owner)
		p.Within(browser.Role("region", "Account")).Find(browser.Role("cell", "UTR-BROWSER-1"))
		p.Check("account-phone")
	})
	t.Run("OperatorSeesPaymentNotAccounts", func(t *testing.T) {
		p := atQueue(t, s, b, browser.Phone, operator)
		p.Open(s.URL + "/console#order/" + doc)
		p.Find(browser.Heading("Payment"))
		if got := strings.Join(strings.Fields(p.Text(browser.Role("region", "Order "+doc))), " "); !strings.Contains(got, "Payment Held ₹20.00 Charged ₹0.00 Released ₹0.00") {
			t.Errorf("the order says %q; want its Payment: Held ₹20.00, Charged ₹0.00, Released ₹0.00", got)
		}
		p.Check("order-payment")
		p.Open(s.URL + "/console#callers/" + owner) // the same page: still signed in
		p.Find(browser.Heading("Queue"))
		p.Gone(browser.Role("region", "Account"))
		tokens, err := localcognito.SignIn(ctx, localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, operator.Email, operator.Password)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/api/console/accounts/" + owner, ""},
			{"POST", "/api/console/accounts/" + owner + "/credits", `{"data":{"amount":"1.00","reference":"SNEAKY"}}`},
			{"PUT", "/api/console/accounts/" + owner + "/limit", `{"data":{"creditLimit":null}}`},
		} {
			if got, _ := send(t, s, tokens.ID, r.method, r.path, r.body); got != http.StatusForbidden {
				t.Errorf("%s %s as an operator: %d, want 403", r.method, r.path, got)
			}
		}
	})
}

// waitFigures waits until the Account section's figures read want (each
// "Name value", in order), as the page updates them after a change.
func waitFigures(t *testing.T, p *browser.Page, want ...string) {
	t.Helper()
	deadline := time.Now().Add(p.Timeout)
	for {
		got := strings.Join(strings.Fields(p.Text(browser.Role("region", "Account"))), " ")
		if strings.Contains(got, strings.Join(want, " ")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the account reads %q; want %q", got, strings.Join(want, " "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkRefusedAs is checkRefused for a page that has had several refused
// requests, as it was meant to: each console error must name one of them.
func checkRefusedAs(t *testing.T, p *browser.Page, name string, expected ...string) {
	t.Helper()
	p.Screenshot(name)
	p.CheckAxe()
	p.CheckFits(name)
	for _, e := range p.ConsoleErrors() {
		if !slices.ContainsFunc(expected, func(x string) bool { return strings.Contains(e, x) }) {
			t.Errorf("console error %s", e)
		}
	}
	if v := p.CSPViolations(); len(v) != 0 {
		t.Errorf("CSP violations %v", v)
	}
}
