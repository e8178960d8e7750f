package main

import (
	"net/http"
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestModeParameter: ?mode= on the caller's webhook reads (the list and a
// webhook's deliveries), as on its order reads: the token's own mode is
// accepted, the other mode is 403 with no DynamoDB call once the token is
// cached (a live token reads no test webhook, nor the reverse), any other
// value 400 naming mode.
func TestModeParameter(t *testing.T) {
	s := functest.New(t, "WebhooksFunction", wire)
	live, test := functest.AddLiveAndTestTokens(t, s.Env, "acme")
	get := func(secret, path, query string) functest.Response {
		return s.Invoke(functest.Request("GET", path, query, map[string]string{"authorization": "Bearer " + secret}, ""))
	}
	for _, secret := range []string{live, test} {
		get(secret, "/api/webhooks", "") // the tokens are cached from here on
	}
	for _, path := range []string{"/api/webhooks", "/api/webhooks/k3v9xq2m7p4r8t1w5y6z0abc/deliveries"} {
		for _, tc := range []struct {
			name, secret, query string
			want                int
		}{
			{"LiveTokenAsksLive", live, "mode=live", 0},
			{"TestTokenAsksTest", test, "mode=test", 0},
			{"LiveTokenAsksTest", live, "mode=test", http.StatusForbidden},
			{"TestTokenAsksLive", test, "mode=live", http.StatusForbidden},
			{"UnknownMode", test, "mode=both", http.StatusBadRequest},
		} {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				without := get(tc.secret, path, "")
				s.Proxy.Take()
				r := get(tc.secret, path, tc.query)
				calls := s.Env.Operations(s.Proxy.Take())
				if tc.want == 0 { // accepted: answered as without mode
					if r.Status != without.Status || r.Body != without.Body {
						t.Errorf("with %s: %d %s; without: %d %s", tc.query, r.Status, r.Body, without.Status, without.Body)
					}
					return
				}
				if r.Status != tc.want {
					t.Fatalf("status %d, want %d: %s", r.Status, tc.want, r.Body)
				}
				if calls != "" {
					t.Errorf("a refused mode made DynamoDB calls: %s", calls)
				}
				if e := r.Error(t); tc.want == http.StatusBadRequest && strings.Join(e.Paths(), ",") != "mode" {
					t.Errorf("error paths %v, want mode", e.Paths())
				}
			})
		}
	}
}
