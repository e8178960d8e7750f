package staff

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/localcognito"
)

// password is the seeded accounts' password (the template's policy: 12
// characters, upper and lower case, a number and a symbol).
const password = "Staff-password-1"

// by is the acting admin of the tests' changes.
const by = "boss@example.com"

// env is one test's local Cognito with the template's staff pool.
type env struct {
	*localcognito.TestPool
	staff *Pool
}

func newEnv(t *testing.T) *env {
	t.Helper()
	tp := localcognito.NewTestPool(t)
	return &env{TestPool: tp, staff: newPool(tp, nil)}
}

// newTeam is newEnv holding an admin, by, and an operator,
// ravi@example.com: the people most tests change.
func newTeam(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.seed(t, by, "admin")
	e.seed(t, "ravi@example.com", "operator")
	return e
}

// newPool returns the workflows on tp's pool; before, when not nil, is
// called with each call's operation name before it is sent, and its error
// fails the call unsent (the faults of the tests).
func newPool(tp *localcognito.TestPool, before func(op string) error) *Pool {
	cfg := localcognito.Config(tp.Endpoint)
	cfg.RetryMaxAttempts = 1
	if before != nil {
		cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("fault", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if err := before(awsmiddleware.GetOperationName(ctx)); err != nil {
					return middleware.InitializeOutput{}, middleware.Metadata{}, err
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	}
	// cognito-local does not serve AdminUserGlobalSignOut (TestLocalCognitoGaps).
	return New(cfg, tp.PoolID, Options{SkipGlobalSignOut: true})
}

// seed creates a confirmed account that signs in with password, in groups.
func (e *env) seed(t *testing.T, email string, groups ...string) {
	t.Helper()
	if err := localcognito.CreateUser(context.Background(), e.Client, e.PoolID, email, password, groups...); err != nil {
		t.Fatal(err)
	}
}

// get returns the account of email as Cognito has it.
func (e *env) get(t *testing.T, email string) Member {
	t.Helper()
	m, err := e.staff.Get(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// signIn signs email in with password and returns the id token's groups.
func (e *env) signIn(email string) ([]string, error) {
	tok, err := localcognito.SignIn(context.Background(), e.Client, e.ClientID, email, password)
	if err != nil {
		return nil, err
	}
	return tokenGroups(tok.ID)
}

// wantCode fails unless err is of kind code.
func wantCode(t *testing.T, err error, code stampduty.Code) {
	t.Helper()
	if got := stampduty.ErrorCode(err); got != code {
		t.Errorf("error %v of kind %q, want %q", err, got, code)
	}
}

func TestParseEmail(t *testing.T) {
	for in, want := range map[string]string{
		"asha@example.com":          "asha@example.com",
		"  Asha.Rao@Example.COM ":   "asha.rao@example.com",
		"a+console@mail.example.in": "a+console@mail.example.in",
	} {
		if got, err := ParseEmail(in); err != nil || got != want {
			t.Errorf("ParseEmail(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "asha", "asha@", "@example.com", "asha@localhost", "Asha <asha@example.com>", "asha@example.com.",
		"two words@example.com", "asha@exa mple.com", "asha@éxample.com", strings.Repeat("a", 250) + "@x.in", "a@b@example.com"} {
		if got, err := ParseEmail(in); stampduty.ErrorCode(err) != stampduty.EINVALID {
			t.Errorf("ParseEmail(%q) = %q, %v, want invalid", in, got, err)
		}
	}
}

func TestInvite(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	t.Run("the invited person is listed with the role, enabled, waiting for the first sign-in", func(t *testing.T) {
		m, err := e.staff.Invite(ctx, by, "Ravi@Example.com", Operator)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := m.Email, "ravi@example.com"; got != want {
			t.Errorf("email = %q, want %q", got, want)
		}
		list, err := e.staff.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Fatalf("list = %+v, want one account", list)
		}
		got := list[0]
		if got.Email != "ravi@example.com" || got.Role != Operator || !slices.Equal(got.Groups, []Role{Operator}) || !got.Enabled ||
			got.Status != "FORCE_CHANGE_PASSWORD" || got.Created.IsZero() {
			t.Errorf("listed %+v", got)
		}
	})
	t.Run("the invitation is sent by email with a temporary password that asks for a new one", func(t *testing.T) {
		// cognito-local prints the message it would send, boxed:
		// "Destination: <email>" and "Code: <temporary password>".
		log := e.Log.String()
		i := strings.LastIndex(log, "Destination:")
		if i < 0 {
			t.Fatalf("no message in cognito-local's log:\n%s", log)
		}
		box := log[i:]
		if !strings.Contains(strings.SplitN(box, "\n", 2)[0], "ravi@example.com") {
			t.Errorf("the message went to %q", strings.SplitN(box, "\n", 2)[0])
		}
		_, rest, ok := strings.Cut(box, "Code:")
		if !ok {
			t.Fatalf("no temporary password in %q", box)
		}
		code := strings.Fields(rest)[0]
		_, err := localcognito.SignIn(ctx, e.Client, e.ClientID, "ravi@example.com", code)
		if !errors.Is(err, localcognito.ErrChallenge) || !strings.Contains(err.Error(), "NEW_PASSWORD_REQUIRED") {
			t.Errorf("sign-in with the temporary password: %v, want the NEW_PASSWORD_REQUIRED challenge", err)
		}
	})
	t.Run("an email is invited once", func(t *testing.T) {
		_, err := e.staff.Invite(ctx, by, "RAVI@example.com", Admin)
		wantCode(t, err, stampduty.ECONFLICT)
		if got := e.get(t, "ravi@example.com").Role; got != Operator {
			t.Errorf("role after the second invitation = %s, want operator", got)
		}
	})
	t.Run("a failure to join the group leaves the account with no role, and says so", func(t *testing.T) {
		p := newPool(e.TestPool, func(op string) error {
			if op == "AdminAddUserToGroup" {
				return &smithy.GenericAPIError{Code: "TooManyRequestsException", Message: "Rate exceeded"}
			}
			return nil
		})
		_, err := p.Invite(ctx, by, "meera@example.com", Admin)
		wantCode(t, err, stampduty.EUNAVAILABLE)
		if msg := stampduty.ErrorMessage(err); !strings.Contains(msg, "without a role") {
			t.Errorf("message %q", msg)
		}
		if m := e.get(t, "meera@example.com"); m.Role != None {
			t.Errorf("meera is %s", m.Role)
		}
	})
	t.Run("an invalid email or role is refused before Cognito", func(t *testing.T) {
		_, err := e.staff.Invite(ctx, by, "ravi", Operator)
		wantCode(t, err, stampduty.EINVALID)
		_, err = e.staff.Invite(ctx, by, "neha@example.com", None)
		wantCode(t, err, stampduty.EINVALID)
		_, err = e.staff.Get(ctx, "neha@example.com")
		wantCode(t, err, stampduty.ENOTFOUND)
	})
}

func TestSetRole(t *testing.T) {
	ctx := context.Background()
	e := newTeam(t)
	for _, step := range []struct {
		to     Role
		groups []string
	}{
		{Admin, []string{"admin"}},
		{Operator, []string{"operator"}},
		{None, nil},
		{Operator, []string{"operator"}},
		{None, nil},
		{Admin, []string{"admin"}},
	} {
		t.Run("to "+string(step.to), func(t *testing.T) {
			c, err := e.staff.SetRole(ctx, by, "ravi@example.com", step.to)
			if err != nil {
				t.Fatal(err)
			}
			if c.Role != step.to {
				t.Errorf("changed to %s, want %s", c.Role, step.to)
			}
			if got := e.get(t, "ravi@example.com"); got.Role != step.to || len(got.Groups) != len(step.groups) {
				t.Errorf("Cognito has %s in %v, want %s", got.Email, got.Groups, step.to)
			}
			groups, err := e.signIn("ravi@example.com")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(groups, step.groups) {
				t.Errorf("the id token's groups = %v, want %v", groups, step.groups)
			}
		})
	}
	t.Run("an unknown person is not found", func(t *testing.T) {
		_, err := e.staff.SetRole(ctx, by, "nobody@example.com", Operator)
		wantCode(t, err, stampduty.ENOTFOUND)
	})
	t.Run("a role is read in any case", func(t *testing.T) {
		c, err := e.staff.SetRole(ctx, by, "ravi@example.com", Role("Operator"))
		if err != nil {
			t.Fatal(err)
		}
		if got := e.get(t, "ravi@example.com"); c.Role != Operator || !slices.Equal(got.Groups, []Role{Operator}) {
			t.Errorf("changed to %s; Cognito has %v", c.Role, got.Groups)
		}
	})
	t.Run("an unknown role is invalid", func(t *testing.T) {
		_, err := e.staff.SetRole(ctx, by, "ravi@example.com", Role("owner"))
		wantCode(t, err, stampduty.EINVALID)
	})
}

// TestSetRoleFailingHalfway fails each group call of every role change in
// turn: a demotion never leaves more rights than the new role's once a
// call has succeeded, and no change leaves more than the old or new role's.
func TestSetRoleFailingHalfway(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.seed(t, by, "admin")
	roles := []Role{Admin, Operator, None}
	n := 0
	for _, from := range roles {
		for _, to := range roles {
			if from == to {
				continue
			}
			for k := 1; ; k++ {
				n++
				email := fmt.Sprintf("p%d@example.com", n)
				var groups []string
				if from != None {
					groups = []string{string(from)}
				}
				e.seed(t, email, groups...)
				calls := 0
				fault := errors.New("injected fault")
				p := newPool(e.TestPool, func(op string) error {
					if op == "AdminAddUserToGroup" || op == "AdminRemoveUserFromGroup" {
						if calls++; calls == k {
							return fault
						}
					}
					return nil
				})
				_, err := p.SetRole(ctx, by, email, to)
				after := roleOf(e.get(t, email).Groups)
				if err == nil {
					if k == 1 {
						t.Errorf("%s → %s: no call failed: the fault was not injected", from, to)
					}
					if after != to {
						t.Errorf("%s → %s: %s after success", from, to, after)
					}
					break // k went past the last call
				}
				changed := !slices.Equal(e.get(t, email).Groups, []Role{from}) && !(from == None && len(e.get(t, email).Groups) == 0)
				if after.rank() > max(from.rank(), to.rank()) {
					t.Errorf("%s → %s failing at group call %d: %s, more than both", from, to, k, after)
				}
				if to.rank() < from.rank() && changed && after.rank() > to.rank() {
					t.Errorf("%s → %s failing at group call %d: %s, more than the new role after a change", from, to, k, after)
				}
				if k > 3 {
					t.Fatalf("%s → %s: still failing at call %d", from, to, k)
				}
			}
		}
	}
}

func TestDisableAndEnable(t *testing.T) {
	ctx := context.Background()
	e := newTeam(t)
	t.Run("a disabled account is listed disabled with its role", func(t *testing.T) {
		c, err := e.staff.Disable(ctx, by, "ravi@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if c.Enabled || c.SignedOut {
			t.Errorf("disable said %+v (SignedOut false: skipped locally)", c)
		}
		list, err := e.staff.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list, func(m Member) bool { return m.Email == "ravi@example.com" })
		if i < 0 || list[i].Enabled || list[i].Role != Operator {
			t.Errorf("listed %+v", list)
		}
	})
	t.Run("disabling again changes nothing", func(t *testing.T) {
		if _, err := e.staff.Disable(ctx, by, "ravi@example.com"); err != nil {
			t.Fatal(err)
		}
		if e.get(t, "ravi@example.com").Enabled {
			t.Error("enabled")
		}
	})
	t.Run("a re-enabled person signs in with their role", func(t *testing.T) {
		c, err := e.staff.Enable(ctx, by, "ravi@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if !c.Enabled || !e.get(t, "ravi@example.com").Enabled {
			t.Errorf("enable said %+v", c)
		}
		groups, err := e.signIn("ravi@example.com")
		if err != nil || !slices.Equal(groups, []string{"operator"}) {
			t.Errorf("sign-in: %v, groups %v", err, groups)
		}
	})
	t.Run("an unknown person is not found", func(t *testing.T) {
		_, err := e.staff.Disable(ctx, by, "nobody@example.com")
		wantCode(t, err, stampduty.ENOTFOUND)
		_, err = e.staff.Enable(ctx, by, "nobody@example.com")
		wantCode(t, err, stampduty.ENOTFOUND)
	})
}

func TestLastAdmin(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.seed(t, "asha@example.com", "admin")
	e.seed(t, "ravi@example.com", "operator")
	t.Run("the last enabled admin cannot be demoted or disabled, and nothing is sent", func(t *testing.T) {
		var sent []string
		p := newPool(e.TestPool, func(op string) error {
			if !strings.HasPrefix(op, "AdminGet") && !strings.HasPrefix(op, "List") && !strings.HasPrefix(op, "AdminList") {
				sent = append(sent, op)
			}
			return nil
		})
		for _, to := range []Role{Operator, None} {
			_, err := p.SetRole(ctx, "asha@example.com", "asha@example.com", to)
			wantCode(t, err, stampduty.ECONFLICT)
		}
		_, err := p.Disable(ctx, "asha@example.com", "asha@example.com")
		wantCode(t, err, stampduty.ECONFLICT)
		if m := e.get(t, "asha@example.com"); m.Role != Admin || !m.Enabled {
			t.Errorf("after the refusals: %+v", m)
		}
		if len(sent) > 0 {
			t.Errorf("the refused changes sent %v: refused only after changing (and undoing)", sent)
		}
	})
	t.Run("with another admin, an admin steps down", func(t *testing.T) {
		if _, err := e.staff.SetRole(ctx, "asha@example.com", "ravi@example.com", Admin); err != nil {
			t.Fatal(err)
		}
		if _, err := e.staff.SetRole(ctx, "asha@example.com", "asha@example.com", Operator); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a disabled admin does not count", func(t *testing.T) {
		if _, err := e.staff.SetRole(ctx, "ravi@example.com", "asha@example.com", Admin); err != nil {
			t.Fatal(err)
		}
		if _, err := e.staff.Disable(ctx, "ravi@example.com", "asha@example.com"); err != nil {
			t.Fatal(err)
		}
		_, err := e.staff.Disable(ctx, "ravi@example.com", "ravi@example.com")
		wantCode(t, err, stampduty.ECONFLICT)
		_, err = e.staff.SetRole(ctx, "ravi@example.com", "ravi@example.com", None)
		wantCode(t, err, stampduty.ECONFLICT)
	})
	t.Run("a disabled admin may be demoted", func(t *testing.T) {
		if _, err := e.staff.SetRole(ctx, "ravi@example.com", "asha@example.com", Operator); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLastAdminRace: two admins step down at the same time, each counting
// the other before either has changed; one of them stays admin.
func TestLastAdminRace(t *testing.T) {
	for _, how := range []string{"demote", "disable"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			e.seed(t, "asha@example.com", "admin")
			e.seed(t, "ravi@example.com", "admin")
			step := func(p *Pool, who string) error {
				if how == "demote" {
					_, err := p.SetRole(ctx, who, who, Operator)
					return err
				}
				_, err := p.Disable(ctx, who, who)
				return err
			}
			// Ravi's whole change runs after Asha counted him and
			// before her own change is sent.
			var ravi error
			ran := false
			asha := newPool(e.TestPool, func(op string) error {
				if (op == "AdminRemoveUserFromGroup" || op == "AdminDisableUser") && !ran {
					ran = true
					ravi = step(e.staff, "ravi@example.com")
				}
				return nil
			})
			err := step(asha, "asha@example.com")
			if ravi != nil {
				t.Fatalf("ravi: %v", ravi)
			}
			wantCode(t, err, stampduty.ECONFLICT)
			list, err := e.staff.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			admins := 0
			for _, m := range list {
				if m.Role == Admin && m.Enabled {
					admins++
				}
			}
			if admins != 1 {
				t.Errorf("%d enabled admins after the race: %+v", admins, list)
			}
			if m := e.get(t, "asha@example.com"); m.Enabled != true || !slices.Equal(m.Groups, []Role{Admin}) {
				t.Errorf("asha, whose change was undone: %+v, want enabled, in admin only", m)
			}
		})
	}
}

// TestErrorsMapped: Cognito's errors become the service's error kinds.
func TestErrorsMapped(t *testing.T) {
	for code, want := range map[string]stampduty.Code{
		"UsernameExistsException":   stampduty.ECONFLICT,
		"UserNotFoundException":     stampduty.ENOTFOUND,
		"InvalidParameterException": stampduty.EINVALID,
		"TooManyRequestsException":  stampduty.EUNAVAILABLE,
		"LimitExceededException":    stampduty.EUNAVAILABLE,
		"InternalErrorException":    stampduty.EUNAVAILABLE,
		"ResourceNotFoundException": stampduty.EINTERNAL,
		"AccessDeniedException":     stampduty.EINTERNAL,
	} {
		err := cognitoErr("do", &smithy.GenericAPIError{Code: code, Message: "m"})
		if got := stampduty.ErrorCode(err); got != want {
			t.Errorf("%s → %s, want %s", code, got, want)
		}
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != code {
			t.Errorf("%s: the cause is not kept: %v", code, err)
		}
	}
	t.Run("a Cognito that does not answer is unavailable", func(t *testing.T) {
		tp := &localcognito.TestPool{Endpoint: "http://127.0.0.1:1", PoolID: "us-east-1_none"}
		_, err := newPool(tp, nil).List(context.Background())
		wantCode(t, err, stampduty.EUNAVAILABLE)
	})
	t.Run("the local Cognito's own errors", func(t *testing.T) {
		e := newEnv(t)
		e.seed(t, by, "admin")
		_, err := e.staff.Invite(context.Background(), by, by, Admin)
		wantCode(t, err, stampduty.ECONFLICT)
		_, err = e.staff.Enable(context.Background(), by, "nobody@example.com")
		wantCode(t, err, stampduty.ENOTFOUND)
	})
}

// TestLocalCognitoGaps pins what cognito-local 5.3.0 does not do that
// Cognito does, so that this package's tests cannot check it: it lets a
// disabled person sign in (jagregory/cognito-local#381; Cognito answers
// NotAuthorizedException "User is disabled."), and it does not serve
// AdminUserGlobalSignOut. When an upgrade fixes either, this test fails:
// then test it in TestDisableAndEnable and drop SkipGlobalSignOut.
//
// A third gap is closed in front of it: by itself cognito-local lets
// anyone SignUp to the staff pool on the console's client, though the
// template's AllowAdminCreateUserOnly makes Cognito refuse it
// (NotAuthorizedException "SignUp is not permitted for this user
// pool"); the local Cognito's front (localcognito's front.go), which
// every client uses, refuses it as Cognito does. When cognito-local
// itself refuses, this test fails: then drop the front.
func TestLocalCognitoGaps(t *testing.T) {
	ctx := context.Background()
	e := newTeam(t)
	if _, err := e.staff.Disable(ctx, by, "ravi@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.signIn("ravi@example.com"); err != nil {
		t.Errorf("cognito-local now refuses a disabled person (%v): assert it in TestDisableAndEnable", err)
	}
	p := newPool(e.TestPool, nil)
	p.opts.SkipGlobalSignOut = false
	_, err := p.signOut(ctx, e.get(t, "ravi@example.com").User)
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "Unsupported" {
		t.Errorf("AdminUserGlobalSignOut: %v, want cognito-local's Unsupported: if it is served now, test it and drop SkipGlobalSignOut", err)
	}

	t.Run("SignUp to the staff pool", func(t *testing.T) {
		if status, _, body := localcognito.SignUp(t, e.Engine, e.ClientID, "self@example.com", password); status != http.StatusOK {
			t.Errorf("cognito-local now refuses SignUp by itself (%d %s): drop localcognito's front", status, body)
		}
		localcognito.WantSignUpRefused(t, e.Endpoint, e.PoolID, e.ClientID)
	})
}

// tokenGroups returns the cognito:groups of a token's payload, unverified.
func tokenGroups(token string) ([]string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("token of %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var c struct {
		Groups []string `json:"cognito:groups"`
	}
	err = json.Unmarshal(b, &c)
	return c.Groups, err
}
