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

// staffRoutes is TestStaff's function, its local Cognito behind the
// recording proxy, and the Cognito operations its routes used so far.
type staffRoutes struct {
	s     *functest.Stack
	calls *cognitoCalls
	admin map[string]string
	used  map[string]bool
}

func newStaffRoutes(t *testing.T) *staffRoutes {
	t.Helper()
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
	return &staffRoutes{s: s, calls: calls, admin: functest.StaffClaims("boss@example.com", "admin"), used: map[string]bool{}}
}

// send invokes the function with a request of the staff member of
// claims (none when nil).
func (e *staffRoutes) send(claims map[string]string, method, path, body string) functest.Response {
	var h map[string]string
	if body != "" {
		h = map[string]string{"content-type": "application/json"}
	}
	ev := functest.Request(method, path, "", h, body)
	if claims != nil {
		ev = functest.AsStaff(ev, claims)
	}
	return e.s.Invoke(ev)
}

// list returns the staff as the admin's list answers them, by email.
func (e *staffRoutes) list(t *testing.T) map[string]member {
	t.Helper()
	got := functest.OK[staffResponse](t, e.send(e.admin, http.MethodGet, "/api/console/staff", ""))
	out := map[string]member{}
	for _, m := range got.Data {
		out[m.Email] = m
	}
	return out
}

// refused checks r's status and that its message says want.
func (e *staffRoutes) refused(t *testing.T, r functest.Response, status int, want string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if er := r.Error(t); !strings.Contains(er.Error.Message, want) {
		t.Errorf("message %q, want it to say %q", er.Error.Message, want)
	}
}

// take returns the Cognito calls made since the last take, and counts
// them as used.
func (e *staffRoutes) take() []string {
	ops := e.calls.Take()
	for _, op := range ops {
		e.used[op] = true
	}
	return ops
}

// costs checks the Cognito calls a route made: what the workflow's
// doc says it costs.
func (e *staffRoutes) costs(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("Cognito calls %v, want %v", got, want)
	}
}

// TestStaff drives the staff routes against a local Cognito (cognito-local
// with the template's pool), as an admin: the list, an invitation, a role
// change, disable and enable, and each refusal of the workflow with its
// status and message (the last enabled admin cannot be demoted or
// disabled). An operator is 403 and a request without a staff member's
// claims 401, both before any Cognito call. The calls made are exactly the
// grants (AdminUserGlobalSignOut aside: the local Cognito does not serve
// it), and no log line holds an email.
func TestStaff(t *testing.T) {
	e := newStaffRoutes(t)
	e.calls.Take()

	t.Run("AnAdminListsTheStaff", e.adminListsTheStaff)
	t.Run("AnInvitedPersonIsListedWithTheRole", e.invitedPersonIsListedWithTheRole)
	t.Run("InvitingAnEmailTwiceIsAConflict", e.invitingAnEmailTwiceIsAConflict)
	t.Run("ARoleChangeIsListed", e.roleChangeIsListed)
	t.Run("DisableThenEnable", e.disableThenEnable)
	t.Run("TheLastAdminIsNeitherDemotedNorDisabled", e.lastAdminIsNeitherDemotedNorDisabled)
	t.Run("AnUnknownEmailIsNotFound", e.unknownEmailIsNotFound)
	t.Run("ABadBodyIsRefusedBeforeCognito", e.badBodyIsRefusedBeforeCognito)

	for _, tc := range []struct {
		name   string
		claims map[string]string
		status int
	}{
		{"AnOperatorIsForbidden", functest.StaffClaims("olga@example.com", "operator"), http.StatusForbidden},
		{"NoStaffClaimsIsUnauthorized", nil, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.calls.Take()
			for _, rt := range []struct{ method, path, body string }{
				{http.MethodGet, "/api/console/staff", ""},
				{http.MethodPost, "/api/console/staff", `{"email":"eve@example.com","role":"admin"}`},
				{http.MethodPost, "/api/console/staff/role", `{"email":"olga@example.com","role":"admin"}`},
				{http.MethodPost, "/api/console/staff/disable", `{"email":"boss@example.com"}`},
				{http.MethodPost, "/api/console/staff/enable", `{"email":"boss@example.com"}`},
			} {
				if r := e.send(tc.claims, rt.method, rt.path, rt.body); r.Status != tc.status {
					t.Errorf("%s %s: status %d, want %d: %s", rt.method, rt.path, r.Status, tc.status, r.Body)
				}
			}
			if got := e.calls.Take(); len(got) != 0 {
				t.Errorf("Cognito called (%v) before the role was checked; want nothing sent", got)
			}
		})
	}

	t.Run("TheCallsAreTheGrants", e.callsAreTheGrants)
	t.Run("AFaultsLogLineHoldsNoEmail", e.faultsLogLineHoldsNoEmail)

	if logs := e.s.Logs.String(); strings.Contains(logs, "@") {
		t.Errorf("the log holds an email:\n%s", logs)
	}
}

