package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/function/fulfillment"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

func TestMain(m *testing.M) { functest.Main(m) }

// numberRaces is how many times each race of functest.CheckNumbers runs.
const numberRaces = 10

const (
	ref = "SUBIN-KAKA142330491727791236986Y"
	cn  = "IN-KA93689528000869Y"
)

// refN and cnN are the n-th of other numbers: a number names one paper
// (papers.md), so each paper a test numbers needs its own.
func refN(n int) string { return fmt.Sprintf("%s-%d", ref, n) }
func cnN(n int) string  { return fmt.Sprintf("IN-KA936895280008%02dY", n) }

type opsOrder struct {
	Data stampduty.OpsOrder `json:"data"`
}

// operating is TestOps's function over one set of tables, which each
// subtest drives in turn: 3 orders of the dev owner, then 2 of someone
// else.
type operating struct {
	*functest.Stack
	orders []stampduty.Order
}

// invoke sends ev signed by the operator.
func (s operating) invoke(ev events.APIGatewayV2HTTPRequest) functest.Response {
	return s.Invoke(functest.AsOperator(ev, functest.Operator))
}

// path is the address of o's first fulfillment.
func path(o stampduty.Order) string {
	return "/api/ops/live-orders/" + o.DocumentID + "/fulfillments/" + o.Fulfillments[0].DocumentID
}

// patch sends a change of o's first fulfillment.
func (s operating) patch(o stampduty.Order, body string) functest.Response {
	return s.invoke(functest.Request("PATCH", path(o), "", map[string]string{"content-type": "application/json"}, body))
}

// putCertificate sends body as o's certificate file, of contentType.
func (s operating) putCertificate(o stampduty.Order, contentType string, body []byte) functest.Response {
	ev := functest.Request("PUT", path(o)+"/certificate", "name=cert.pdf", nil, "")
	return s.invoke(functest.WithFile(ev, contentType, body))
}

// order decodes the order an answer carries.
func order(t *testing.T, resp functest.Response) stampduty.OpsOrder {
	t.Helper()
	var b opsOrder
	if err := json.Unmarshal([]byte(resp.Body), &b); err != nil {
		t.Fatalf("%d %s: %v", resp.Status, resp.Body, err)
	}
	return b.Data
}

// TestOps drives the operators' routes over one set of tables, each
// subtest in turn, then checks the function against template.yaml with
// every call they made.
func TestOps(t *testing.T) {
	s := operating{Stack: functest.New(t, "OpsFunction", wire)}
	s.orders = functest.AddOrders(t, s.Env, localdb.DevOwner, 3)
	s.orders = append(s.orders, functest.AddOrders(t, s.Env, "someone-else", 2)...)

	t.Run("ErrWithoutIAMIdentity", func(t *testing.T) {
		resp := s.Invoke(functest.Request("GET", "/api/ops/live-orders", "", nil, ""))
		if resp.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", resp.Status)
		}
		resp.Error(t)
	})
	t.Run("QueueOldestFirstAcrossCallers", s.queueOldestFirstAcrossCallers)
	t.Run("ErrQueueParameters", func(t *testing.T) {
		for _, q := range []string{"status=Done", "pagination%5Bcursor%5D=nope", "pagination%5BpageSize%5D=0", "status=Pending&status=Created"} {
			if resp := s.invoke(functest.Request("GET", "/api/ops/live-orders", q, nil, "")); resp.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", q, resp.Status)
			}
		}
	})
	t.Run("Lifecycle", func(t *testing.T) {
		o := s.orders[0]
		s.advance(t, o)
		replaced := s.replaceCertificate(t, o)
		s.certificateStraightToS3(t, o, replaced)
		s.print(t, o)
	})
	t.Run("Papers", s.papers)
	t.Run("OneWinnerUnderConcurrency", s.oneWinnerUnderConcurrency)
	t.Run("NumbersNameOnePaper", func(t *testing.T) {
		r := functest.CheckNumbers(t, s.Stack, func(o stampduty.Order, paper int, body string) functest.Response {
			p := "/api/ops/live-orders/" + o.DocumentID + "/fulfillments/" + o.Fulfillments[paper].DocumentID
			return s.invoke(functest.Request("PATCH", p, "", map[string]string{"content-type": "application/json"}, body))
		}, numberRaces)
		t.Logf("races for one certificate_number through the operators' API: two papers of one order, one won %d of %d; two callers' orders, %d of %d",
			r.SameOrder.OneWon, r.SameOrder.Trials, r.OtherCallers.OneWon, r.OtherCallers.Trials)
	})
	t.Run("ErrUnknownOrderOrFulfillment", s.errUnknownOrderOrFulfillment)
	t.Run("EventFiles", func(t *testing.T) {
		s.CheckEvents(t, map[string]int{"ops-queue": http.StatusOK, "ops-advance": http.StatusNotFound})
	})
	s.CheckRoutes()
	s.CheckTemplate(s.Proxy.All())
}

