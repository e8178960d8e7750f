package main

import (
	"net/http"
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestTestAndLiveAreSeparate: a caller's live token cannot read the
// caller's test orders and its test token cannot read its live orders
// (test-mode.md, "Test tokens"); each reads its own.
func TestTestAndLiveAreSeparate(t *testing.T) {
	s := functest.New(t, "GetOrderFunction", wire)
	live, test := functest.AddLiveAndTestTokens(t, s.Env, "acme")
	liveOrder, testOrder := functest.AddLiveAndTestOrder(t, s.Env, "acme")
	get := func(secret, doc string) int {
		return s.Invoke(functest.Request("GET", "/api/live-orders/"+doc, "", map[string]string{"authorization": "Bearer " + secret}, "")).Status
	}
	for _, tc := range []struct {
		name, secret, doc string
		want              int
	}{
		{"LiveTokenReadsALiveOrder", live, liveOrder, http.StatusOK},
		{"TestTokenReadsATestOrder", test, testOrder, http.StatusOK},
		{"LiveTokenCannotReadATestOrder", live, testOrder, http.StatusNotFound},
		{"TestTokenCannotReadALiveOrder", test, liveOrder, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := get(tc.secret, tc.doc); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
}

// TestLivemode: a one-order read says the order's mode (test-mode.md,
// "livemode on every order"): false for an order of the caller's test
// principal, true for a live one, each read with its own token.
func TestLivemode(t *testing.T) {
	s := functest.New(t, "GetOrderFunction", wire)
	live, test := functest.AddLiveAndTestTokens(t, s.Env, "acme")
	liveOrder, testOrder := functest.AddLiveAndTestOrder(t, s.Env, "acme")
	for _, tc := range []struct {
		name, secret, doc string
		want              bool
	}{
		{"ALiveOrderReadsLivemodeTrue", live, liveOrder, true},
		{"ATestOrderReadsLivemodeFalse", test, testOrder, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Invoke(functest.Request("GET", "/api/live-orders/"+tc.doc, "", map[string]string{"authorization": "Bearer " + tc.secret}, ""))
			b := functest.OK[struct {
				Data map[string]any `json:"data"`
			}](t, r)
			if got, ok := b.Data["livemode"].(bool); !ok || got != tc.want {
				t.Errorf("livemode = %v, want %v", b.Data["livemode"], tc.want)
			}
		})
	}
}

// TestModeParameter: ?mode= on a one-order read (test-mode.md: "a caller
// asking for ?mode=test with a live token gets no test data (a 4xx on a
// one-order read)"). The token's own mode is accepted and changes nothing;
// the other mode is 403 with no order read (no DynamoDB call at all once
// the token is cached); any other value, or mode twice, is 400 naming mode.
func TestModeParameter(t *testing.T) {
	s := functest.New(t, "GetOrderFunction", wire)
	live, test := functest.AddLiveAndTestTokens(t, s.Env, "acme")
	liveOrder, testOrder := functest.AddLiveAndTestOrder(t, s.Env, "acme")
	get := func(secret, doc, query string) functest.Response {
		return s.Invoke(functest.Request("GET", "/api/live-orders/"+doc, query, map[string]string{"authorization": "Bearer " + secret}, ""))
	}
	// Both tokens are cached from here on: a refusal's calls are its own.
	for _, secret := range []string{live, test} {
		get(secret, liveOrder, "")
	}
	for _, tc := range []struct {
		name, secret, doc, query string
		want                     int
	}{
		{"LiveTokenAsksLive", live, liveOrder, "mode=live", http.StatusOK},
		{"TestTokenAsksTest", test, testOrder, "mode=test", http.StatusOK},
		{"LiveTokenAsksTest", live, testOrder, "mode=test", http.StatusForbidden},
		{"LiveTokenAsksTestForItsOwnOrder", live, liveOrder, "mode=test", http.StatusForbidden},
		{"TestTokenAsksLive", test, liveOrder, "mode=live", http.StatusForbidden},
		{"UnknownMode", live, liveOrder, "mode=sandbox", http.StatusBadRequest},
		{"EmptyMode", live, liveOrder, "mode=", http.StatusBadRequest},
		{"ModeInCapitals", live, liveOrder, "mode=LIVE", http.StatusBadRequest},
		{"ModeTwice", live, liveOrder, "mode=live&mode=live", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Proxy.Take()
			r := get(tc.secret, tc.doc, tc.query)
			calls := s.Env.Operations(s.Proxy.Take())
			if r.Status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.want, r.Body)
			}
			if tc.want == http.StatusOK {
				return
			}
			if calls != "" {
				t.Errorf("a refused mode made DynamoDB calls: %s", calls)
			}
			e := r.Error(t)
			if tc.want == http.StatusBadRequest {
				if got, want := strings.Join(e.Paths(), ","), "mode"; got != want {
					t.Errorf("error paths %q, want %q", got, want)
				}
				return
			}
			if e.Error.Name != "ForbiddenError" {
				t.Errorf("error name %q, want ForbiddenError", e.Error.Name)
			}
		})
	}
}
