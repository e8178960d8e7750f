package main

import (
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// TestTestAndLiveAreSeparate: a caller's test token and live token see two
// separate worlds (test-mode.md, "Test tokens"). The test token lists and
// counts only the orders of the caller's test principal, the live token
// only its live orders, though both tokens belong to the same caller.
func TestTestAndLiveAreSeparate(t *testing.T) {
	l := listing{functest.New(t, "ListOrdersFunction", wire)}
	live, test := functest.AddLiveAndTestTokens(t, l.Env, "acme")
	addOrders(t, l.Stack, "acme", 4)
	addOrders(t, l.Stack, stampduty.TestOwnerOf("acme"), 2)

	docs := func(t *testing.T, secret string) (map[string]bool, int) {
		t.Helper()
		b := functest.OK[listBody](t, l.list(map[string]string{"authorization": "Bearer " + secret}, "pageSize=100"))
		seen := map[string]bool{}
		for _, o := range b.Data {
			seen[o["documentId"].(string)] = true
		}
		return seen, b.Pagination["total"]
	}
	liveDocs, liveTotal := docs(t, live)
	testDocs, testTotal := docs(t, test)
	t.Run("TheLiveTokenSeesOnlyLiveOrders", func(t *testing.T) {
		if got, want := len(liveDocs), 4; got != want || liveTotal != want {
			t.Errorf("live token: %d orders listed, total %d; want %d", got, liveTotal, want)
		}
	})
	t.Run("TheTestTokenSeesOnlyTestOrders", func(t *testing.T) {
		if got, want := len(testDocs), 2; got != want || testTotal != want {
			t.Errorf("test token: %d orders listed, total %d; want %d", got, testTotal, want)
		}
	})
	t.Run("NoOrderInBothWorlds", func(t *testing.T) {
		for doc := range testDocs {
			if liveDocs[doc] {
				t.Errorf("order %s listed with both the test and the live token", doc)
			}
		}
	})
}

// TestLivemode: every listed order says its mode (test-mode.md), on every
// page and whatever fields selects: false for the test token's orders,
// true for the live token's.
func TestLivemode(t *testing.T) {
	l := listing{functest.New(t, "ListOrdersFunction", wire)}
	live, test := functest.AddLiveAndTestTokens(t, l.Env, "acme")
	addOrders(t, l.Stack, "acme", 3)
	addOrders(t, l.Stack, stampduty.TestOwnerOf("acme"), 3)
	for _, query := range []string{"", "page=2&pageSize=2", "pagination[page]=1&pagination[pageSize]=1", "fields[0]=createdAt",
		"fields=updatedAt,cancelledAt", "fields=livemode", "populate=*", "filters[documentId][$in][0]=x"} {
		for _, tok := range []struct {
			name, secret string
			want         bool
		}{{"Live", live, true}, {"Test", test, false}} {
			t.Run(tok.name+"/"+query, func(t *testing.T) {
				b := functest.OK[listBody](t, l.list(map[string]string{"authorization": "Bearer " + tok.secret}, query))
				if len(b.Data) == 0 && !strings.HasPrefix(query, "filters") {
					t.Fatal("no order listed")
				}
				for _, o := range b.Data {
					if got, ok := o["livemode"].(bool); !ok || got != tok.want {
						t.Errorf("order %v: livemode = %v, want %v", o["documentId"], o["livemode"], tok.want)
					}
				}
			})
		}
	}
}

// TestModeParameter: ?mode= on the order list. The token's own mode lists
// exactly what no mode lists; the other mode is 403 (not an empty list: a
// caller holding the wrong token is told so) with no DynamoDB call once
// the token is cached; any other value, or mode twice, is 400 naming mode.
func TestModeParameter(t *testing.T) {
	l := listing{functest.New(t, "ListOrdersFunction", wire)}
	live, test := functest.AddLiveAndTestTokens(t, l.Env, "acme")
	addOrders(t, l.Stack, "acme", 2)
	addOrders(t, l.Stack, stampduty.TestOwnerOf("acme"), 1)
	list := func(secret, query string) functest.Response {
		return l.list(map[string]string{"authorization": "Bearer " + secret}, query)
	}
	for _, tc := range []struct {
		name, secret, mode string
	}{{"LiveTokenAsksLive", live, "live"}, {"TestTokenAsksTest", test, "test"}} {
		t.Run(tc.name, func(t *testing.T) {
			without, with := list(tc.secret, "pageSize=10"), list(tc.secret, "pageSize=10&mode="+tc.mode)
			if with.Status != 200 || with.Body != without.Body {
				t.Errorf("with mode=%s: %d %s\nwithout: %d %s", tc.mode, with.Status, with.Body, without.Status, without.Body)
			}
		})
	}
	for _, tc := range []struct {
		name, secret, query string
		want                int
	}{
		{"LiveTokenAsksTest", live, "mode=test", 403},
		{"TestTokenAsksLive", test, "mode=live", 403},
		{"LiveTokenAsksTestWithFields", live, "fields=createdAt&mode=test", 403},
		{"UnknownMode", live, "mode=all", 400},
		{"ModeTwice", test, "mode=test&mode=test", 400},
		{"ModeAsAList", test, "mode[0]=test", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list(tc.secret, "") // the token is cached from here on
			l.Proxy.Take()
			r := list(tc.secret, tc.query)
			calls := l.Env.Operations(l.Proxy.Take())
			if r.Status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.want, r.Body)
			}
			if tc.want == 200 {
				return
			}
			if calls != "" {
				t.Errorf("a refused mode made DynamoDB calls: %s", calls)
			}
			e := r.Error(t)
			if tc.want == 400 {
				if got := strings.Join(e.Paths(), ","); got != "mode" {
					t.Errorf("error paths %q, want mode", got)
				}
			} else if e.Error.Name != "ForbiddenError" {
				t.Errorf("error name %q, want ForbiddenError", e.Error.Name)
			}
		})
	}
}
