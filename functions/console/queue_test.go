package main

import (
	"net/http"
	"slices"
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestQueueParameters: the console's queue takes the operators' queue
// parameters (fulfillment.ReadQueue) and its filters state and purpose,
// and refuses any other parameter with 400 naming it.
func TestQueueParameters(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	operator := functest.StaffClaims("operator@console.local", "operator")
	get := func(query string) functest.Response {
		return s.Invoke(functest.AsStaff(functest.Request("GET", "/api/console/queue", query, nil, ""), operator))
	}
	if r := get("status=Pending&mode=live&state=Karnataka&purpose=Affidavit&pagination%5BpageSize%5D=2&pagination%5Bcursor%5D="); r.Status != http.StatusOK {
		t.Errorf("the queue's own parameters: %d %s, want 200", r.Status, r.Body)
	}
	for _, param := range []string{"page", "owner"} {
		r := get(param + "=x")
		if e := r.Error(t); r.Status != http.StatusBadRequest || !slices.Equal(e.Paths(), []string{param}) {
			t.Errorf("%s=x: %d %s, want 400 naming %s", param, r.Status, r.Body, param)
		}
	}
}