func (s operating) queueOldestFirstAcrossCallers(t *testing.T) {
	var got []string
	cursor := ""
	for {
		q := "pagination%5BpageSize%5D=2"
		if cursor != "" {
			q += "&pagination%5Bcursor%5D=" + url.QueryEscape(cursor)
		}
		s.Proxy.Take()
		resp := s.invoke(functest.Request("GET", "/api/ops/live-orders", q, nil, ""))
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		if got, want := s.Env.Operations(s.Proxy.Take()), "BatchGetItem:OrdersTable=1 Query:OrdersTable/index/queue-shards=17"; got != want {
			t.Errorf("a queue page costs %s, want %s", got, want)
		}
		var page fulfillment.QueueResponse
		json.Unmarshal([]byte(resp.Body), &page)
		if page.Meta.Pagination.PageSize != 2 {
			t.Errorf("pageSize = %d", page.Meta.Pagination.PageSize)
		}
		for _, o := range page.Data {
			got = append(got, o.DocumentID)
			if o.Caller == "" {
				t.Errorf("queue order without owner")
			}
		}
		if page.Meta.Pagination.Next == nil {
			break
		}
		cursor = *page.Meta.Pagination.Next
	}
	var want []string
	for _, o := range s.orders {
		want = append(want, o.DocumentID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("queue = %v, want %v", got, want)
	}
}

// advance moves o's fulfillment from Pending to Procured, with every
// refusal on the way.
func (s operating) advance(t *testing.T, o stampduty.Order) {
	steps := []struct {
		name, body string
		status     int
		want       string // the fulfillment's status after, or the error message
	}{
		{"ErrSkip", `{"order_status":"Procured","certificate_number":"` + cn + `"}`, 409, "Cannot move a fulfillment from Pending to Procured."},
		{"ErrUnknownStatus", `{"order_status":"Done"}`, 400, "Invalid data. order_status must be one of the following values: Pending, Created, Procured, Printed"},
		{"ErrNoStatus", `{"unique_doc_ref":"` + ref + `"}`, 400, "Invalid data. order_status is required"},
		{"ErrUnknownField", `{"order_status":"Created","unique_doc_ref":"` + ref + `","owner":"x"}`, 400, "Invalid data. owner is not a field of a fulfillment change"},
		{"ErrBadRef", `{"order_status":"Created","unique_doc_ref":"lower case"}`, 400, "Invalid data. unique_doc_ref must be 1 to 64 characters of A-Z, 0-9, - and /"},
		{"ErrCreatedWithoutRef", `{"order_status":"Created"}`, 400, "Invalid data. unique_doc_ref is required to move a fulfillment to Created"},
		{"Created", `{"order_status":"Created","unique_doc_ref":"` + ref + `"}`, 200, stampduty.StatusCreated},
		{"RepeatIsHarmless", `{"order_status":"Created","unique_doc_ref":"` + ref + `"}`, 200, stampduty.StatusCreated},
		{"ErrChangeTheRef", `{"order_status":"Procured","unique_doc_ref":"OTHER-1","certificate_number":"` + cn + `"}`, 409, "The unique_doc_ref of a fulfillment cannot be changed once stored."},
		{"Procured", `{"order_status":"Procured","certificate_number":"` + cn + `"}`, 200, stampduty.StatusProcured},
		{"ErrPrintedWithoutCertificate", `{"order_status":"Printed"}`, 409, "Cannot move a fulfillment to Printed before its certificate file is attached."},
	}
	for _, st := range steps {
		s.Proxy.Take()
		resp := s.patch(o, st.body)
		if resp.Status != st.status {
			t.Fatalf("%s: status %d, want %d: %s", st.name, resp.Status, st.status, resp.Body)
		}
		if st.status != 200 {
			if e := resp.Error(t); e.Error.Message != st.want {
				t.Errorf("%s: message %q, want %q", st.name, e.Error.Message, st.want)
			}
			continue
		}
		got := order(t, resp)
		if f := got.Fulfillments[0]; f.Status != st.want {
			t.Errorf("%s: status %s, want %s", st.name, f.Status, st.want)
		}
		// One conditional write of the order at most, three requests in
		// all, and one more, the number's claim (papers.md), for a move
		// that stores a number; and the charge of a paper reaching
		// Procured (accounts.md): the account item's update and its entry.
		max := 3
		switch st.name {
		case "Created":
			max = 4
		case "Procured":
			max = 6
		}
		if calls := s.Env.Made(s.Proxy.Take()); len(calls) > max {
			t.Errorf("%s: %d calls (%s), want at most %d", st.name, len(calls), s.Env.Operations(calls), max)
		}
	}
}

// replaceCertificate attaches a certificate to o, Procured, then another
// in its place, and returns the one attached last.
func (s operating) replaceCertificate(t *testing.T, o stampduty.Order) *stampduty.File {
	if resp := s.putCertificate(o, "image/png", []byte("\x89PNG\r\n\x1a\n0000")); resp.Status != http.StatusUnsupportedMediaType {
		t.Errorf("PNG certificate: status %d, want 415", resp.Status)
	}
	resp := s.putCertificate(o, "application/pdf", functest.PDF(0))
	if resp.Status != http.StatusOK {
		t.Fatalf("certificate: status %d: %s", resp.Status, resp.Body)
	}
	first := order(t, resp).Fulfillments[0].CertificateFile
	if first == nil || first.Name != "cert.pdf" || first.URL == "" {
		t.Fatalf("certificate_file = %+v", first)
	}
	// While still Procured, another upload replaces it.
	second := order(t, s.putCertificate(o, "application/pdf", append(functest.PDF(0), '\n'))).Fulfillments[0].CertificateFile
	if second == nil || second.DocumentID == first.DocumentID || second.SHA256 == first.SHA256 {
		t.Errorf("replacing the certificate: %+v, then %+v", first, second)
	}
	if got := s.Download(t, first.URL).Status; got != http.StatusNotFound {
		t.Errorf("the replaced certificate: GET %d, want 404", got)
	}
	return second
}

// certificateStraightToS3: a 10 MiB certificate, sent straight to the
// bucket, replaces the one attached (replaced).
func (s operating) certificateStraightToS3(t *testing.T, o stampduty.Order, replaced *stampduty.File) {
	const max = 10 << 20
	newUpload := func(body string) functest.Response {
		return s.invoke(functest.Request("POST", path(o)+"/certificate/upload", "", map[string]string{"content-type": "application/json"}, body))
	}
	if resp := newUpload(fmt.Sprintf(`{"mime":"application/pdf","size":%d}`, max+1)); resp.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("a certificate over 10 MiB: status %d, want 413", resp.Status)
	}
	if resp := newUpload(`{"mime":"image/png","size":10}`); resp.Status != http.StatusUnsupportedMediaType {
		t.Errorf("a PNG certificate: status %d, want 415", resp.Status)
	}
	var u fulfillment.UploadResponse
	if err := json.Unmarshal([]byte(newUpload(fmt.Sprintf(`{"name":"cert-scan.pdf","mime":"application/pdf","size":%d}`, max)).Body), &u); err != nil || u.Data.Method != http.MethodPut {
		t.Fatalf("upload %+v: %v", u, err)
	}
	req, _ := http.NewRequest(u.Data.Method, u.Data.URL, bytes.NewReader(functest.PDF(max)))
	req.Header.Set("Content-Type", u.Data.Headers["Content-Type"])
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("PUT to S3: %v %v", r, err)
	}
	attachUpload := func(id string) functest.Response {
		return s.invoke(functest.Request("PUT", path(o)+"/certificate", "", map[string]string{"content-type": "application/json"}, `{"upload":"`+id+`"}`))
	}
	if resp := attachUpload(u.Data.Upload); resp.Status != http.StatusOK {
		t.Fatalf("attach: %d %s", resp.Status, resp.Body)
	} else if c := order(t, resp).Fulfillments[0].CertificateFile; c == nil || c.Size != max || c.Name != "cert-scan.pdf" {
		t.Errorf("certificate_file = %+v", c)
	}
	if resp := attachUpload(u.Data.Upload); resp.Status != http.StatusNotFound {
		t.Errorf("the same upload again: status %d, want 404", resp.Status)
	}
	if got := s.Download(t, replaced.URL).Status; got != http.StatusNotFound {
		t.Errorf("the certificate it replaced: GET %d, want 404", got)
	}
}

