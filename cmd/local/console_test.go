package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localdb"
)

// send sends method path to the stack with token as its bearer (a
// caller's API token or a staff member's id token) and body (JSON, when
// not empty), and returns the answer's status and body.
func send(t *testing.T, s *stack, token, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// createOrder creates an order of quantity papers through the API with
// the dev token and returns its documentId.
func createOrder(t *testing.T, s *stack, quantity int) string {
	t.Helper()
	return createOrderWith(t, s, localdb.DevToken, quantity)
}

// createOrderWith creates an order of quantity papers through the API
// with the caller's token and returns its documentId.
func createOrderWith(t *testing.T, s *stack, token string, quantity int) string {
	t.Helper()
	body := fmt.Sprintf(`{"amount":20,"considerationPrice":0,"purpose":"Affidavit","state":"Karnataka","paidBy":"First Party","firstPartyMobileNumber":"9876543210","firstPartyName":"Console Party","secondPartyName":"B","quantity":%d}`, quantity)
	status, b := send(t, s, token, "POST", "/api/live-orders", body)
	var created struct {
		OrderID string `json:"orderId"`
	}
	if json.Unmarshal(b, &created); status != 200 || created.OrderID == "" {
		t.Fatalf("create: %d %s", status, b)
	}
	return created.OrderID
}

// signIn signs in at the console with email and password, by the fields'
// and button's accessible names, with the keyboard.
func signIn(p *browser.Page, url, email, password string) {
	p.Open(url + "/console")
	p.Fill(browser.TextBox("Email"), email)
	p.Fill(browser.TextBox("Password"), password)
	p.Press(browser.Button("Sign in"))
}

// atQueue opens a page of b at vp and signs a in (signIn), returning it
// once the queue, where signing in lands, shows.
func atQueue(t *testing.T, s *stack, b *browser.Browser, vp browser.Viewport, a localcognito.Account) *browser.Page {
	t.Helper()
	p := b.NewPage(t, vp)
	signIn(p, s.URL, a.Email, a.Password)
	p.Find(browser.Heading("Queue"))
	return p
}

// screens are the two widths the console's views are checked at, each
// named as its subtests are.
var screens = []struct {
	name string
	vp   browser.Viewport
}{{"Desktop", browser.Desktop}, {"Phone", browser.Phone}}

// checkConsole drives the console in headless Chromium against the stack:
// an operator signs in, finds a new order of two papers in the queue,
// moves each paper to Printed attaching its certificate, and the order
// leaves the queue; the caller then reads the order with both
// certificates through the API and downloads one. A wrong password is
// said; a person in neither group sees they can do nothing. Every page is
// checked (axe WCAG 2.1 A/AA, screenshot, no console error, no CSP
// violation) on a desktop and a phone, and no token is in web storage.
func checkConsole(t *testing.T, s *stack) {
	b := browser.Start(t)
	operator := s.Cognito.Staff[1]
	cert := filepath.Join(t.TempDir(), "certificate.pdf")
	if err := os.WriteFile(cert, functest.PDF(2048), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, screen := range screens {
		t.Run("OperatorPrintsAnOrder"+screen.name, func(t *testing.T) {
			doc := createOrder(t, s, 2)
			p := b.NewPage(t, screen.vp)
			p.Open(s.URL + "/console")
			p.Find(browser.Heading("Sign in"))
			p.Check("sign-in")
			signIn(p, s.URL, operator.Email, operator.Password)
			p.Find(browser.Heading("Queue"))
			p.Press(browser.Link(doc))
			p.Find(browser.Heading("Order " + doc))
			p.Check("order")
			for i, ids := range [][2]string{{"SUBIN-CONSOLE-" + screen.name[:1] + "1", "IN-KA9368952800086%dY"}, {"SUBIN-CONSOLE-" + screen.name[:1] + "2", "IN-KA9368952800087%dY"}} {
				paper := p.Within(browser.Role("group", fmt.Sprintf("Paper %d", i+1)))
				paper.Fill(browser.TextBox("Unique doc ref"), ids[0])
				paper.Press(browser.Button("Move to Created"))
				paper.Fill(browser.TextBox("Certificate number"), fmt.Sprintf(ids[1], len(screen.name)%10))
				paper.Press(browser.Button("Move to Procured"))
				if i == 0 {
					paper.Upload(browser.FileField("Certificate (PDF)"), cert)
				} else { // the second by drag and drop, from the file manager
					paper.DropFiles(browser.Role("group", "Drop the certificate here"), cert)
					paper.WaitText(browser.Role("alert", ""), "Ready: certificate.pdf")
				}
				paper.Press(browser.Button("Attach certificate"))
				paper.Find(browser.Link("certificate.pdf"))
				paper.Press(browser.Button("Move to Printed"))
				paper.Gone(browser.Button("Move to Printed"))
			}
			p.Check("order-printed")
			p.Press(browser.Link("Back to the queue"))
			p.Find(browser.Heading("Queue"))
			p.Gone(browser.Link(doc))
			p.Check("queue")
			for k, v := range p.WebStorage() {
				t.Errorf("web storage holds %s=%.20s…", k, v)
			}
			for _, u := range p.Requests() {
				if strings.Contains(u, "9876543210") || strings.Contains(u, "Console Party") || strings.Contains(u, "@") {
					t.Errorf("a URL holds personal data: %s", u)
				}
			}
			callerReadsCertificates(t, s, doc)
			p.Press(browser.Button("Sign out"))
			p.Find(browser.Heading("Sign in"))
		})
	}
	t.Run("Firefox", func(t *testing.T) { checkConsoleFirefox(t, s) })
	t.Run("WrongPassword", func(t *testing.T) {
		p := b.NewPage(t, browser.Desktop)
		signIn(p, s.URL, operator.Email, "Not-the-password-1")
		p.WaitText(browser.Role("alert", ""), "Wrong email or password.")
		checkRefused(t, p, "wrong-password", "400 (Bad Request) ("+s.Cognito.Endpoint)
	})
	t.Run("ConflictShownAsItIsNow", func(t *testing.T) { checkConflict(t, s, b) })
	t.Run("ExpiredSessionKeepsTheReason", func(t *testing.T) { checkExpiredSession(t, s, b) })
	t.Run("DocumentShownInline", func(t *testing.T) { checkDocumentInline(t, s, b) })
	t.Run("OrderDuty", func(t *testing.T) { checkOrderDuty(t, s, b) })
	t.Run("QueueLiveOrTest", func(t *testing.T) { checkQueueModes(t, s, b) })
	t.Run("FirstSignInSetsAPassword", func(t *testing.T) { checkFirstSignIn(t, s, b) })
	t.Run("AuthenticatorCodeAtSignIn", func(t *testing.T) { checkAuthenticatorCode(t, s, b) })
	t.Run("Catalogue", func(t *testing.T) { checkCatalogue(t, s, b) })
	t.Run("Staff", func(t *testing.T) { checkConsoleStaff(t, s) })
	t.Run("NeitherGroupCanDoNothing", func(t *testing.T) {
		client := localcognito.Client(s.Cognito.Endpoint)
		if err := localcognito.CreateUser(context.Background(), client, s.Cognito.PoolID, "nobody@console.local", "Local-nobody-password-1"); err != nil {
			t.Fatal(err)
		}
		p := b.NewPage(t, browser.Phone)
		signIn(p, s.URL, "nobody@console.local", "Local-nobody-password-1")
		p.Find(browser.Heading("Nothing to do here"))
		p.Gone(browser.Heading("Queue"))
		p.Check("neither-group")
	})
	checkCallers(t, s, b)
	t.Run("Accounts", func(t *testing.T) { checkAccounts(t, s, b) })
	t.Run("TestTokens", func(t *testing.T) { checkTestTokens(t, s, b) })
}

// checkExpiredSession: a person whose session has ended (the id token
// expired, the refresh token no longer accepted) while typing a Reason
// into Cancel order is asked to sign in again, and the order is cancelled
// with what they typed, never lost.
func checkExpiredSession(t *testing.T, s *stack, b *browser.Browser) {
	ctx := context.Background()
	client := localcognito.Client(s.Cognito.Endpoint)
	const email, password, reason = "expiring@console.local", "Local-expiring-password-1", "Customer asked twice"
	if err := localcognito.CreateUser(ctx, client, s.Cognito.PoolID, email, password, "operator"); err != nil {
		t.Fatal(err)
	}
	doc := createOrder(t, s, 1)
	p := b.NewPage(t, browser.Desktop)
	signIn(p, s.URL, email, password)
	p.Find(browser.Heading("Queue"))
	p.Press(browser.Link(doc))
	p.Fill(browser.TextBox("Reason"), reason)
	// The session ends: deleting and recreating the account drops its
	// refresh tokens, and two hours pass on the page's clock.
	if _, err := client.AdminDeleteUser(ctx, &cip.AdminDeleteUserInput{UserPoolId: aws.String(s.Cognito.PoolID), Username: aws.String(email)}); err != nil {
		t.Fatal(err)
	}
	if err := localcognito.CreateUser(ctx, client, s.Cognito.PoolID, email, password, "operator"); err != nil {
		t.Fatal(err)
	}
	p.AdvanceClock(2 * time.Hour)
	p.Press(browser.Button("Cancel order"))
	p.Find(browser.Heading("Sign in"))
	checkRefused(t, p, "session-ended", "400 (Bad Request) ("+s.Cognito.Endpoint)
	p.Fill(browser.TextBox("Email"), email)
	p.Fill(browser.TextBox("Password"), password)
	p.Press(browser.Button("Sign in"))
	p.Find(browser.Heading("Order " + doc))
	p.Gone(browser.Button("Cancel order"))
	checkRefused(t, p, "cancelled-after-sign-in", "400 (Bad Request) ("+s.Cognito.Endpoint)

	_, read := send(t, s, localdb.DevToken, "GET", "/api/live-orders/"+doc, "")
	var got struct {
		Data struct {
			Cancellation *struct {
				Reason string `json:"reason"`
			} `json:"cancellation"`
		} `json:"data"`
	}
	if err := json.Unmarshal(read, &got); err != nil || got.Data.Cancellation == nil || got.Data.Cancellation.Reason != reason {
		t.Errorf("the order's cancellation %+v (%v), want the reason typed before the session ended, %q", got.Data.Cancellation, err, reason)
	}
}

// checkConflict: when another person moved the paper first, the console
// says so plainly (the API's 409 message) and shows the paper as it now
// is, ready for its next move.
func checkConflict(t *testing.T, s *stack, b *browser.Browser) {
	operator, admin := s.Cognito.Staff[1], s.Cognito.Staff[0]
	doc := createOrder(t, s, 1)
	p := atQueue(t, s, b, browser.Desktop, operator)
	p.Press(browser.Link(doc))
	p.Fill(browser.TextBox("Unique doc ref"), "SUBIN-CONFLICT-1")

	// The admin moves the paper first, through the console's API.
	tokens, err := localcognito.SignIn(context.Background(), localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, admin.Email, admin.Password)
	if err != nil {
		t.Fatal(err)
	}
	console := func(method, path, body string) []byte {
		t.Helper()
		status, out := send(t, s, tokens.ID, method, path, body)
		if status != 200 {
			t.Fatalf("%s %s: %d %s", method, path, status, out)
		}
		return out
	}
	var order struct {
		Data struct {
			Fulfillments []struct {
				DocumentID string `json:"documentId"`
			} `json:"live_order_fulfillments"`
		} `json:"data"`
	}
	if err := json.Unmarshal(console("GET", "/api/console/orders/"+doc, ""), &order); err != nil || len(order.Data.Fulfillments) != 1 {
		t.Fatalf("order: %v %+v", err, order)
	}
	console("PATCH", "/api/console/orders/"+doc+"/papers/"+order.Data.Fulfillments[0].DocumentID, `{"order_status":"Created","unique_doc_ref":"SUBIN-CONFLICT-0"}`)

	p.Press(browser.Button("Move to Created"))
	p.WaitText(browser.Role("status", ""), "Someone else changed this order first: The unique_doc_ref of a fulfillment cannot be changed once stored. It is shown as it is now.")
	p.Find(browser.Button("Move to Procured"))
	checkRefused(t, p, "conflict", "409 (Conflict) ("+s.URL+"/api/console/orders/")

	// A certificate number another order's paper holds (papers.md: a
	// number names one paper) is refused beside its field, the value kept
	// for correcting.
	other := createOrder(t, s, 1)
	if err := json.Unmarshal(console("GET", "/api/console/orders/"+other, ""), &order); err != nil || len(order.Data.Fulfillments) != 1 {
		t.Fatalf("order: %v %+v", err, order)
	}
	_, cn := functest.NewNumbers()
	ref, _ := functest.NewNumbers()
	for _, body := range []string{`{"order_status":"Created","unique_doc_ref":"` + ref + `"}`, `{"order_status":"Procured","certificate_number":"` + cn + `"}`} {
		console("PATCH", "/api/console/orders/"+other+"/papers/"+order.Data.Fulfillments[0].DocumentID, body)
	}
	paper := p.Within(browser.Role("group", "Paper 1"))
	paper.Fill(browser.TextBox("Certificate number"), cn)
	paper.Press(browser.Button("Move to Procured"))
	paper.WaitText(browser.Role("alert", ""), "The certificate_number is another paper's: each number names one paper.")
	if got := paper.Value(browser.TextBox("Certificate number")); got != cn {
		t.Errorf("the refused number's field holds %q, want it kept: %q", got, cn)
	}
	checkRefused(t, p, "number-taken", "409 (Conflict) ("+s.URL+"/api/console/orders/")
}

// checkRefused is browser.Page.Check for a page whose request was
// refused, as it is meant to be: Chromium logs the refusal as a failed
// load, the only console error such a page may have (expected: the
// status and address it names, e.g. "400 (Bad Request) (<Cognito>").
// It checks axe and the width as Check does.
func checkRefused(t *testing.T, p *browser.Page, name, expected string) {
	t.Helper()
	p.Screenshot(name)
	p.CheckAxe()
	p.CheckFits(name)
	for _, e := range p.ConsoleErrors() {
		if !strings.Contains(e, expected) {
			t.Errorf("console error %s", e)
		}
	}
	if v := p.CSPViolations(); len(v) != 0 {
		t.Errorf("CSP violations %v", v)
	}
}

// callerReadsCertificates: the caller reads the order through the API,
// every paper Printed with its certificate, and downloads one.
func callerReadsCertificates(t *testing.T, s *stack, doc string) {
	t.Helper()
	status, read := send(t, s, localdb.DevToken, "GET", "/api/live-orders/"+doc, "")
	var got struct {
		Data struct {
			Fulfillments []struct {
				Status string `json:"order_status"`
				File   *struct {
					URL  string `json:"url"`
					Size int64  `json:"size"`
				} `json:"certificate_file"`
			} `json:"live_order_fulfillments"`
		} `json:"data"`
	}
	if err := json.Unmarshal(read, &got); err != nil || len(got.Data.Fulfillments) != 2 {
		t.Fatalf("read: %d %v %+v", status, err, got)
	}
	for i, f := range got.Data.Fulfillments {
		if f.Status != "Printed" || f.File == nil || f.File.Size != 2048 {
			t.Errorf("paper %d: %s %+v, want Printed with its certificate", i+1, f.Status, f.File)
		}
	}
	if f := got.Data.Fulfillments[0].File; f != nil {
		d, err := http.Get(f.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(d.Body)
		d.Body.Close()
		if d.StatusCode != 200 || len(b) != 2048 || !strings.HasPrefix(string(b), "%PDF") {
			t.Errorf("download: %d, %d bytes", d.StatusCode, len(b))
		}
	}
}