func (e *staffRoutes) adminListsTheStaff(t *testing.T) {
	got := e.list(t)
	e.costs(t, e.take(), "ListUsers", "ListUsersInGroup", "ListUsersInGroup")
	if got, want := slices.Sorted(maps.Keys(got)), []string{"boss@example.com", "olga@example.com"}; !slices.Equal(got, want) {
		t.Fatalf("staff %v, want %v", got, want)
	}
	if b := got["boss@example.com"]; b.Role != "admin" || !b.Enabled || b.Status != "CONFIRMED" || b.CreatedAt.IsZero() {
		t.Errorf("boss %+v, want an enabled, confirmed admin", b)
	}
	if o := got["olga@example.com"]; o.Role != "operator" {
		t.Errorf("olga %+v, want an operator", o)
	}
}

func (e *staffRoutes) invitedPersonIsListedWithTheRole(t *testing.T) {
	r := e.send(e.admin, http.MethodPost, "/api/console/staff", `{"email":"  Ravi@Example.com ","role":"operator"}`)
	e.costs(t, e.take(), "AdminCreateUser", "AdminAddUserToGroup")
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
	if m := e.list(t)["ravi@example.com"]; m.Role != "operator" {
		t.Errorf("listed %+v, want an operator", m)
	}
	e.take()
}

func (e *staffRoutes) invitingAnEmailTwiceIsAConflict(t *testing.T) {
	e.refused(t, e.send(e.admin, http.MethodPost, "/api/console/staff", `{"email":"ravi@example.com","role":"admin"}`), http.StatusConflict,
		"a staff account with this email exists already")
	e.take()
}

func (e *staffRoutes) roleChangeIsListed(t *testing.T) {
	r := e.send(e.admin, http.MethodPost, "/api/console/staff/role", `{"email":"ravi@example.com","role":"admin"}`)
	e.costs(t, e.take(), "AdminGetUser", "AdminListGroupsForUser", "AdminAddUserToGroup", "AdminRemoveUserFromGroup")
	got := functest.OK[memberResponse](t, r)
	if got.Data.Role != "admin" || got.Data.SignedOut == nil || *got.Data.SignedOut {
		t.Errorf("changed %+v, want an admin, not signed out (locally)", got.Data)
	}
	r = e.send(e.admin, http.MethodPost, "/api/console/staff/role", `{"email":"ravi@example.com","role":"operator"}`)
	e.take()
	if got := functest.OK[memberResponse](t, r); got.Data.Role != "operator" {
		t.Errorf("changed %+v, want an operator again", got.Data)
	}
	if m := e.list(t)["ravi@example.com"]; m.Role != "operator" {
		t.Errorf("listed %+v, want an operator", m)
	}
}

