package functest

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
)

// A caller's two worlds (test-mode.md, "Test tokens"), as the functions'
// test-mode tests set them up side by side: its live token and orders,
// its test token and the orders of its test principal.

// AddLiveAndTestTokens stores a live token and a test token of owner
// (AddToken, AddTestToken) and returns their secrets: live authenticates
// as owner, test as stampduty.TestOwnerOf(owner).
func AddLiveAndTestTokens(t testing.TB, env *storetest.Env, owner string) (live, test string) {
	t.Helper()
	live, test = "sdt_"+strings.Repeat("L", 43), auth.TestPrefix+strings.Repeat("T", 43)
	AddToken(t, env, live, owner)
	AddTestToken(t, env, test, owner)
	return live, test
}

// AddLiveAndTestOrder stores one order of owner's and then one of its test
// principal's (AddOrders), and returns their documentIds.
func AddLiveAndTestOrder(t testing.TB, env *storetest.Env, owner string) (live, test string) {
	t.Helper()
	return AddOrders(t, env, owner, 1)[0].DocumentID, AddOrders(t, env, stampduty.TestOwnerOf(owner), 1)[0].DocumentID
}

// DocumentIDs returns the documentIds of os, in order.
func DocumentIDs(os []stampduty.Order) []string {
	var d []string
	for _, o := range os {
		d = append(d, o.DocumentID)
	}
	return d
}

// Shown is *b as JSON shows it: true, false or null when absent.
func Shown(b *bool) string {
	if b == nil {
		return "null"
	}
	return strconv.FormatBool(*b)
}

// CheckOrderShowsCallerAndMode checks an operator's read of one order
// (read answers the order doc, as the function's route does): it names
// the caller by its name as owner, the same for its test and live orders,
// never the test principal's key (<name>~test), and livemode tells the
// mode. It stores a live and a test order of "acme" to read.
func (s *Stack) CheckOrderShowsCallerAndMode(t *testing.T, read func(doc string) Response) {
	t.Helper()
	live, test := AddLiveAndTestOrder(t, s.Env, "acme")
	for _, tc := range []struct {
		name, doc string
		livemode  bool
	}{{"LiveOrder", live, true}, {"TestOrder", test, false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := read(tc.doc)
			var got struct {
				Data struct {
					Owner    string `json:"owner"`
					Livemode *bool  `json:"livemode"`
				} `json:"data"`
			}
			if err := json.Unmarshal(OK[json.RawMessage](t, r), &got); err != nil {
				t.Fatal(err)
			}
			if got.Data.Owner != "acme" || strings.Contains(r.Body, "~test") {
				t.Errorf("owner %q, want the caller's name acme: %s", got.Data.Owner, r.Body)
			}
			if got.Data.Livemode == nil || *got.Data.Livemode != tc.livemode {
				t.Errorf("livemode %s, want %v", Shown(got.Data.Livemode), tc.livemode)
			}
		})
	}
}
