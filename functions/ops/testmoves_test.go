package main

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// TestTestOrdersMoveThemselves: an operator may read a test order but not
// move its papers or attach their certificates (test-mode.md: test orders
// move themselves; the "Bad input": 409): each such request is
// 409 naming the reason, and neither the order nor the bucket changes.
func TestTestOrdersMoveThemselves(t *testing.T) {
	s := operating{Stack: functest.New(t, "OpsFunction", wire)}
	o := functest.AddOrders(t, s.Env, stampduty.TestOwnerOf("tester"), 1)[0]
	f := functest.Fulfiller(s.Env)
	before, err := f.OpsGet(context.Background(), o.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if resp := s.invoke(functest.Request("GET", "/api/ops/live-orders/"+o.DocumentID, "", nil, "")); resp.Status != http.StatusOK {
		t.Errorf("an operator's read of a test order: status %d, want 200", resp.Status)
	}
	for name, resp := range map[string]functest.Response{
		"Move":        s.patch(o, `{"order_status":"Created","unique_doc_ref":"`+ref+`"}`),
		"Certificate": s.putCertificate(o, stampduty.MimePDF, functest.PDF(1000)),
		"Upload": s.invoke(functest.Request("POST", path(o)+"/certificate/upload", "", map[string]string{"content-type": "application/json"},
			`{"name":"cert.pdf","mime":"application/pdf","size":1000}`)),
	} {
		t.Run(name, func(t *testing.T) {
			if resp.Status != http.StatusConflict {
				t.Fatalf("status %d, want 409: %s", resp.Status, resp.Body)
			}
			if msg := resp.Error(t).Error.Message; !strings.Contains(msg, "test order") {
				t.Errorf("message %q does not say it is a test order", msg)
			}
		})
	}
	after, err := f.OpsGet(context.Background(), o.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before.Order, after.Order) {
		t.Errorf("the test order changed:\n%+v\n%+v", before.Order, after.Order)
	}
	if v := functest.Versions(t, s.Env); len(v) != 0 {
		t.Errorf("the bucket holds %v", v)
	}
}
