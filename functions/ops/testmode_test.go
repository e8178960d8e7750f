package main

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"stampduty/shared/function/fulfillment"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// TestTestOrdersKeptOutOfTheQueue: the operators' queue lists live orders
// only unless asked for the test orders with mode=test, which lists them
// only (test-mode.md, "Test tokens"); any other mode is 400 naming mode;
// an operator may still read one test order by its documentId.
func TestTestOrdersKeptOutOfTheQueue(t *testing.T) {
	s := operating{Stack: functest.New(t, "OpsFunction", wire)}
	lives := functest.AddOrders(t, s.Env, localdb.DevOwner, 2)
	tests := functest.AddOrders(t, s.Env, stampduty.TestOwnerOf("acme"), 3)
	// queue lists every page of the queue asked for with query q.
	queue := func(t *testing.T, q string) []string {
		t.Helper()
		var got []string
		for cursor := ""; ; {
			query := q + "&pagination%5BpageSize%5D=2"
			if cursor != "" {
				query += "&pagination%5Bcursor%5D=" + url.QueryEscape(cursor)
			}
			page := functest.OK[fulfillment.QueueResponse](t, s.invoke(functest.Request("GET", "/api/ops/live-orders", query, nil, "")))
			for _, o := range page.Data {
				got = append(got, o.DocumentID)
			}
			if page.Meta.Pagination.Next == nil {
				return got
			}
			cursor = *page.Meta.Pagination.Next
		}
	}

	t.Run("the queue lists the live orders only", func(t *testing.T) {
		for _, q := range []string{"status=Pending", "status=Pending&mode=live"} {
			if got, want := queue(t, q), functest.DocumentIDs(lives); !slices.Equal(got, want) {
				t.Errorf("%s: %v, want the live orders %v", q, got, want)
			}
		}
	})
	t.Run("mode=test lists the test orders only", func(t *testing.T) {
		s.Proxy.Take()
		page := functest.OK[fulfillment.QueueResponse](t, s.invoke(functest.Request("GET", "/api/ops/live-orders", "mode=test&pagination%5BpageSize%5D=25", nil, "")))
		if got, want := s.Env.Operations(s.Proxy.Take()), "BatchGetItem:OrdersTable=1 Query:OrdersTable/index/queue-shards=16"; got != want {
			t.Errorf("a test page costs %s, want %s", got, want)
		}
		for _, o := range page.Data {
			if name, live := o.Caller, o.Livemode; name != "acme" || live {
				t.Errorf("a test order's owner = %q, want acme's", o.Caller)
			}
		}
		if got, want := queue(t, "mode=test"), functest.DocumentIDs(tests); !slices.Equal(got, want) {
			t.Errorf("mode=test: %v, want the test orders %v", got, want)
		}
	})
	t.Run("any other mode is 400 naming mode", func(t *testing.T) {
		for _, q := range []string{"mode=TEST", "mode=sandbox", "mode=", "mode=test&mode=live"} {
			resp := s.invoke(functest.Request("GET", "/api/ops/live-orders", q, nil, ""))
			if e := resp.Error(t); resp.Status != http.StatusBadRequest || !slices.Contains(e.Paths(), "mode") {
				t.Errorf("%s: %d %s, want 400 naming mode", q, resp.Status, resp.Body)
			}
		}
	})
	t.Run("a cursor of the test queue is 400 on the live queue", func(t *testing.T) {
		page := functest.OK[fulfillment.QueueResponse](t, s.invoke(functest.Request("GET", "/api/ops/live-orders", "mode=test&pagination%5BpageSize%5D=1", nil, "")))
		if page.Meta.Pagination.Next == nil {
			t.Fatal("a page of 1 of 3 test orders without a cursor")
		}
		resp := s.invoke(functest.Request("GET", "/api/ops/live-orders", "pagination%5Bcursor%5D="+url.QueryEscape(*page.Meta.Pagination.Next), nil, ""))
		if resp.Status != http.StatusBadRequest {
			t.Errorf("a test cursor on the live queue: %d, want 400", resp.Status)
		}
	})
	t.Run("an operator reads one test order by its documentId", func(t *testing.T) {
		o := order(t, s.invoke(functest.Request("GET", "/api/ops/live-orders/"+tests[0].DocumentID, "", nil, "")))
		if o.DocumentID != tests[0].DocumentID || o.Caller != "acme" || o.Livemode {
			t.Errorf("GET a test order: %s of %q", o.DocumentID, o.Caller)
		}
	})
}
