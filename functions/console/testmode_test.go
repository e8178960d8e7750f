package main

import (
	"net/http"
	"slices"
	"testing"

	"stampduty/shared/function/fulfillment"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// TestConsoleTestOrders: the console's queue and its counts hold live
// orders only unless asked for the test orders (mode=test), which they
// then hold only (test-mode.md, "Test tokens"); any other mode is 400
// naming mode; an operator may still open a test order.
func TestConsoleTestOrders(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	lives := functest.AddOrders(t, s.Env, localdb.DevOwner, 2)
	tests := functest.AddOrders(t, s.Env, stampduty.TestOwnerOf("acme"), 3)
	operator := functest.StaffClaims("operator@console.local", "operator")
	get := func(path, query string) functest.Response {
		t.Helper()
		return s.Invoke(functest.AsStaff(functest.Request("GET", path, query, nil, ""), operator))
	}
	listed := func(t *testing.T, query string) []string {
		t.Helper()
		var got []string
		for _, o := range functest.OK[fulfillment.QueueResponse](t, get("/api/console/queue", query)).Data {
			got = append(got, o.DocumentID)
		}
		return got
	}

	t.Run("the queue holds the live orders only", func(t *testing.T) {
		if got, want := listed(t, "status=Pending"), functest.DocumentIDs(lives); !slices.Equal(got, want) {
			t.Errorf("queue %v, want the live orders %v", got, want)
		}
	})
	t.Run("mode=test holds the test orders only", func(t *testing.T) {
		if got, want := listed(t, "status=Pending&mode=test"), functest.DocumentIDs(tests); !slices.Equal(got, want) {
			t.Errorf("queue %v, want the test orders %v", got, want)
		}
	})
	t.Run("the live counts leave test orders out", func(t *testing.T) {
		for query, want := range map[string]int{"": len(lives), "mode=live": len(lives), "mode=test": len(tests)} {
			if got := functest.OK[countsResponse](t, get("/api/console/queue/counts", query)).Data[stampduty.StatusPending]; got != want {
				t.Errorf("counts?%s: Pending %d, want %d", query, got, want)
			}
		}
	})
	t.Run("any other mode is 400 naming mode", func(t *testing.T) {
		for _, c := range []struct{ path, query string }{
			{"/api/console/queue", "mode=Test"}, {"/api/console/queue", "mode="},
			{"/api/console/queue/counts", "mode=all"}, {"/api/console/queue/counts", "mode=test&mode=test"},
		} {
			r := get(c.path, c.query)
			if e := r.Error(t); r.Status != http.StatusBadRequest || !slices.Contains(e.Paths(), "mode") {
				t.Errorf("%s?%s: %d %s, want 400 naming mode", c.path, c.query, r.Status, r.Body)
			}
		}
	})
	t.Run("an operator opens a test order", func(t *testing.T) {
		r := get("/api/console/orders/"+tests[1].DocumentID, "")
		if r.Status != http.StatusOK {
			t.Errorf("GET a test order: %d %s", r.Status, r.Body)
		}
	})
}
