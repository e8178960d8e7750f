package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// TestIssueTestTokens: an admin issues a caller a test token by asking
// for one ({"test": true}); it is shown once as a test token and
// authenticates as the caller's test principal, never as the caller. No
// body, {} or {"test": false} issue a live token, as before the mode
// existed. The caller's token list says each token's mode. A mode that is
// not a boolean, or another field, is 400 naming the field, and issues
// nothing.
func TestIssueTestTokens(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	tokens := s.Env.DB().Tokens(s.Env.Table("TokensTable"))
	authn := auth.NewAuthenticator(tokens, localdb.Hasher(), auth.CacheTTL)
	admin := func(method, path, body string) functest.Response {
		t.Helper()
		return send(t, s, adminClaims, method, path, body)
	}
	answer[callerResponse](t, admin(http.MethodPost, "/api/console/callers", `{"owner":"acme-t"}`), http.StatusCreated)
	const issue = "/api/console/callers/acme-t/tokens"

	modes := map[string]string{} // the mode each issued token's ID was listed with
	t.Run("ATestTokenIsIssuedWhenAskedFor", func(t *testing.T) {
		got := answer[issuedResponse](t, admin(http.MethodPost, issue, `{"test":true}`), http.StatusCreated).Data
		if got.Mode != "test" || !strings.HasPrefix(got.Token, auth.TestPrefix) || !auth.IsTest(got.Token) {
			t.Fatalf("issued mode %q, token %.9s…; want mode test and a test token (%s…)", got.Mode, got.Token, auth.TestPrefix)
		}
		owner, err := authn.Owner(context.Background(), "Bearer "+got.Token)
		if want := stampduty.TestOwnerOf("acme-t"); err != nil || owner != want {
			t.Errorf("the test token authenticates as %q, %v; want the test principal %q", owner, err, want)
		}
		modes[got.ID] = "test"
	})
	for _, body := range []string{"", `{}`, `{"test":false}`} {
		t.Run("ALiveTokenIsIssuedWithBody"+map[string]string{"": "None", "{}": "Empty", `{"test":false}`: "TestFalse"}[body], func(t *testing.T) {
			got := answer[issuedResponse](t, admin(http.MethodPost, issue, body), http.StatusCreated).Data
			if got.Mode != "live" || auth.IsTest(got.Token) || !auth.WellFormed(got.Token) {
				t.Fatalf("issued mode %q, token %.9s…; want mode live and a live token", got.Mode, got.Token)
			}
			owner, err := authn.Owner(context.Background(), "Bearer "+got.Token)
			if err != nil || owner != "acme-t" {
				t.Errorf("the live token authenticates as %q, %v; want acme-t", owner, err)
			}
			modes[got.ID] = "live"
		})
	}
	t.Run("TheTokenListSaysEachTokensMode", func(t *testing.T) {
		listed := functest.OK[tokensResponse](t, admin(http.MethodGet, issue, "")).Data
		if got, want := len(listed), len(modes); got != want {
			t.Fatalf("%d tokens listed; want the %d issued: %+v", got, want, listed)
		}
		for _, tok := range listed {
			if want, ok := modes[tok.ID]; !ok || tok.Mode != want {
				t.Errorf("token %s listed with mode %q; want %q", tok.ID, tok.Mode, want)
			}
		}
		dev := functest.OK[tokensResponse](t, admin(http.MethodGet, "/api/console/callers/"+localdb.DevOwner+"/tokens", "")).Data
		if len(dev) != 1 || dev[0].Mode != "live" {
			t.Errorf("dev's token (from before modes, no test attribute): %+v; want one, mode live", dev)
		}
	})
	t.Run("AModeThatIsNotABooleanIsRefusedNamingTheField", func(t *testing.T) {
		before := len(functest.OK[tokensResponse](t, admin(http.MethodGet, issue, "")).Data)
		for _, tc := range []struct{ body, path, message string }{
			{`{"test":"true"}`, "test", "Invalid data. test must be true (a test token) or false (a live token)"},
			{`{"test":null}`, "test", "Invalid data. test must be true (a test token) or false (a live token)"},
			{`{"test":1}`, "test", "Invalid data. test must be true (a test token) or false (a live token)"},
			{`{"test":[true]}`, "test", "Invalid data. test must be true (a test token) or false (a live token)"},
			{`{"mode":"test"}`, "mode", "Invalid data. mode is not a field of a token to issue"},
			{`{"test":true,"test":false}`, "test", ""},
			{`[]`, "", ""},
			{`true`, "", ""},
			{`not json`, "", ""},
		} {
			r := admin(http.MethodPost, issue, tc.body)
			refused(t, r, http.StatusBadRequest, tc.message)
			if got := r.Error(t).Paths(); !slices.Equal(got, []string{tc.path}) {
				t.Errorf("%s: details' paths %q; want [%q]", tc.body, got, tc.path)
			}
		}
		if after := len(functest.OK[tokensResponse](t, admin(http.MethodGet, issue, "")).Data); after != before {
			t.Errorf("%d tokens after the refused issues, %d before: a refused body issued a token", after, before)
		}
	})
	t.Run("ATestTokenIsInNoLogLine", func(t *testing.T) {
		if logs := s.Logs.String(); strings.Contains(logs, auth.TestPrefix) {
			t.Errorf("a log line holds a test token:\n%s", logs)
		}
	})
}
