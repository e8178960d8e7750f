package main

import (
	"net/http"
	"testing"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// TestCallers: GET /api/console/callers lists every caller with its token
// and order counts for an admin; an operator is 403 and a request without
// a staff member's claims 401, both before any DynamoDB call.
func TestCallers(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	functest.AddOrders(t, s.Env, localdb.DevOwner, 2)
	list := func(claims map[string]string) functest.Response {
		t.Helper()
		ev := functest.Request(http.MethodGet, "/api/console/callers", "", nil, "")
		if claims != nil {
			ev = functest.AsStaff(ev, claims)
		}
		return s.Invoke(ev)
	}

	t.Run("AnAdminSeesEveryCallerWithItsCounts", func(t *testing.T) {
		got := functest.OK[callersResponse](t, list(functest.StaffClaims("admin@console.local", "admin")))
		var dev *caller
		for i := range got.Data {
			if got.Data[i].Owner == localdb.DevOwner {
				dev = &got.Data[i]
			}
		}
		if dev == nil {
			t.Fatalf("callers %+v: want %s among them", got.Data, localdb.DevOwner)
		}
		if got, want := dev.Orders, 2; got != want {
			t.Errorf("orders = %d; want %d", got, want)
		}
		if dev.ActiveTokens < 1 {
			t.Errorf("active tokens = %d; want the dev token counted", dev.ActiveTokens)
		}
	})

	for _, tc := range []struct {
		name   string
		claims map[string]string
		status int
	}{
		{"AnOperatorIsForbidden", functest.StaffClaims("operator@console.local", "operator"), http.StatusForbidden},
		{"NeitherGroupIsForbidden", functest.StaffClaims("new@console.local"), http.StatusForbidden},
		{"NoStaffClaimsIsUnauthorized", nil, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Proxy.Take()
			r := list(tc.claims)
			if got, want := r.Status, tc.status; got != want {
				t.Fatalf("status %d, want %d: %s", got, want, r.Body)
			}
			if got := s.Proxy.Take(); len(got) != 0 {
				t.Errorf("%d DynamoDB calls before the role was checked; want none", len(got))
			}
		})
	}
	s.CheckRoutes()
}
