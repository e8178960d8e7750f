package main

import (
	"maps"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"stampduty/shared/function/fulfillment"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

// TestTestAndLiveAreSeparate: a caller's test token cannot store a
// document on the caller's live order, nor start or finish a large upload
// of one, and its live token cannot on its test order (test-mode.md,
// "Test tokens"): each is 404, as for another caller's order, and writes
// nothing — no DynamoDB write, no object in the bucket, the order as it
// was. Each token uploads to its own order.
func TestTestAndLiveAreSeparate(t *testing.T) {
	s := functest.New(t, "UploadDocumentFunction", wire)
	live, test := functest.AddLiveAndTestTokens(t, s.Env, "acme")
	liveOrder, testOrder := functest.AddLiveAndTestOrder(t, s.Env, "acme")
	headers := func(secret string) map[string]string {
		return map[string]string{"authorization": "Bearer " + secret, "content-type": "application/json"}
	}
	put := func(secret, doc string) functest.Response {
		ev := functest.Request("PUT", "/api/live-orders/"+doc+"/document", "", headers(secret), "")
		return s.Invoke(functest.WithFile(ev, "application/pdf", pdf))
	}
	start := func(secret, doc string) functest.Response {
		return s.Invoke(functest.Request("POST", "/api/live-orders/"+doc+"/document/upload", "", headers(secret), `{"mime":"application/pdf","size":100}`))
	}
	attach := func(secret, doc, upload string) functest.Response {
		return s.Invoke(functest.Request("PUT", "/api/live-orders/"+doc+"/document", "", headers(secret), `{"upload":"`+upload+`"}`))
	}

	// A large upload of the test order, started and sent with the test
	// token, ready to attach: the live token cannot attach it.
	var u fulfillment.UploadResponse
	t.Run("TestTokenStartsALargeUploadOfItsOrder", func(t *testing.T) {
		u = functest.OK[fulfillment.UploadResponse](t, start(test, testOrder))
		if got := send(t, u, functest.PDF(100), nil); got != http.StatusOK {
			t.Errorf("S3 answered %d to the test upload", got)
		}
	})
	for _, tc := range []struct {
		name string
		send func() functest.Response
		doc  string
	}{
		{"TestTokenCannotUploadToALiveOrder", func() functest.Response { return put(test, liveOrder) }, liveOrder},
		{"LiveTokenCannotUploadToATestOrder", func() functest.Response { return put(live, testOrder) }, testOrder},
		{"TestTokenCannotStartALargeUploadOfALiveOrder", func() functest.Response { return start(test, liveOrder) }, liveOrder},
		{"LiveTokenCannotStartALargeUploadOfATestOrder", func() functest.Response { return start(live, testOrder) }, testOrder},
		{"LiveTokenCannotAttachATestUpload", func() functest.Response { return attach(live, testOrder, u.Data.Upload) }, testOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, objects := functest.StoredOrder(t, s.Env, tc.doc), functest.Versions(t, s.Env)
			s.Proxy.Take()
			r := tc.send()
			if writes := writes(s.Proxy.Take()); writes != "" {
				t.Errorf("wrote %s", writes)
			}
			if r.Status != http.StatusNotFound {
				t.Fatalf("status %d, want 404: %s", r.Status, r.Body)
			}
			r.Error(t)
			if after := functest.StoredOrder(t, s.Env, tc.doc); !reflect.DeepEqual(after, before) {
				t.Error("the order changed")
			}
			if after := functest.Versions(t, s.Env); !maps.Equal(after, objects) {
				t.Errorf("the bucket changed: %v, was %v", after, objects)
			}
		})
	}
	t.Run("EachTokenUploadsToItsOwnOrder", func(t *testing.T) {
		functest.OK[fileBody](t, put(live, liveOrder))
		functest.OK[fileBody](t, attach(test, testOrder, u.Data.Upload))
	})
}

// writes names the writes among calls ("" for none).
func writes(calls []storetest.ProxyCall) string {
	var out []string
	for _, c := range calls {
		switch c.Operation {
		case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
			out = append(out, c.Operation+":"+c.Table)
		}
	}
	return strings.Join(out, " ")
}
