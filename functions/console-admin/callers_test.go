package main

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"stampduty/shared/auth"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// The staff claims of the tests: an admin, an operator, a person in
// neither group.
var (
	adminClaims    = functest.StaffClaims("admin@console.local", "admin")
	operatorClaims = functest.StaffClaims("operator@console.local", "operator")
	nobodyClaims   = functest.StaffClaims("new@console.local")
)

// send runs one request of the console's admin routes as claims (none: no
// staff member's claims at all).
func send(t *testing.T, s *functest.Stack, claims map[string]string, method, path, body string) functest.Response {
	t.Helper()
	var headers map[string]string
	if body != "" {
		headers = map[string]string{"content-type": "application/json"}
	}
	ev := functest.Request(method, path, "", headers, body)
	if claims != nil {
		ev = functest.AsStaff(ev, claims)
	}
	return s.Invoke(ev)
}

// answer checks that r has the status want and decodes its body as a T.
func answer[T any](t *testing.T, r functest.Response, want int) T {
	t.Helper()
	var body T
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	return body
}

// refused checks that r is the refusal status with message (any, when "").
func refused(t *testing.T, r functest.Response, status int, message string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if got := r.Error(t).Error.Message; message != "" && got != message {
		t.Errorf("message %q, want %q", got, message)
	}
}

// find returns the caller owner of a list, or nil.
func find(list []caller, owner string) *caller {
	for i := range list {
		if list[i].Owner == owner {
			return &list[i]
		}
	}
	return nil
}

