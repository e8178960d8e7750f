package main

import (
	"strings"
	"testing"
	"time"

	"stampduty/shared/functest"
	"stampduty/shared/store/storetest"
)

// TestDynamoDBFaults: with DynamoDB unreachable, hanging or throttling, a
// create answers 503 ServiceUnavailableError with Retry-After within 10
// seconds, showing no internals, and the same warm instance works again as
// soon as DynamoDB does.
func TestDynamoDBFaults(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	create := func() functest.Response {
		return s.Invoke(functest.Request("POST", "/api/live-orders", "", bearer, body(nil)))
	}
	if r := create(); r.Status != 200 { // warm: token and article cached, ids reserved
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	every := func(f storetest.Fault) func(storetest.ProxyCall) *storetest.Fault {
		return func(storetest.ProxyCall) *storetest.Fault { return &f }
	}
	for _, tc := range []struct {
		name  string
		start func()
	}{
		{"ConnectionRefused", func() { s.Proxy.Refuse(true) }},
		{"Timeout", func() { s.Proxy.SetFault(every(storetest.Fault{Hang: true})) }},
		{"ProvisionedThroughputExceeded", func() {
			s.Proxy.SetFault(every(storetest.Fault{Status: 400, Type: "ProvisionedThroughputExceededException"}))
		}},
		{"ThrottlingException", func() { s.Proxy.SetFault(every(storetest.Fault{Status: 400, Type: "ThrottlingException"})) }},
		{"RequestLimitExceeded", func() { s.Proxy.SetFault(every(storetest.Fault{Status: 400, Type: "RequestLimitExceeded"})) }},
		{"InternalServerError", func() { s.Proxy.SetFault(every(storetest.Fault{Status: 500, Type: "InternalServerError"})) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := listOrders(t, s)
			tc.start()
			start := time.Now()
			r := create()
			took := time.Since(start)
			s.Proxy.Refuse(false)
			s.Proxy.SetFault(nil)
			t.Logf("%s: %d after %v", tc.name, r.Status, took.Round(time.Millisecond))
			if r.Status != 503 {
				t.Fatalf("status %d, want 503: %s", r.Status, r.Body)
			}
			if took >= 10*time.Second {
				t.Errorf("503 after %v, want under 10 s", took)
			}
			e := r.Error(t)
			if e.Error.Name != "ServiceUnavailableError" || e.Error.Message != "Service Unavailable" || r.Headers["Retry-After"] == "" {
				t.Errorf("error %+v, Retry-After %q", e.Error, r.Headers["Retry-After"])
			}
			for _, leak := range []string{"Table", "dynamodb", "127.0.0.1", "Exception", "injected", "goroutine", ".go:"} {
				if strings.Contains(r.Body, leak) {
					t.Errorf("body shows %q: %s", leak, r.Body)
				}
			}
			if r := create(); r.Status != 200 {
				t.Errorf("after recovery: status %d: %s", r.Status, r.Body)
			}
			if after := listOrders(t, s); after != before+1 {
				t.Errorf("%d orders stored, want only the recovery's one", after-before)
			}
		})
	}
}