func (e *staffRoutes) disableThenEnable(t *testing.T) {
	e.take()
	r := e.send(e.admin, http.MethodPost, "/api/console/staff/disable", `{"email":"ravi@example.com"}`)
	e.costs(t, e.take(), "AdminGetUser", "AdminListGroupsForUser", "AdminDisableUser")
	if got := functest.OK[memberResponse](t, r); got.Data.Enabled || got.Data.Role != "operator" {
		t.Errorf("disabled %+v, want disabled, keeping the role", got.Data)
	}
	if m := e.list(t)["ravi@example.com"]; m.Enabled {
		t.Errorf("listed %+v, want disabled", m)
	}
	e.take()
	r = e.send(e.admin, http.MethodPost, "/api/console/staff/enable", `{"email":"ravi@example.com"}`)
	e.costs(t, e.take(), "AdminGetUser", "AdminListGroupsForUser", "AdminEnableUser")
	if got := functest.OK[memberResponse](t, r); !got.Data.Enabled || got.Data.Role != "operator" {
		t.Errorf("enabled %+v, want enabled, an operator", got.Data)
	}
}

func (e *staffRoutes) lastAdminIsNeitherDemotedNorDisabled(t *testing.T) {
	e.refused(t, e.send(e.admin, http.MethodPost, "/api/console/staff/role", `{"email":"boss@example.com","role":"operator"}`), http.StatusConflict,
		"cannot demote boss@example.com: they are the last enabled admin; make another person admin first")
	e.refused(t, e.send(e.admin, http.MethodPost, "/api/console/staff/disable", `{"email":"boss@example.com"}`), http.StatusConflict,
		"cannot disable boss@example.com: they are the last enabled admin")
	e.take()
	if b := e.list(t)["boss@example.com"]; b.Role != "admin" || !b.Enabled {
		t.Errorf("boss %+v, want still an enabled admin", b)
	}
}

func (e *staffRoutes) unknownEmailIsNotFound(t *testing.T) {
	e.refused(t, e.send(e.admin, http.MethodPost, "/api/console/staff/disable", `{"email":"nobody@example.com"}`), http.StatusNotFound,
		"no staff account has this email")
	e.take()
}

func (e *staffRoutes) badBodyIsRefusedBeforeCognito(t *testing.T) {
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
		e.calls.Take()
		r := e.send(e.admin, http.MethodPost, tc.path, tc.body)
		e.refused(t, r, http.StatusBadRequest, tc.want)
		if er := r.Error(t); !slices.Contains(er.Paths(), tc.field) {
			t.Errorf("%s %s: fields %v, want %s", tc.path, tc.body, er.Paths(), tc.field)
		}
		if got := e.calls.Take(); len(got) != 0 {
			t.Errorf("%s %s: Cognito called (%v); want nothing sent", tc.path, tc.body, got)
		}
	}
}

func (e *staffRoutes) callsAreTheGrants(t *testing.T) {
	granted, err := e.s.Function.CognitoGrants()
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(granted)); !slices.Equal(got, []string{"StaffUserPool"}) {
		t.Fatalf("Cognito actions granted on %v, want on StaffUserPool only", got)
	}
	// The local Cognito does not serve AdminUserGlobalSignOut, so the
	// function leaves it out there (staff.Options.SkipGlobalSignOut);
	// on AWS a demotion and a disable call it.
	want := maps.Clone(e.used)
	want["AdminUserGlobalSignOut"] = true
	if got, want := slices.Sorted(maps.Keys(granted["StaffUserPool"])), slices.Sorted(maps.Keys(want)); !slices.Equal(got, want) {
		t.Errorf("granted %v\n   used %v (with AdminUserGlobalSignOut)", got, want)
	}
}

func (e *staffRoutes) faultsLogLineHoldsNoEmail(t *testing.T) {
	// A pool that does not exist: Cognito's error, a fault (500),
	// whose cause the request's log line holds; the workflow names
	// the person in it.
	e.s.Env.Names["StaffUserPool"] = "us-east-1_NoSuchPool"
	e.s.Restart(wire)
	r := e.send(e.admin, http.MethodPost, "/api/console/staff", `{"email":"ravi.rao@example.com","role":"operator"}`)
	if r.Status != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500: %s", r.Status, r.Body)
	}
	if !strings.Contains(e.s.Logs.String(), `"cause"`) {
		t.Fatalf("log %s: want the fault's cause", e.s.Logs.String())
	}
}
