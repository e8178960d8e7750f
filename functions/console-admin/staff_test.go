package main

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localcognito"
)

// cognitoCalls is a proxy in front of a local Cognito that records the
// admin API's operations sent through it (the X-Amz-Target header, as
// "AdminGetUser"), so a test sees what the function called.
type cognitoCalls struct {
	URL string
	mu  sync.Mutex
	ops []string
}

func newCognitoCalls(t *testing.T, endpoint string) *cognitoCalls {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c := &cognitoCalls{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		c.mu.Lock()
		c.ops = append(c.ops, op)
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// Take returns the operations recorded since the last Take.
func (c *cognitoCalls) Take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops := c.ops
	c.ops = nil
	return ops
}

// staffPassword is the seeded accounts' password.
const staffPassword = "Staff-password-1"

// TestStaff drives the staff routes against a local Cognito (cognito-local
// with the template's pool), as an admin: the list, an invitation, a role
// change, disable and enable, and each refusal of the workflow with its
// status and message (the last enabled admin cannot be demoted or
// disabled). An operator is 403 and a request without a staff member's
// claims 401, both before any Cognito call. The calls made are exactly the
// grants (AdminUserGlobalSignOut aside: the local Cognito does not serve
// it), and no log line holds an email.
func TestStaff(t *testing.T) {
	ctx := context.Background()
	tp := localcognito.NewTestPool(t)
	calls := newCognitoCalls(t, tp.Endpoint)
	for email, group := range map[string]string{"boss@example.com": "admin", "olga@example.com": "operator"} {
		if err := localcognito.CreateUser(ctx, tp.Client, tp.PoolID, email, staffPassword, group); err != nil {
			t.Fatal(err)
		}
	}
	s := functest.New(t, "ConsoleAdminFunction", wire)
	s.Env.Cognito, s.Env.Names["StaffUserPool"] = calls.URL, tp.PoolID
	s.Restart(wire)

	admin := functest.StaffClaims("boss@example.com", "admin")
	send := func(claims map[string]string, method, path, body string) functest.Response {
		t.Helper()
		var h map[string]string
		if body != "" {
			h = map[string]string{"content-type": "application/json"}
		}
		ev := functest.Request(method, path, "", h, body)
		if claims != nil {
			ev = functest.AsStaff(ev, claims)
		}
		return s.Invoke(ev)
	}
	list := func(t *testing.T) map[string]member {
		t.Helper()
		got := functest.OK[staffResponse](t, send(admin, http.MethodGet, "/api/console/staff", ""))
		out := map[string]member{}
		for _, m := range got.Data {
			out[m.Email] = m
		}
		return out
	}
	// refused checks r's status and that its message says want.
	refused := func(t *testing.T, r functest.Response, status int, want string) {
		t.Helper()
		if r.Status != status {
			t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
		}
		if e := r.Error(t); !strings.Contains(e.Error.Message, want) {
			t.Errorf("message %q, want it to say %q", e.Error.Message, want)
		}
	}
	used := map[string]bool{}
	take := func() []string {
		ops := calls.Take()
		for _, op := range ops {
			used[op] = true
		}
		return ops
	}
	// costs checks the Cognito calls a route made: what the workflow's
	// doc says it costs.
	costs := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("Cognito calls %v, want %v", got, want)
		}
	}
	calls.Take()

	t.Run("AnAdminListsTheStaff", func(t *testing.T) {
		got := list(t)
		costs(t, take(), "ListUsers", "ListUsersInGroup", "ListUsersInGroup")
		if got, want := slices.Sorted(maps.Keys(got)), []string{"boss@example.com", "olga@example.com"}; !slices.Equal(got, want) {
			t.Fatalf("staff %v, want %v", got, want)
		}
		if b := got["boss@example.com"]; b.Role != "admin" || !b.Enabled || b.Status != "CONFIRMED" || b.CreatedAt.IsZero() {
			t.Errorf("boss %+v, want an enabled, confirmed admin", b)
		}
		if o := got["olga@example.com"]; o.Role != "operator" {
			t.Errorf("olga %+v, want an operator", o)
		}
	})

	t.Run("AnInvitedPersonIsListedWithTheRole", func(t *testing.T) {
		r := send(admin, http.MethodPost, "/api/console/staff", `{"email":"  Ravi@Example.com ","role":"operator"}`)
		costs(t, take(), "AdminCreateUser", "AdminAddUserToGroup")
		if r.Status != http.StatusCreated {
			t.Fatalf("status %d, want 201: %s", r.Status, r.Body)
		}
		var got memberResponse
		if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
			t.Fatal(err)
		}
		if m := got.Data; m.Email != "ravi@example.com" || m.Role != "operator" || !m.Enabled || m.Status != "FORCE_CHANGE_PASSWORD" || m.SignedOut != nil {
			t.Errorf("invited %+v, want ravi@example.com, an enabled operator waiting for the first sign-in", m)
		}
		if m := list(t)["ravi@example.com"]; m.Role != "operator" {
			t.Errorf("listed %+v, want an operator", m)
		}
		take()
	})

	t.Run("InvitingAnEmailTwiceIsAConflict", func(t *testing.T) {
		refused(t, send(admin, http.MethodPost, "/api/console/staff", `{"email":"ravi@example.com","role":"admin"}`), http.StatusConflict,
			"a staff account with this email exists already")
		take()
	})

	t.Run("ARoleChangeIsListed", func(t *testing.T) {
		r := send(admin, http.MethodPost, "/api/console/staff/role", `{"email":"ravi@example.com","role":"admin"}`)
		costs(t, take(), "AdminGetUser", "AdminListGroupsForUser", "AdminAddUserToGroup", "AdminRemoveUserFromGroup")
		got := functest.OK[memberResponse](t, r)
		if got.Data.Role != "admin" || got.Data.SignedOut == nil || *got.Data.SignedOut {
			t.Errorf("changed %+v, want an admin, not signed out (locally)", got.Data)
		}
		r = send(admin, http.MethodPost, "/api/console/staff/role", `{"email":"ravi@example.com","role":"operator"}`)
		take()
		if got := functest.OK[memberResponse](t, r); got.Data.Role != "operator" {
			t.Errorf("changed %+v, want an operator again", got.Data)
		}
		if m := list(t)["ravi@example.com"]; m.Role != "operator" {
			t.Errorf("listed %+v, want an operator", m)
		}
	})

	t.Run("DisableThenEnable", func(t *testing.T) {
		take()
		r := send(admin, http.MethodPost, "/api/console/staff/disable", `{"email":"ravi@example.com"}`)
		costs(t, take(), "AdminGetUser", "AdminListGroupsForUser", "AdminDisableUser")
		if got := functest.OK[memberResponse](t, r); got.Data.Enabled || got.Data.Role != "operator" {
			t.Errorf("disabled %+v, want disabled, keeping the role", got.Data)
		}
		if m := list(t)["ravi@example.com"]; m.Enabled {
			t.Errorf("listed %+v, want disabled", m)
		}
		take()
		r = send(admin, http.MethodPost, "/api/console/staff/enable", `{"email":"ravi@example.com"}`)
		costs(t, take(), "AdminGetUser", "AdminListGroupsForUser", "AdminEnableUser")
		if got := functest.OK[memberResponse](t, r); !got.Data.Enabled || got.Data.Role != "operator" {
			t.Errorf("enabled %+v, want enabled, an operator", got.Data)
		}
	})

	t.Run("TheLastAdminIsNeitherDemotedNorDisabled", func(t *testing.T) {
		refused(t, send(admin, http.MethodPost, "/api/console/staff/role", `{"email":"boss@example.com","role":"operator"}`), http.StatusConflict,
			"cannot demote boss@example.com: they are the last enabled admin; make another person admin first")
		refused(t, send(admin, http.MethodPost, "/api/console/staff/disable", `{"email":"boss@example.com"}`), http.StatusConflict,
			"cannot disable boss@example.com: they are the last enabled admin")
		take()
		if b := list(t)["boss@example.com"]; b.Role != "admin" || !b.Enabled {
			t.Errorf("boss %+v, want still an enabled admin", b)
		}
	})

	t.Run("AnUnknownEmailIsNotFound", func(t *testing.T) {
		refused(t, send(admin, http.MethodPost, "/api/console/staff/disable", `{"email":"nobody@example.com"}`), http.StatusNotFound,
			"no staff account has this email")
		take()
	})

	t.Run("ABadBodyIsRefusedBeforeCognito", func(t *testing.T) {
		for _, tc := range []struct {
			path, body, field, want string
		}{
			{"/api/console/staff", `{"email":"ravi","role":"operator"}`, "email", "email must be an address such as name@example.com"},
			{"/api/console/staff", `{"email":"x@localhost","role":"operator"}`, "email", "email's domain must have a dot"},
			{"/api/console/staff", `{"email":"new@example.com","role":"none"}`, "role", "role must be admin or operator"},
			{"/api/console/staff", `{"email":"new@example.com"}`, "role", "role is required"},
			{"/api/console/staff/role", `{"email":"ravi@example.com","role":"boss"}`, "role", "role must be admin, operator or none"},
			{"/api/console/staff/disable", `{"email":"ravi@example.com","role":"admin"}`, "role", "role is not a field of this request"},
			{"/api/console/staff/enable", `{"email":7}`, "email", "email must be a string"},
			{"/api/console/staff/enable", `{}`, "email", "email is required"},
		} {
			calls.Take()
			r := send(admin, http.MethodPost, tc.path, tc.body)
			refused(t, r, http.StatusBadRequest, tc.want)
			if e := r.Error(t); !slices.Contains(e.Paths(), tc.field) {
				t.Errorf("%s %s: fields %v, want %s", tc.path, tc.body, e.Paths(), tc.field)
			}
			if got := calls.Take(); len(got) != 0 {
				t.Errorf("%s %s: Cognito called (%v); want nothing sent", tc.path, tc.body, got)
			}
		}
	})

	for _, tc := range []struct {
		name   string
		claims map[string]string
		status int
	}{
		{"AnOperatorIsForbidden", functest.StaffClaims("olga@example.com", "operator"), http.StatusForbidden},
		{"NoStaffClaimsIsUnauthorized", nil, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.Take()
			for _, rt := range []struct{ method, path, body string }{
				{http.MethodGet, "/api/console/staff", ""},
				{http.MethodPost, "/api/console/staff", `{"email":"eve@example.com","role":"admin"}`},
				{http.MethodPost, "/api/console/staff/role", `{"email":"olga@example.com","role":"admin"}`},
				{http.MethodPost, "/api/console/staff/disable", `{"email":"boss@example.com"}`},
				{http.MethodPost, "/api/console/staff/enable", `{"email":"boss@example.com"}`},
			} {
				if r := send(tc.claims, rt.method, rt.path, rt.body); r.Status != tc.status {
					t.Errorf("%s %s: status %d, want %d: %s", rt.method, rt.path, r.Status, tc.status, r.Body)
				}
			}
			if got := calls.Take(); len(got) != 0 {
				t.Errorf("Cognito called (%v) before the role was checked; want nothing sent", got)
			}
		})
	}

	t.Run("TheCallsAreTheGrants", func(t *testing.T) {
		granted, err := s.Function.CognitoGrants()
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(granted)); !slices.Equal(got, []string{"StaffUserPool"}) {
			t.Fatalf("Cognito actions granted on %v, want on StaffUserPool only", got)
		}
		// The local Cognito does not serve AdminUserGlobalSignOut, so the
		// function leaves it out there (staff.Options.SkipGlobalSignOut);
		// on AWS a demotion and a disable call it.
		want := maps.Clone(used)
		want["AdminUserGlobalSignOut"] = true
		if got, want := slices.Sorted(maps.Keys(granted["StaffUserPool"])), slices.Sorted(maps.Keys(want)); !slices.Equal(got, want) {
			t.Errorf("granted %v\n   used %v (with AdminUserGlobalSignOut)", got, want)
		}
	})

	t.Run("AFaultsLogLineHoldsNoEmail", func(t *testing.T) {
		// A pool that does not exist: Cognito's error, a fault (500),
		// whose cause the request's log line holds; the workflow names
		// the person in it.
		s.Env.Names["StaffUserPool"] = "us-east-1_NoSuchPool"
		s.Restart(wire)
		r := send(admin, http.MethodPost, "/api/console/staff", `{"email":"ravi.rao@example.com","role":"operator"}`)
		if r.Status != http.StatusInternalServerError {
			t.Fatalf("status %d, want 500: %s", r.Status, r.Body)
		}
		if !strings.Contains(s.Logs.String(), `"cause"`) {
			t.Fatalf("log %s: want the fault's cause", s.Logs.String())
		}
	})

	if logs := s.Logs.String(); strings.Contains(logs, "@") {
		t.Errorf("the log holds an email:\n%s", logs)
	}
}
