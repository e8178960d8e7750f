package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// TestConsoleShowsTheCallerAndTheMode: the console's order view names the
// caller (owner) by its name, the same for its test and live orders, never
// the test principal's key, and livemode tells the mode (the page shows
// it as "Mode: Test" or "Live").
func TestConsoleShowsTheCallerAndTheMode(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	live := functest.AddOrders(t, s.Env, "acme", 1)[0]
	test := functest.AddOrders(t, s.Env, stampduty.TestOwnerOf("acme"), 1)[0]
	operator := functest.StaffClaims("operator@console.local", "operator")
	for _, tc := range []struct {
		name, doc string
		livemode  bool
	}{{"LiveOrder", live.DocumentID, true}, {"TestOrder", test.DocumentID, false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Invoke(functest.AsStaff(functest.Request("GET", "/api/console/orders/"+tc.doc, "", nil, ""), operator))
			var got struct {
				Data struct {
					Owner    string `json:"owner"`
					Livemode *bool  `json:"livemode"`
				} `json:"data"`
			}
			if err := json.Unmarshal(functest.OK[json.RawMessage](t, r), &got); err != nil {
				t.Fatal(err)
			}
			if got.Data.Owner != "acme" || strings.Contains(r.Body, "~test") {
				t.Errorf("owner %q, want the caller's name acme: %s", got.Data.Owner, r.Body)
			}
			if got.Data.Livemode == nil || *got.Data.Livemode != tc.livemode {
				t.Errorf("livemode %s, want %v", shown(got.Data.Livemode), tc.livemode)
			}
		})
	}
}

// shown is *b as JSON shows it: true, false or null when absent.
func shown(b *bool) string {
	if b == nil {
		return "null"
	}
	return strconv.FormatBool(*b)
}