// TestCallers: an admin lists the callers with their counts, creates a
// caller, issues it a token (shown once, working at once), lists its
// tokens and revokes one (refused by the next lookup); what the workflow
// refuses is refused with its status and message; the token is in no log
// line. The grants are TestGrants's, over every area's routes (the callers'
// exercise below).
func TestCallers(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	functest.AddOrders(t, s.Env, localdb.DevOwner, 2)
	tokens := s.Env.DB().Tokens(s.Env.Table("TokensTable"))
	var calls []storetest.ProxyCall
	as := func(claims map[string]string, method, path, body string) functest.Response {
		t.Helper()
		s.Proxy.Take()
		r := send(t, s, claims, method, path, body)
		calls = append(calls, s.Proxy.Take()...)
		return r
	}
	admin := func(method, path, body string) functest.Response {
		t.Helper()
		return as(adminClaims, method, path, body)
	}

	t.Run("AnAdminSeesEveryCallerWithItsCounts", func(t *testing.T) {
		got := functest.OK[callersResponse](t, admin(http.MethodGet, "/api/console/callers", ""))
		dev := find(got.Data, localdb.DevOwner)
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

	t.Run("AnAdminCreatesACallerAsThemselves", func(t *testing.T) {
		got := answer[callerResponse](t, admin(http.MethodPost, "/api/console/callers", `{"owner":"acme-1"}`), http.StatusCreated)
		c := got.Data
		if c.Owner != "acme-1" || c.CreatedBy == nil || *c.CreatedBy != "admin@console.local" || c.CreatedAt == nil || c.ActiveTokens+c.RevokedTokens+c.Orders != 0 {
			t.Errorf("created %+v; want acme-1 by admin@console.local, no tokens, no orders", c)
		}
		listed := find(functest.OK[callersResponse](t, admin(http.MethodGet, "/api/console/callers", "")).Data, "acme-1")
		if listed == nil || listed.CreatedBy == nil || *listed.CreatedBy != "admin@console.local" {
			t.Errorf("the list's acme-1: %+v; want it, created by the admin", listed)
		}
	})
	t.Run("ANameIsTakenOnce", func(t *testing.T) {
		refused(t, admin(http.MethodPost, "/api/console/callers", `{"owner":"acme-1"}`), http.StatusConflict, "caller acme-1 exists already")
	})
	t.Run("ANameNoCallerCanHaveIsRefusedWithTheWorkflowsMessage", func(t *testing.T) {
		const why = "a caller's name (owner) is 1 to 64 ASCII letters, digits, '.', '_' or '-'"
		for _, body := range []string{`{"owner":"two words"}`, `{"owner":""}`, `{}`, `{"owner":"` + strings.Repeat("a", 65) + `"}`, `{"owner":"caller#x"}`} {
			refused(t, admin(http.MethodPost, "/api/console/callers", body), http.StatusBadRequest, why)
		}
		for _, body := range []string{`{"owner":7}`, `{"owner":"acme-2","tokens":1}`, `[]`, `not json`} {
			refused(t, admin(http.MethodPost, "/api/console/callers", body), http.StatusBadRequest, "")
		}
		if c := find(functest.OK[callersResponse](t, admin(http.MethodGet, "/api/console/callers", "")).Data, "acme-2"); c != nil {
			t.Errorf("a refused body created %+v", c)
		}
	})

	var secret string
	var issued issuedToken
	t.Run("AnIssuedTokenIsShownOnceAndWorksAtOnce", func(t *testing.T) {
		issued = answer[issuedResponse](t, admin(http.MethodPost, "/api/console/callers/acme-1/tokens", ""), http.StatusCreated).Data
		secret = issued.Token
		if !auth.WellFormed(secret) || !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(issued.ID) || issued.Owner != "acme-1" ||
			issued.CreatedBy == nil || *issued.CreatedBy != "admin@console.local" || issued.RevokedAt != nil {
			t.Fatalf("issued %+v; want a token of acme-1 by admin@console.local, with a 12-digit id, not revoked", issued)
		}
		owner, err := auth.NewAuthenticator(tokens, localdb.Hasher(), auth.CacheTTL).Owner(context.Background(), "Bearer "+secret)
		if err != nil || owner != "acme-1" {
			t.Errorf("the issued token: owner %q, %v; want acme-1", owner, err)
		}
	})
	t.Run("ATokenForACallerThatDoesNotExistIsNotFound", func(t *testing.T) {
		refused(t, admin(http.MethodPost, "/api/console/callers/nobody/tokens", ""), http.StatusNotFound, "no caller nobody: create it first")
		refused(t, admin(http.MethodPost, "/api/console/callers/"+strings.Repeat("a", 65)+"/tokens", ""), http.StatusBadRequest, "")
	})
	t.Run("ACallersTokensAreListedWithoutTheTokenOrItsHash", func(t *testing.T) {
		r := admin(http.MethodGet, "/api/console/callers/acme-1/tokens", "")
		got := functest.OK[tokensResponse](t, r)
		want, _ := json.Marshal(issued.token)
		if listed, _ := json.Marshal(got.Data); len(got.Data) != 1 || string(listed) != "["+string(want)+"]" {
			t.Errorf("acme-1's tokens %+v; want the one issued, %+v", got.Data, issued.token)
		}
		if hash := localdb.Hasher().Hash(secret); strings.Contains(r.Body, secret) || strings.Contains(r.Body, hash) {
			t.Errorf("the token list holds the token or its hash: %s", r.Body)
		}
		dev := functest.OK[tokensResponse](t, admin(http.MethodGet, "/api/console/callers/"+localdb.DevOwner+"/tokens", ""))
		if len(dev.Data) != 1 || dev.Data[0].CreatedBy != nil {
			t.Errorf("dev's tokens (from before records and creators): %+v; want one, createdBy null", dev.Data)
		}
		refused(t, admin(http.MethodGet, "/api/console/callers/nobody/tokens", ""), http.StatusNotFound, "no caller nobody")
	})
	t.Run("ARevokedTokenIsRefusedByTheNextLookup", func(t *testing.T) {
		got := functest.OK[tokenResponse](t, admin(http.MethodPost, "/api/console/tokens/"+issued.ID+"/revoke", ""))
		if got.Data.ID != issued.ID || got.Data.RevokedAt == nil {
			t.Fatalf("revoked %+v; want %s with revokedAt", got.Data, issued.ID)
		}
		if _, err := auth.NewAuthenticator(tokens, localdb.Hasher(), auth.CacheTTL).Owner(context.Background(), "Bearer "+secret); err == nil {
			t.Error("the revoked token still works")
		}
		again := functest.OK[tokenResponse](t, admin(http.MethodPost, "/api/console/tokens/"+issued.ID+"/revoke", ""))
		if again.Data.RevokedAt == nil || !again.Data.RevokedAt.Equal(*got.Data.RevokedAt) {
			t.Errorf("revoked again: %+v; want it as it was, revoked at %v", again.Data, got.Data.RevokedAt)
		}
		c := find(functest.OK[callersResponse](t, admin(http.MethodGet, "/api/console/callers", "")).Data, "acme-1")
		if c == nil || c.ActiveTokens != 0 || c.RevokedTokens != 1 {
			t.Errorf("acme-1 listed %+v; want 0 active, 1 revoked", c)
		}
		refused(t, admin(http.MethodPost, "/api/console/tokens/000000000000/revoke", ""), http.StatusNotFound, "no token with id 000000000000")
		refused(t, admin(http.MethodPost, "/api/console/tokens/abc/revoke", ""), http.StatusBadRequest, "a token ID has at least 12 hex digits")
	})
	t.Run("TheTokenIsInNoLogLine", func(t *testing.T) {
		logs := s.Logs.String()
		if secret == "" || strings.Contains(logs, secret) || strings.Contains(logs, localdb.Hasher().Hash(secret)) {
			t.Errorf("a log line holds the token or its hash (or none was issued):\n%s", logs)
		}
		if strings.Contains(logs, "admin@console.local") {
			t.Errorf("a log line holds the admin's email:\n%s", logs)
		}
		if !strings.Contains(logs, "POST /api/console/callers/acme-1/tokens") {
			t.Errorf("no log line of the issue's request; the check above would prove nothing:\n%s", logs)
		}
	})
	if len(calls) == 0 {
		t.Error("no DynamoDB call was recorded") // the exercise below is TestGrants's
	}
	s.CheckEvents(t, map[string]int{"console-admin": http.StatusOK}) // the bench's request, an admin's list

	onlyAnAdminReachesTheCallers(t, s, issued.ID)
	s.CheckRoutes()
}

// onlyAnAdminReachesTheCallers checks that every callers route refuses an
// operator, a person in neither group and a request without staff claims
// before any DynamoDB call; tokenID names the token the revoke route gets.
func onlyAnAdminReachesTheCallers(t *testing.T, s *functest.Stack, tokenID string) {
	for _, route := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/console/callers", ""},
		{http.MethodPost, "/api/console/callers", `{"owner":"sneaky"}`},
		{http.MethodGet, "/api/console/callers/acme-1/tokens", ""},
		{http.MethodPost, "/api/console/callers/acme-1/tokens", ""},
		{http.MethodPost, "/api/console/tokens/" + tokenID + "/revoke", ""},
	} {
		for _, tc := range []struct {
			name   string
			claims map[string]string
			status int
		}{
			{"AnOperatorIsForbidden", operatorClaims, http.StatusForbidden},
			{"NeitherGroupIsForbidden", nobodyClaims, http.StatusForbidden},
			{"NoStaffClaimsIsUnauthorized", nil, http.StatusUnauthorized},
		} {
			t.Run(route.method+route.path+"/"+tc.name, func(t *testing.T) {
				s.Proxy.Take()
				r := send(t, s, tc.claims, route.method, route.path, route.body)
				if got, want := r.Status, tc.status; got != want {
					t.Fatalf("status %d, want %d: %s", got, want, r.Body)
				}
				if got := s.Proxy.Take(); len(got) != 0 {
					t.Errorf("%d DynamoDB calls before the role was checked; want none", len(got))
				}
			})
		}
	}
}

// The callers' routes, each as an admin, for TestGrants: list, create,
// a caller's tokens, issue, revoke.
func init() {
	exercises["callers"] = func(t *testing.T, s *functest.Stack) {
		answer[callersResponse](t, send(t, s, adminClaims, http.MethodGet, "/api/console/callers", ""), http.StatusOK)
		answer[struct{}](t, send(t, s, adminClaims, http.MethodPost, "/api/console/callers", `{"owner":"grants-1"}`), http.StatusCreated)
		answer[tokensResponse](t, send(t, s, adminClaims, http.MethodGet, "/api/console/callers/grants-1/tokens", ""), http.StatusOK)
		issued := answer[issuedResponse](t, send(t, s, adminClaims, http.MethodPost, "/api/console/callers/grants-1/tokens", ""), http.StatusCreated)
		answer[tokenResponse](t, send(t, s, adminClaims, http.MethodPost, "/api/console/tokens/"+issued.Data.ID+"/revoke", ""), http.StatusOK)
	}
}
