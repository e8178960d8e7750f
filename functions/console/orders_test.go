package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/function/fulfillment"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

const (
	ref = "SUBIN-KAKA142330491727791236986Y"
	cn  = "IN-KA93689528000869Y"
)

// refN and cnN are the n-th of other numbers: a number names one paper
// (papers.md), so each paper a test numbers needs its own.
func refN(n int) string { return fmt.Sprintf("%s-%d", ref, n) }
func cnN(n int) string  { return fmt.Sprintf("IN-KA936895280008%02dY", n) }

// calls counts the DynamoDB calls among calls, by operation.
func calls(cs []storetest.ProxyCall) map[string]int {
	out := map[string]int{}
	for _, c := range storetest.Requests(cs) {
		out[c.Operation]++
	}
	return out
}

// TestConsoleCosts: each console action makes the DynamoDB calls the
// operators' route of the same name makes (measured on
// functions/ops with the same script: queue 17 Query + 1 BatchGetItem; get
// 2 Query; a move 1 Query + 1 GetItem + 1 PutItem, and 1 PutItem more, the
// number's claim, when it stores a number; a certificate by body
// 1 Query, 2 GetItem, 2 PutItem, 2 UpdateItem, 1 DeleteItem; a cancel 2
// Query + 1 GetItem + 1 PutItem), and the role check reads nothing.
func TestConsoleCosts(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	os := functest.AddOrders(t, s.Env, localdb.DevOwner, 2)
	o := os[0]
	operator := functest.StaffClaims("operator@console.local", "operator")
	paper := "/api/console/orders/" + o.DocumentID + "/papers/" + o.Fulfillments[0].DocumentID
	asJSON := map[string]string{"content-type": "application/json"}
	s.Proxy.Take()
	for _, step := range []struct {
		name string
		ev   events.APIGatewayV2HTTPRequest
		want map[string]int
	}{
		{"Queue", functest.Request("GET", "/api/console/queue", "status=Pending", nil, ""), map[string]int{"Query": 17, "BatchGetItem": 1}},
		{"Get", functest.Request("GET", "/api/console/orders/"+o.DocumentID, "", nil, ""), map[string]int{"Query": 2}},
		{"Created", functest.Request("PATCH", paper, "", asJSON, `{"order_status":"Created","unique_doc_ref":"`+ref+`"}`), map[string]int{"Query": 1, "GetItem": 1, "PutItem": 2}},
		{"Procured", functest.Request("PATCH", paper, "", asJSON, `{"order_status":"Procured","certificate_number":"`+cn+`"}`), map[string]int{"Query": 1, "GetItem": 1, "PutItem": 2, "UpdateItem": 1, "BatchWriteItem": 1}},
		{"Attach", functest.WithFile(functest.Request("PUT", paper+"/certificate", "name=cert.pdf", nil, ""), "application/pdf", functest.PDF(512)),
			map[string]int{"Query": 1, "GetItem": 2, "PutItem": 2, "UpdateItem": 2, "DeleteItem": 1}},
		{"Printed", functest.Request("PATCH", paper, "", asJSON, `{"order_status":"Printed"}`), map[string]int{"Query": 1, "GetItem": 1, "PutItem": 1}},
		{"Cancel", functest.Request("POST", "/api/console/orders/"+os[1].DocumentID+"/cancel", "", asJSON, `{"reason":"Duplicate"}`), map[string]int{"Query": 2, "GetItem": 1, "PutItem": 1, "UpdateItem": 1, "BatchWriteItem": 1}},
	} {
		r := s.Invoke(functest.AsStaff(step.ev, operator))
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", step.name, r.Status, r.Body)
		}
		if got := calls(s.Proxy.Take()); !maps.Equal(got, step.want) {
			t.Errorf("%s: calls %v, want the operators' route's %v", step.name, got, step.want)
		}
	}
}

// consoleOrders is what TestConsoleOrders's cases share: the console
// function on a local stack, the dev caller's three orders, and an
// operator's claims.
type consoleOrders struct {
	s        *functest.Stack
	orders   []stampduty.Order
	operator map[string]string
}

// as invokes the function as the staff member of claims; a body without
// headers is sent as JSON.
func (e *consoleOrders) as(claims map[string]string, method, path, query, body string, headers map[string]string) functest.Response {
	if headers == nil && body != "" {
		headers = map[string]string{"content-type": "application/json"}
	}
	return e.s.Invoke(functest.AsStaff(functest.Request(method, path, query, headers, body), claims))
}

// paper returns the console's path of o's first paper.
func (e *consoleOrders) paper(o stampduty.Order) string {
	return "/api/console/orders/" + o.DocumentID + "/papers/" + o.Fulfillments[0].DocumentID
}