// print moves o, Procured with its certificate, to Printed, which it
// never leaves.
func (s operating) print(t *testing.T, o stampduty.Order) {
	got := order(t, s.patch(o, `{"order_status":"Printed"}`))
	f := got.Fulfillments[0]
	if f.Status != stampduty.StatusPrinted || f.UniqueDocRef != ref || f.CertificateNumber != cn {
		t.Errorf("after Printed: %+v", f)
	}
	if len(f.History) != 4 || f.History[0].By != "" || f.History[3].By != functest.Operator || got.UpdatedAt == got.CreatedAt {
		t.Errorf("history %+v, updatedAt %s", f.History, got.UpdatedAt)
	}
	if resp := s.putCertificate(o, "application/pdf", functest.PDF(0)); resp.Status != http.StatusConflict {
		t.Errorf("certificate once Printed: status %d, want 409", resp.Status)
	}
	if resp := s.patch(o, `{"order_status":"Procured"}`); resp.Status != http.StatusConflict {
		t.Errorf("leaving Printed: status %d, want 409", resp.Status)
	}
}

func (s operating) oneWinnerUnderConcurrency(t *testing.T) {
	o := s.orders[1]
	const n = 6
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = s.patch(o, fmt.Sprintf(`{"order_status":"Created","unique_doc_ref":"REF-%d"}`, i)).Status
		}()
	}
	wg.Wait()
	ok := 0
	for _, st := range statuses {
		switch st {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
		default:
			t.Errorf("status %d", st)
		}
	}
	if ok != 1 {
		t.Errorf("%d requests changed the fulfillment (%v), want exactly 1", ok, statuses)
	}
	got := order(t, s.invoke(functest.Request("GET", "/api/ops/live-orders/"+o.DocumentID, "", nil, "")))
	if h := got.Fulfillments[0].History; len(h) != 2 {
		t.Errorf("history has %d entries, want 2", len(h))
	}
}

