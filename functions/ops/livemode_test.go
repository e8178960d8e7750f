package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// TestOperatorsSeeTheCallerAndTheMode: an operator reading an order sees
// the caller's name as owner, the same for its test and live orders, never
// the test principal's key (<name>~test), and livemode tells the mode.
func TestOperatorsSeeTheCallerAndTheMode(t *testing.T) {
	s := operating{Stack: functest.New(t, "OpsFunction", wire)}
	live := functest.AddOrders(t, s.Env, "acme", 1)[0]
	test := functest.AddOrders(t, s.Env, stampduty.TestOwnerOf("acme"), 1)[0]
	for _, tc := range []struct {
		name, doc string
		livemode  bool
	}{{"LiveOrder", live.DocumentID, true}, {"TestOrder", test.DocumentID, false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.invoke(functest.Request("GET", "/api/ops/live-orders/"+tc.doc, "", nil, ""))
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
