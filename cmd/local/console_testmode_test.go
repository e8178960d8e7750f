package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/store"
	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localdb"
)

// checkQueueModes: the console's queue shows live orders only until the
// operator turns its Live/Test switch to Test, which shows the test orders
// only (test-mode.md: test orders never appear in the operators' queue
// unless asked for), with their counts labelled as test counts; the mode
// is in the address (#queue/<status>/test), so a reload keeps it, and
// nothing of it is in web storage.
func checkQueueModes(t *testing.T, s *stack, b *browser.Browser) {
	owner := "console-testmode-" + time.Now().UTC().Format("150405")
	secret, hash, err := localdb.Hasher().NewTestToken()
	if err != nil {
		t.Fatal(err)
	}
	db := store.New(localdb.Client(s.Endpoint))
	if err := db.Tokens("TokensTable").Create(context.Background(), auth.Token{Hash: hash, Owner: owner, CreatedAt: time.Now(), Test: true}); err != nil {
		t.Fatal(err)
	}
	testDoc := createOrderWith(t, s, secret, 1)
	liveDoc := createOrder(t, s, 1)

	operator := s.Cognito.Staff[1]
	p := atQueue(t, s, b, browser.Desktop, operator)
	p.Find(browser.Link(liveDoc))
	p.Gone(browser.Link(testDoc))
	p.Find(browser.Link("Live orders"))

	p.Press(browser.Link("Test orders"))
	p.Find(browser.Link(testDoc))
	p.Gone(browser.Link(liveDoc))
	p.Find(browser.Role("table", "Test orders, Pending: orders waiting, oldest first"))
	n, err := db.Orders("OrdersTable").QueueCount(context.Background(), "Pending", true)
	if err != nil {
		t.Fatal(err)
	}
	p.Find(browser.Link(fmt.Sprintf("Pending (%d test)", n))) // a test count, labelled
	if u := p.URL(); !strings.HasSuffix(u, "#queue/Pending/test") {
		t.Errorf("the address is %s, want the mode in it (#queue/Pending/test)", u)
	}
	p.Check("queue-test")

	// The address keeps the mode: opened again, the page shows test orders.
	p.Open(p.URL())
	p.Find(browser.Link(testDoc))
	p.Gone(browser.Link(liveDoc))
	for k, v := range p.WebStorage() {
		t.Errorf("web storage holds %s=%.20s…", k, v)
	}

	p.Press(browser.Link("Live orders"))
	p.Find(browser.Link(liveDoc))
	p.Gone(browser.Link(testDoc))
}