func (s operating) errUnknownOrderOrFulfillment(t *testing.T) {
	o := s.orders[2]
	for _, p := range []string{
		"/api/ops/live-orders/nosuchorder0000000000000/fulfillments/" + o.Fulfillments[0].DocumentID,
		"/api/ops/live-orders/" + o.DocumentID + "/fulfillments/nosuchfulfillment0000000",
	} {
		resp := s.invoke(functest.Request("PATCH", p, "", map[string]string{"content-type": "application/json"}, `{"order_status":"Created","unique_doc_ref":"A"}`))
		if resp.Status != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, resp.Status)
		}
	}
	resp := s.invoke(functest.Request("GET", "/api/ops/live-orders/nosuchorder0000000000000", "", nil, ""))
	if e := resp.Error(t); resp.Status != 404 || !strings.Contains(e.Error.Message, "cannot be found") {
		t.Errorf("GET unknown: %d %q", resp.Status, e.Error.Message)
	}
}

// papers moves the papers of an order of 20 one by one: each moves on its
// own, at the calls a paper of a one-paper order takes, and the order
// stays in a status's queue while any of its papers is in it.
func (s operating) papers(t *testing.T) {
	one := functest.AddOrders(t, s.Env, localdb.DevOwner, 1)[0]
	twenty := functest.AddPapers(t, s.Env, localdb.DevOwner, 20)
	move := func(t *testing.T, o stampduty.Order, i int, body string) (stampduty.OpsOrder, string) {
		t.Helper()
		s.Proxy.Take()
		p := "/api/ops/live-orders/" + o.DocumentID + "/fulfillments/" + o.Fulfillments[i].DocumentID
		resp := s.invoke(functest.Request("PATCH", p, "", map[string]string{"content-type": "application/json"}, body))
		if resp.Status != http.StatusOK {
			t.Fatalf("move paper %d: %d %s", i+1, resp.Status, resp.Body)
		}
		return order(t, resp), s.Env.Operations(s.Proxy.Take())
	}
	created := func(n int) string { return `{"order_status":"Created","unique_doc_ref":"` + refN(n) + `"}` }
	// Each instance looks an order's key up once: warm both up first.
	move(t, one, 0, `{"order_status":"Pending"}`)
	move(t, twenty, 0, `{"order_status":"Pending"}`)
	_, oneCalls := move(t, one, 0, created(100))
	got, twentyCalls := move(t, twenty, 6, created(6))
	if oneCalls != twentyCalls {
		t.Errorf("moving paper 7 of 20: %s; want one paper's calls, %s", twentyCalls, oneCalls)
	}
	for i, f := range got.Fulfillments {
		if want := map[bool]string{true: stampduty.StatusCreated, false: stampduty.StatusPending}[i == 6]; f.Status != want {
			t.Errorf("after moving paper 7: paper %d %s, want %s", i+1, f.Status, want)
		}
	}
	inQueue := func(status string) bool {
		t.Helper()
		resp := s.invoke(functest.Request("GET", "/api/ops/live-orders", "status="+status+"&pagination%5BpageSize%5D=100", nil, ""))
		var page fulfillment.QueueResponse
		if err := json.Unmarshal([]byte(resp.Body), &page); err != nil || resp.Status != http.StatusOK {
			t.Fatalf("queue: %d %s", resp.Status, resp.Body)
		}
		n := 0
		for _, o := range page.Data {
			if o.DocumentID == twenty.DocumentID {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%s queue lists the order %d times", status, n)
		}
		return n == 1
	}
	if !inQueue(stampduty.StatusPending) || !inQueue(stampduty.StatusCreated) {
		t.Errorf("with papers Pending and Created, the order is in the Pending queue %v and the Created one %v; want both",
			inQueue(stampduty.StatusPending), inQueue(stampduty.StatusCreated))
	}
	for i := range 20 {
		if i != 6 {
			move(t, twenty, i, created(i))
		}
	}
	if inQueue(stampduty.StatusPending) {
		t.Error("every paper Created: the order is still in the Pending queue")
	}
	if !inQueue(stampduty.StatusCreated) {
		t.Error("every paper Created: the order is not in the Created queue")
	}
	// Two papers of one order never share a certificate number.
	procured := `{"order_status":"Procured","certificate_number":"` + cnN(6) + `"}`
	move(t, twenty, 6, procured)
	p := "/api/ops/live-orders/" + twenty.DocumentID + "/fulfillments/" + twenty.Fulfillments[7].DocumentID
	resp := s.invoke(functest.Request("PATCH", p, "", map[string]string{"content-type": "application/json"}, procured))
	if resp.Status != http.StatusConflict || !strings.Contains(resp.Body, "cannot be another fulfillment's of the same order") {
		t.Errorf("paper 8 numbered as paper 7: %d %s, want 409", resp.Status, resp.Body)
	}
	if got, _ := move(t, twenty, 7, created(7)); got.Fulfillments[7].Status != stampduty.StatusCreated || got.Fulfillments[7].CertificateNumber != "" {
		t.Errorf("paper 8 after the refusal: %s %q, want Created without a number", got.Fulfillments[7].Status, got.Fulfillments[7].CertificateNumber)
	}
}
