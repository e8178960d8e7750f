package main

import (
	"context"
	"strings"
	"testing"

	"stampduty/shared/testkit/localcognito"
)

// TestStaffCommands: against a local Cognito with the template's pool,
// found by its name as the local stack names it, stampctl invites, lists,
// changes roles, disables and enables staff, and refuses what the
// workflows refuse.
func TestStaffCommands(t *testing.T) {
	tp := localcognito.NewTestPool(t)
	if err := localcognito.CreateUser(context.Background(), tp.Client, tp.PoolID, "asha@example.com", "Staff-password-1", "admin"); err != nil {
		t.Fatal(err)
	}
	var h *harness // no tables: the staff commands read none
	vars := map[string]string{"COGNITO_ENDPOINT": tp.Endpoint, "STAMPDUTY_BY": "asha@example.com"}
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		r := h.run(t, "", vars, args...)
		if r.code != 0 {
			t.Fatalf("stampctl %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	fails := func(t *testing.T, code int, want string, args ...string) {
		t.Helper()
		if r := h.run(t, "", vars, args...); r.code != code || !strings.Contains(r.stderr, want) {
			t.Errorf("stampctl %s: exit %d, want %d and %q in:\n%s", strings.Join(args, " "), r.code, code, want, r.stderr)
		}
	}
	row := func(t *testing.T, email string) string {
		t.Helper()
		for _, l := range lines(run(t, "staff", "list")) {
			if strings.HasPrefix(l, email+" ") {
				return strings.Join(strings.Fields(l), " ")
			}
		}
		t.Fatalf("%s is not listed", email)
		return ""
	}
	t.Run("an invited person is listed as waiting for the first sign-in", func(t *testing.T) {
		out := run(t, "staff", "invite", "Ravi@Example.com", "--role", "operator")
		if !strings.Contains(out, "invited ravi@example.com as operator") {
			t.Errorf("invite printed %q", out)
		}
		if got := row(t, "ravi@example.com"); !strings.HasPrefix(got, "ravi@example.com operator operator yes FORCE_CHANGE_PASSWORD 20") {
			t.Errorf("listed %q", got)
		}
		if got := row(t, "asha@example.com"); !strings.HasPrefix(got, "asha@example.com admin admin yes CONFIRMED") {
			t.Errorf("listed %q", got)
		}
	})
	t.Run("roles change both ways; a demotion says it could not sign out locally", func(t *testing.T) {
		if out := run(t, "staff", "role", "ravi@example.com", "--role", "admin"); !strings.Contains(out, "ravi@example.com: operator → admin\n") {
			t.Errorf("role printed %q", out)
		}
		if got := row(t, "ravi@example.com"); !strings.HasPrefix(got, "ravi@example.com admin admin yes") {
			t.Errorf("listed %q", got)
		}
		out := run(t, "staff", "role", "ravi@example.com", "--role", "none")
		if !strings.Contains(out, "admin → none; not signed out: the local Cognito does not serve AdminUserGlobalSignOut") {
			t.Errorf("role printed %q", out)
		}
		if got := row(t, "ravi@example.com"); !strings.HasPrefix(got, "ravi@example.com none - yes") {
			t.Errorf("listed %q", got)
		}
	})
	t.Run("disabled and enabled", func(t *testing.T) {
		run(t, "staff", "disable", "ravi@example.com")
		if got := row(t, "ravi@example.com"); !strings.HasPrefix(got, "ravi@example.com none - no") {
			t.Errorf("listed %q", got)
		}
		run(t, "staff", "enable", "ravi@example.com")
		if got := row(t, "ravi@example.com"); !strings.HasPrefix(got, "ravi@example.com none - yes") {
			t.Errorf("listed %q", got)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		fails(t, 1, "exists already", "staff", "invite", "ravi@example.com", "--role", "admin")
		fails(t, 1, "no staff account has this email", "staff", "disable", "nobody@example.com")
		fails(t, 1, "last enabled admin", "staff", "disable", "asha@example.com")
		fails(t, 1, "last enabled admin", "staff", "role", "asha@example.com", "--role", "operator")
		fails(t, 1, "email must be an address", "staff", "invite", "ravi", "--role", "admin")
		fails(t, 2, "--role must be admin or operator", "staff", "invite", "neha@example.com", "--role", "none")
		fails(t, 2, "--role must be admin, operator or none", "staff", "role", "ravi@example.com", "--role", "owner")
		fails(t, 2, "missing argument", "staff", "enable")
	})
	t.Run("the pool by its id", func(t *testing.T) {
		r := h.run(t, "", map[string]string{"COGNITO_ENDPOINT": tp.Endpoint, "STAFF_USER_POOL_ID": tp.PoolID}, "staff", "list")
		if r.code != 0 || !strings.Contains(r.stdout, "ravi@example.com") {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r = h.run(t, "", map[string]string{"COGNITO_ENDPOINT": tp.Endpoint, "STAFF_USER_POOL_ID": "us-east-1_none"}, "staff", "list")
		if r.code != 1 {
			t.Errorf("another pool's id: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("without settings it names what to set", func(t *testing.T) {
		r := h.run(t, "", nil, "staff", "list")
		for _, want := range []string{"--stack NAME", "StaffUserPoolId", "STAFF_USER_POOL_ID", "export COGNITO_ENDPOINT=http://127.0.0.1:9229"} {
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stderr does not say %q:\n%s", r.code, want, r.stderr)
			}
		}
		r = h.run(t, "", map[string]string{"COGNITO_ENDPOINT": tp.Endpoint, "STAMPDUTY_STACK": "s"}, "staff", "list")
		if r.code != 2 || !strings.Contains(r.stderr, "use one of them") {
			t.Errorf("COGNITO_ENDPOINT with a stack: exit %d\n%s", r.code, r.stderr)
		}
	})
}
