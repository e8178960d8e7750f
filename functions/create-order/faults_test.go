package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// TestDynamoDBFaults: with DynamoDB unreachable, hanging or throttling, a
// create answers 503 ServiceUnavailableError with Retry-After within 10
// seconds, showing no internals, and the same warm instance works again as
// soon as DynamoDB does.
func TestDynamoDBFaults(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	create := func() functest.Response {
		return s.Invoke(functest.Request("POST", "/api/live-orders", "", functest.DevHeaders, body(nil)))
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

// lostAnswers are the two ways DynamoDB's answer to an applied write can be
// lost: the connection drops after the request was forwarded, or the answer
// comes after the SDK's attempt timeout. Either way the SDK retries.
var lostAnswers = []struct {
	name string
	f    storetest.Fault
}{
	{"DroppedAnswer", storetest.Fault{Drop: true}},
	{"DelayedAnswer", storetest.Fault{Delay: 2 * store.AttemptTimeout}},
}

// failFirstPut makes the first PutItem on table that s's proxy sees meet f,
// and lets every other call through.
func failFirstPut(s *functest.Stack, table string, f storetest.Fault) {
	var puts atomic.Int64
	s.Proxy.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
		if c.Operation == "PutItem" && c.Table == table && puts.Add(1) == 1 {
			return &f
		}
		return nil
	})
}

// TestLostAnswerStoresOneOrder: when the orders table applies a create's
// PutItem but the answer is lost (the connection drops, or the answer comes
// after the attempt's timeout) and the SDK retries, one POST still stores
// one order, with or without an Idempotency-Key.
func TestLostAnswerStoresOneOrder(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	table := s.Env.Table("OrdersTable")
	orders := s.Env.DB().Orders(table)
	for _, fault := range lostAnswers {
		t.Run(fault.name, func(t *testing.T) {
			for _, tc := range []struct{ name, key string }{
				{"WithoutKey", ""}, {"WithKey", "key-lost-answer-" + fault.name},
			} {
				t.Run(tc.name, func(t *testing.T) {
					headers := withKey(tc.key)
					before := listOrders(t, s)
					failFirstPut(s, table, fault.f)
					r := s.Invoke(functest.Request("POST", "/api/live-orders", "", headers, body(map[string]any{"firstPartyName": "Lost " + fault.name + " " + tc.name})))
					s.Proxy.SetFault(nil)
					doc := orderID(t, r)
					if got, want := listOrders(t, s)-before, 1; got != want {
						t.Errorf("%d orders stored, want %d", got, want)
					}
					page, _, err := orders.Page(context.Background(), localdb.DevOwner, 1, 100)
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, o := range page {
						if o.DocumentID == doc {
							n++
						}
					}
					if got, want := n, 1; got != want {
						t.Errorf("order %s listed %d times, want %d", doc, got, want)
					}
				})
			}
		})
	}
}

// TestLostKeyClaimAnswer: when the idempotency table applies a request's
// claim of its key but the answer is lost and the SDK retries, the request
// recognises its own claim and creates its order, instead of waiting for
// itself as for another request holding the key and answering 409.
func TestLostKeyClaimAnswer(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	table := s.Env.Table("IdempotencyTable")
	for _, tc := range lostAnswers {
		t.Run(tc.name, func(t *testing.T) {
			headers := withKey("key-lost-claim-" + tc.name)
			before := listOrders(t, s)
			failFirstPut(s, table, tc.f)
			start := time.Now()
			r := s.Invoke(functest.Request("POST", "/api/live-orders", "", headers, body(nil)))
			s.Proxy.SetFault(nil)
			t.Logf("status %d after %v", r.Status, time.Since(start).Round(time.Millisecond))
			if r.Status != 200 {
				t.Fatalf("status %d, want 200: %s", r.Status, r.Body)
			}
			if got, want := listOrders(t, s)-before, 1; got != want {
				t.Errorf("%d orders stored, want %d", got, want)
			}
		})
	}
}
