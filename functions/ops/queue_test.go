package main

import (
	"net/http"
	"slices"
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestQueueParameters: the operators' queue takes status, mode,
// pagination[pageSize] and pagination[cursor] (fulfillment.ReadQueue), and
// refuses any other parameter with 400 naming it, the console's filters
// state and purpose too.
func TestQueueParameters(t *testing.T) {
	s := operating{Stack: functest.New(t, "OpsFunction", wire)}
	get := func(query string) functest.Response {
		return s.invoke(functest.Request("GET", "/api/ops/live-orders", query, nil, ""))
	}
	if r := get("status=Pending&mode=live&pagination%5BpageSize%5D=2&pagination%5Bcursor%5D="); r.Status != http.StatusOK {
		t.Errorf("the queue's own parameters: %d %s, want 200", r.Status, r.Body)
	}
	for _, param := range []string{"state", "purpose", "page"} {
		r := get(param + "=x")
		if e := r.Error(t); r.Status != http.StatusBadRequest || !slices.Equal(e.Paths(), []string{param}) {
			t.Errorf("%s=x: %d %s, want 400 naming %s", param, r.Status, r.Body, param)
		}
	}
}
