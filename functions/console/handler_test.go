package main

import (
	"net/http"
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestMe: GET /api/console/me answers who is signed in (their email) and
// their groups, from the claims API Gateway's JWT authorizer passes; a
// request without a staff member's id-token claims is 401 in the
// envelope; the log line names the person by their opaque sub, never
// their email.
func TestMe(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	me := func(claims map[string]string) functest.Response {
		t.Helper()
		ev := functest.Request(http.MethodGet, "/api/console/me", "", map[string]string{"authorization": "Bearer x.y.z"}, "")
		if claims != nil {
			ev = functest.AsStaff(ev, claims)
		}
		return s.Invoke(ev)
	}
	for _, tc := range []struct {
		name   string
		claims map[string]string
		want   string
	}{
		{"AnAdmin", functest.StaffClaims("admin@console.local", "admin"), `{"data":{"email":"admin@console.local","groups":["admin"]},"meta":{}}`},
		{"AnOperator", functest.StaffClaims("operator@console.local", "operator"), `{"data":{"email":"operator@console.local","groups":["operator"]},"meta":{}}`},
		{"BothGroups", functest.StaffClaims("lead@console.local", "admin", "operator"), `{"data":{"email":"lead@console.local","groups":["admin","operator"]},"meta":{}}`},
		{"NeitherGroup", functest.StaffClaims("new@console.local"), `{"data":{"email":"new@console.local","groups":[]},"meta":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := me(tc.claims)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if got, want := r.Body, tc.want; got != want {
				t.Errorf("body\n got %s\nwant %s", got, want)
			}
		})
	}

	access := functest.StaffClaims("admin@console.local", "admin")
	access["token_use"] = "access"
	delete(access, "email")
	for _, tc := range []struct {
		name   string
		claims map[string]string
	}{
		{"NoAuthorizer", nil},     // invoked directly, not through the JWT authorizer
		{"AnAccessToken", access}, // carries no email: the console sends the id token
		{"NoSub", func() map[string]string {
			c := functest.StaffClaims("x@console.local", "admin")
			delete(c, "sub")
			return c
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := me(tc.claims)
			if got, want := r.Status, http.StatusUnauthorized; got != want {
				t.Fatalf("status %d, want %d: %s", got, want, r.Body)
			}
			if e := r.Error(t); e.Error.Name != "UnauthorizedError" || e.Error.Message != "Missing or invalid credentials" {
				t.Errorf("error %s %q, want UnauthorizedError %q", e.Error.Name, e.Error.Message, "Missing or invalid credentials")
			}
		})
	}

	t.Run("LogNamesTheSubNotTheEmail", func(t *testing.T) {
		before := len(s.Logs.String())
		me(functest.StaffClaims("admin@console.local", "admin"))
		logs := s.Logs.String()[before:]
		if strings.Contains(logs, "admin@console.local") || !strings.Contains(logs, "staff 0b1e7d3c-5f2a-4c8e-9d6b-2a7f1c4e8b90") {
			t.Errorf("log %s: want the staff member's sub and not their email", logs)
		}
	})

	s.CheckEvents(t, map[string]int{"console-me": http.StatusOK})
	s.CheckRoutes() // the grants are checked by TestConsoleOrders
}
