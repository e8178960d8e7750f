package main

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/function/fulfillment"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// cancel sends an operator's cancel of order doc with body.
func (s operating) cancel(doc, body string) functest.Response {
	return s.invoke(functest.Request("POST", "/api/ops/live-orders/"+doc+"/cancel", "", map[string]string{"content-type": "application/json"}, body))
}

// writes counts the DynamoDB writes among calls.
func writes(calls []storetest.ProxyCall) int {
	n := 0
	for _, c := range calls {
		if c.Operation == "PutItem" || c.Operation == "UpdateItem" || c.Operation == "DeleteItem" {
			n++
		}
	}
	return n
}

// TestOpsCancel drives POST /api/ops/live-orders/{documentId}/cancel: an
// operator cancels, with a reason, an order none of whose fulfillments is
// Procured or Printed; the order is answered as operators see it, leaves
// the queue and takes no move, certificate or upload; a second cancel
// answers the same and writes nothing; bad bodies are 400 naming the
// member.
func TestOpsCancel(t *testing.T) {
	s := operating{Stack: functest.New(t, "OpsFunction", wire)}
	s.orders = functest.AddOrders(t, s.Env, localdb.DevOwner, 3)
	const reason = `Customer asked: duplicate of "k3…" ₹100`
	var first functest.Response

	t.Run("CreatedPaper", func(t *testing.T) {
		o := s.orders[0]
		if resp := s.patch(o, `{"order_status":"Created","unique_doc_ref":"`+ref+`"}`); resp.Status != http.StatusOK {
			t.Fatalf("move: %d %s", resp.Status, resp.Body)
		}
		s.Proxy.Take()
		first = s.cancel(o.DocumentID, `{"reason":`+quote(reason)+`}`)
		if first.Status != http.StatusOK {
			t.Fatalf("%d %s", first.Status, first.Body)
		}
		// The order's write, and the release of its hold (accounts.md).
		if n := writes(s.Proxy.Take()); n != 2 {
			t.Errorf("%d writes, want 2", n)
		}
		got := order(t, first)
		if got.CancelledAt == nil || got.Cancellation == nil || got.Cancellation.By != stampduty.ByOperator ||
			got.Cancellation.Reason == nil || *got.Cancellation.Reason != reason || got.UpdatedAt != *got.CancelledAt || got.Caller != localdb.DevOwner {
			t.Errorf("answer: cancelledAt %v, cancellation %+v, owner %s", got.CancelledAt, got.Cancellation, got.Caller)
		}
		if got.Fulfillments[0].Status != stampduty.StatusCreated {
			t.Errorf("the fulfillment is %s, want it left Created", got.Fulfillments[0].Status)
		}
		if read := order(t, s.invoke(functest.Request("GET", "/api/ops/live-orders/"+o.DocumentID, "", nil, ""))); !reflect.DeepEqual(read, got) {
			t.Errorf("read back\n%+v\nwant the answer\n%+v", read, got)
		}
	})
	t.Run("SecondCancelAnswersTheSameAndWritesNothing", func(t *testing.T) {
		s.Proxy.Take()
		again := s.cancel(s.orders[0].DocumentID, `{"reason":"Another reason"}`)
		if again.Status != http.StatusOK || again.Body != first.Body {
			t.Errorf("%d %s\nwant the first answer %s", again.Status, again.Body, first.Body)
		}
		if n := writes(s.Proxy.Take()); n != 0 {
			t.Errorf("%d writes, want none", n)
		}
	})
	t.Run("LeftTheQueue", func(t *testing.T) {
		for _, status := range []string{stampduty.StatusPending, stampduty.StatusCreated} {
			resp := s.invoke(functest.Request("GET", "/api/ops/live-orders", "status="+status, nil, ""))
			var page fulfillment.QueueResponse
			json.Unmarshal([]byte(resp.Body), &page)
			if slices.ContainsFunc(page.Data, func(q stampduty.OpsOrder) bool { return q.DocumentID == s.orders[0].DocumentID }) {
				t.Errorf("the %s queue lists the cancelled order", status)
			}
		}
	})
	t.Run("ErrCancelledOrderTakesNothing", func(t *testing.T) {
		o := s.orders[0]
		s.Proxy.Take()
		for name, resp := range map[string]functest.Response{
			"move":        s.patch(o, `{"order_status":"Procured","certificate_number":"`+cn+`"}`),
			"certificate": s.putCertificate(o, "application/pdf", functest.PDF(64)),
			"upload": s.invoke(functest.Request("POST", path(o)+"/certificate/upload", "", map[string]string{"content-type": "application/json"},
				`{"name":"c.pdf","mime":"application/pdf","size":64}`)),
		} {
			e := resp.Error(t)
			if resp.Status != http.StatusConflict || !strings.HasPrefix(e.Error.Message, "The order is cancelled: ") {
				t.Errorf("%s: %d %q, want 409 for a cancelled order", name, resp.Status, e.Error.Message)
			}
		}
		if n := writes(s.Proxy.Take()); n != 0 {
			t.Errorf("%d writes, want none", n)
		}
		if v := functest.Versions(t, s.Env); len(v) != 0 {
			t.Errorf("files stored: %v", v)
		}
	})
	t.Run("ErrProcuredPaper", func(t *testing.T) {
		o := s.orders[1]
		for _, body := range []string{`{"order_status":"Created","unique_doc_ref":"` + refN(1) + `"}`, `{"order_status":"Procured","certificate_number":"` + cnN(1) + `"}`} {
			if resp := s.patch(o, body); resp.Status != http.StatusOK {
				t.Fatalf("move: %d %s", resp.Status, resp.Body)
			}
		}
		s.Proxy.Take()
		resp := s.cancel(o.DocumentID, `{"reason":"Too late"}`)
		if e := resp.Error(t); resp.Status != http.StatusConflict || e.Error.Message != stampduty.MsgOperatorCancel {
			t.Errorf("%d %q, want 409 %q", resp.Status, e.Error.Message, stampduty.MsgOperatorCancel)
		}
		if n := writes(s.Proxy.Take()); n != 0 {
			t.Errorf("%d writes, want none", n)
		}
	})
	t.Run("ErrBadBody", func(t *testing.T) {
		o := s.orders[2]
		s.Proxy.Take()
		for body, want := range map[string]string{
			`{}`:               "reason",
			`{"reason":null}`:  "reason",
			`{"reason":""}`:    "reason",
			`{"reason":"   "}`: "reason",
			`{"reason":"` + strings.Repeat("a", 201) + `"}`: "reason",
			`{"reason":42}`:               "reason",
			`{"reason":["x"]}`:            "reason",
			`{"reason":"a\nb"}`:           "reason",
			`{"reason":"x","by":"me"}`:    "by",
			`{"reason":"x","reason":"y"}`: "reason",
			`"x"`:                         "",
			`not json`:                    "",
		} {
			resp := s.cancel(o.DocumentID, body)
			e := resp.Error(t)
			if resp.Status != http.StatusBadRequest || !slices.Contains(e.Paths(), want) {
				t.Errorf("%.40s: %d %v, want 400 naming %q", body, resp.Status, e.Paths(), want)
			}
		}
		if n := writes(s.Proxy.Take()); n != 0 {
			t.Errorf("%d writes, want none", n)
		}
		// 200 characters is the most a reason may have.
		if resp := s.cancel(o.DocumentID, `{"reason":"`+strings.Repeat("é", 200)+`"}`); resp.Status != http.StatusOK {
			t.Errorf("200 characters: %d %s", resp.Status, resp.Body)
		}
	})
	t.Run("ErrUnknownOrder", func(t *testing.T) {
		resp := s.cancel("nosuchorder0000000000000", `{"reason":"x"}`)
		if e := resp.Error(t); resp.Status != http.StatusNotFound || e.Error.Message != "Order with the documentId: nosuchorder0000000000000 cannot be found." {
			t.Errorf("%d %q", resp.Status, e.Error.Message)
		}
	})
	t.Run("ErrWithoutIAMIdentity", func(t *testing.T) {
		resp := s.Invoke(functest.Request("POST", "/api/ops/live-orders/"+s.orders[2].DocumentID+"/cancel", "", nil, `{"reason":"x"}`))
		if resp.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", resp.Status)
		}
	})
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