// TestConsoleOrders drives the console's order routes as an operator: the
// queue (oldest first, filtered by purpose), its counts, one order, moving
// a paper (its history names the operator's email), attaching its
// certificate and cancelling an order; each costs the DynamoDB calls the
// same operators' route costs. A person in neither group is 403, a request
// without a staff member's claims 401, before any table is read.
func TestConsoleOrders(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	orders := functest.AddOrders(t, s.Env, localdb.DevOwner, 3)
	operator := functest.StaffClaims("operator@console.local", "operator")
	e := &consoleOrders{s: s, orders: orders, operator: operator}
	as, paper := e.as, e.paper

	t.Run("QueueOldestFirst", e.queueOldestFirst)
	t.Run("QueueFilteredByPurpose", func(t *testing.T) {
		r := as(operator, "GET", "/api/console/queue", "purpose=no+such+purpose", "", nil)
		if got, want := r.Body, `{"data":[],"meta":{"pagination":{"pageSize":25,"next":null}}}`; got != want {
			t.Errorf("%d %s, want %s", r.Status, got, want)
		}
	})
	t.Run("Counts", func(t *testing.T) {
		s.Proxy.Take()
		r := as(operator, "GET", "/api/console/queue/counts", "", "", nil)
		if got, want := r.Body, `{"data":{"Created":0,"Pending":3,"Procured":0},"meta":{}}`; got != want {
			t.Errorf("%d %s, want %s", r.Status, got, want)
		}
		if n := calls(s.Proxy.Take()); n["Query"] != 3*17 || len(n) != 1 {
			t.Errorf("calls %v, want 51 Query (17 partitions per status)", n)
		}
	})
	t.Run("MoveByTheOperatorsEmail", e.moveByTheOperatorsEmail)
	t.Run("ErrConflictIsTheOpsAnswer", func(t *testing.T) {
		r := as(operator, "PATCH", paper(orders[0]), "", `{"order_status":"Created","unique_doc_ref":"`+ref+`"}`, nil)
		if e := r.Error(t); r.Status != 409 || e.Error.Message != "Cannot move a fulfillment from Procured to Created." {
			t.Errorf("%d %q", r.Status, e.Error.Message)
		}
	})
	t.Run("AttachCertificateThenPrinted", e.attachCertificateThenPrinted)
	t.Run("CancelWithAReason", func(t *testing.T) {
		r := as(operator, "POST", "/api/console/orders/"+orders[1].DocumentID+"/cancel", "", `{"reason":"Duplicate"}`, nil)
		var got fulfillment.OrderResponse
		if err := json.Unmarshal([]byte(r.Body), &got); err != nil || r.Status != 200 || got.Data.Cancellation == nil || *got.Data.Cancellation.Reason != "Duplicate" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("GetOneOrder", func(t *testing.T) {
		r := as(functest.StaffClaims("admin@console.local", "admin"), "GET", "/api/console/orders/"+orders[2].DocumentID, "", "", nil)
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("ErrNeitherGroup", e.neitherGroupIsForbidden)
	t.Run("StagedCertificate", e.stagedCertificate)
	t.Run("StaleEntryDropped", e.staleEntryDropped)
	t.Run("NumbersNameOnePaper", func(t *testing.T) {
		r := functest.CheckNumbers(t, s, func(o stampduty.Order, i int, body string) functest.Response {
			return as(operator, "PATCH", "/api/console/orders/"+o.DocumentID+"/papers/"+o.Fulfillments[i].DocumentID, "", body, nil)
		}, 10)
		t.Logf("races for one certificate_number through the console: two papers of one order, one won %d of %d; two callers' orders, %d of %d",
			r.SameOrder.OneWon, r.SameOrder.Trials, r.OtherCallers.OneWon, r.OtherCallers.Trials)
	})
	t.Run("ErrNoClaims", func(t *testing.T) {
		r := s.Invoke(functest.Request("GET", "/api/console/queue", "", nil, ""))
		if r.Status != http.StatusUnauthorized {
			t.Errorf("%d, want 401", r.Status)
		}
	})
	t.Run("FailingWebhooks", func(t *testing.T) {
		seedFailing(t, s.Env)
		if r := as(operator, "GET", "/api/console/webhooks/failing", "", "", nil); r.Status != 200 || !strings.Contains(r.Body, "wacme1") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	s.CheckTemplate(s.Proxy.All())
}

func (e *consoleOrders) queueOldestFirst(t *testing.T) {
	e.s.Proxy.Take()
	var page fulfillment.QueueResponse
	r := e.as(e.operator, "GET", "/api/console/queue", "status=Pending", "", nil)
	if err := json.Unmarshal([]byte(r.Body), &page); err != nil || r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var got []string
	for _, o := range page.Data {
		got = append(got, o.DocumentID)
	}
	if want := []string{e.orders[0].DocumentID, e.orders[1].DocumentID, e.orders[2].DocumentID}; !slices.Equal(got, want) {
		t.Errorf("queue %v, want %v", got, want)
	}
	if n := calls(e.s.Proxy.Take()); n["Query"] != 17 || n["BatchGetItem"] != 1 || len(n) != 2 {
		t.Errorf("calls %v, want the ops queue's: 17 Query and 1 BatchGetItem", n)
	}
}

func (e *consoleOrders) moveByTheOperatorsEmail(t *testing.T) {
	e.s.Proxy.Take()
	r := e.as(e.operator, "PATCH", e.paper(e.orders[0]), "", `{"order_status":"Created","unique_doc_ref":"`+ref+`"}`, nil)
	var got fulfillment.OrderResponse
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil || r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	h := got.Data.Fulfillments[0].History
	if last := h[len(h)-1]; last.Status != stampduty.StatusCreated || last.By != "operator@console.local" {
		t.Errorf("history %+v, want Created by operator@console.local", h)
	}
	moved := calls(e.s.Proxy.Take())
	// The same move through the operators' workflow costs the same.
	if r := e.as(e.operator, "PATCH", e.paper(e.orders[0]), "", `{"order_status":"Procured","certificate_number":"`+cn+`"}`, nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	t.Logf("a move: %v", moved)
	if moved["UpdateItem"]+moved["PutItem"] == 0 {
		t.Errorf("calls %v: no write", moved)
	}
}

func (e *consoleOrders) attachCertificateThenPrinted(t *testing.T) {
	ev := functest.WithFile(functest.AsStaff(functest.Request("PUT", e.paper(e.orders[0])+"/certificate", "name=cert.pdf", nil, ""), e.operator), "application/pdf", functest.PDF(512))
	r := e.s.Invoke(ev)
	var got fulfillment.OrderResponse
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil || r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if f := got.Data.Fulfillments[0].CertificateFile; f == nil || f.Name != "cert.pdf" || f.Size != 512 || len(f.SHA256) != 64 {
		t.Errorf("certificate %+v", f)
	}
	if r := e.as(e.operator, "PATCH", e.paper(e.orders[0]), "", `{"order_status":"Printed"}`, nil); r.Status != 200 {
		t.Errorf("Printed: %d %s", r.Status, r.Body)
	}
}

func (e *consoleOrders) neitherGroupIsForbidden(t *testing.T) {
	e.s.Proxy.Take()
	for _, path := range []string{"/api/console/queue", "/api/console/queue/counts", "/api/console/orders/" + e.orders[2].DocumentID} {
		r := e.as(functest.StaffClaims("new@console.local"), "GET", path, "", "", nil)
		if e := r.Error(t); r.Status != http.StatusForbidden || e.Error.Name != "ForbiddenError" {
			t.Errorf("%s: %d %s, want 403", path, r.Status, r.Body)
		}
	}
	r := e.as(functest.StaffClaims("new@console.local"), "POST", "/api/console/orders/"+e.orders[2].DocumentID+"/cancel", "", `{"reason":"x"}`, nil)
	if r.Status != http.StatusForbidden {
		t.Errorf("cancel: %d, want 403", r.Status)
	}
	if n := calls(e.s.Proxy.Take()); len(n) != 0 {
		t.Errorf("calls %v, want none", n)
	}
}

func (e *consoleOrders) stagedCertificate(t *testing.T) {
	o := e.orders[2]
	for _, body := range []string{`{"order_status":"Created","unique_doc_ref":"` + refN(2) + `"}`, `{"order_status":"Procured","certificate_number":"` + cnN(2) + `"}`} {
		if r := e.as(e.operator, "PATCH", e.paper(o), "", body, nil); r.Status != 200 {
			t.Fatalf("move: %d %s", r.Status, r.Body)
		}
	}
	var u fulfillment.UploadResponse
	r := e.as(e.operator, "POST", e.paper(o)+"/certificate/upload", "", `{"name":"big.pdf","mime":"application/pdf","size":5000000}`, nil)
	if err := json.Unmarshal([]byte(r.Body), &u); err != nil || r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	req, _ := http.NewRequest(u.Data.Method, u.Data.URL, bytes.NewReader(functest.PDF(5000000)))
	for k, v := range u.Data.Headers {
		req.Header.Set(k, v)
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT to S3: %v %v", resp, err)
	}
	r = e.as(e.operator, "PUT", e.paper(o)+"/certificate", "", `{"upload":"`+u.Data.Upload+`"}`, nil)
	var got fulfillment.OrderResponse
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil || r.Status != 200 {
		t.Fatalf("attach: %d %s", r.Status, r.Body)
	}
	if f := got.Data.Fulfillments[0].CertificateFile; f == nil || f.Size != 5000000 || f.Name != "big.pdf" {
		t.Errorf("certificate %+v", f)
	}
}

func (e *consoleOrders) staleEntryDropped(t *testing.T) {
	// An order of two papers both moved on: its Pending entry is stale
	// and the queue's read removes it, as the operators' queue does.
	o := functest.AddPapers(t, e.s.Env, localdb.DevOwner, 2)
	for i, f := range o.Fulfillments {
		r := e.as(e.operator, "PATCH", "/api/console/orders/"+o.DocumentID+"/papers/"+f.DocumentID, "", `{"order_status":"Created","unique_doc_ref":"`+refN(10+i)+`"}`, nil)
		if r.Status != 200 {
			t.Fatalf("move: %d %s", r.Status, r.Body)
		}
	}
	if r := e.as(e.operator, "GET", "/api/console/queue", "status=Pending", "", nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}
