package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// seedFailing stores, straight in env's tables, the webhooks of three
// callers: acme's, whose event waits after two attempts answered 500;
// bolt's, which a receiver's 410 disabled; carl's, whose event was
// delivered at the first attempt (not failing).
func seedFailing(t *testing.T, env *storetest.Env) {
	t.Helper()
	ctx := context.Background()
	hooks, del := env.DB().Webhooks(env.Table("WebhooksTable")), env.DB().Deliveries(env.Table("DeliveriesTable"))
	hook := func(doc, url string, enabled bool) webhooks.Webhook {
		return webhooks.Webhook{ID: 1, DocumentID: doc, URL: url, Events: []string{stampduty.EventOrderCreated}, Enabled: enabled,
			CreatedAt: "2026-11-23T09:00:00.000Z", Secret: webhooks.NewSecret()}
	}
	for owner, h := range map[string]webhooks.Webhook{
		"acme": hook("wacme1", "https://acme.example.com/hooks", true),
		"bolt": hook("wbolt1", "https://bolt.example.com/gone", false),
		"carl": hook("wcarl1", "https://carl.example.com/fine", true),
	} {
		if err := hooks.SaveWebhooks(ctx, owner, webhooks.Set{Live: []webhooks.Webhook{h}}, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i, j := range []struct {
		owner, doc, next, done string
		attempts, status       int
	}{
		{"acme", "wacme1", "2026-11-23T10:10:00.000Z", webhooks.JobDue, 2, 500},
		{"bolt", "wbolt1", "", webhooks.JobDisabled, 1, 410},
		{"carl", "wcarl1", "", webhooks.JobDelivered, 1, 204},
	} {
		at := "2026-11-23T10:00:00.000Z"
		job := webhooks.Job{Owner: j.owner, Webhook: j.doc, Pending: stampduty.Pending{ID: "evt_" + strings.Repeat("e", 21) + string(rune('a'+i)) + "00",
			Type: stampduty.EventOrderCreated, At: at}, Seq: webhooks.Seq("o"+strings.Repeat("0", 23), int64(i+1), 0), Next: j.next, Done: j.done}
		if ok, err := del.Put(ctx, job); !ok || err != nil {
			t.Fatal(ok, err)
		}
		for n := 1; n <= j.attempts; n++ {
			job.N, job.First = n, at
			a := webhooks.Attempt{EventID: job.ID, Type: job.Type, Attempt: n, Status: j.status, At: "2026-11-23T10:00:0" + string(rune('0'+n)) + ".000Z", DurationMS: 3}
			if j.done == webhooks.JobDue {
				a.NextAttemptAt = &j.next
			}
			if err := del.Attempted(ctx, webhooks.AttemptDone{Job: job, Attempt: a}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestFailingWebhooks: GET /api/console/webhooks/failing answers, for an
// operator or an admin, what `stampctl webhooks failing` shows: an empty
// list when none fails; then the webhook whose event waits after failed
// attempts, and the one a 410 disabled, each with its last attempt, and
// not the one that delivers. Anyone else is refused before any DynamoDB
// call. Its grants are checked with the other routes' (TestConsoleOrders).
func TestFailingWebhooks(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	failing := func(claims map[string]string) functest.Response {
		t.Helper()
		ev := functest.Request(http.MethodGet, "/api/console/webhooks/failing", "", nil, "")
		if claims != nil {
			ev = functest.AsStaff(ev, claims)
		}
		return s.Invoke(ev)
	}
	operator := functest.StaffClaims("operator@console.local", "operator")

	t.Run("NoneFailingIsAnEmptyList", func(t *testing.T) {
		if got, want := failing(operator).Body, `{"data":[],"meta":{}}`; got != want {
			t.Errorf("body %s, want %s", got, want)
		}
	})

	seedFailing(t, s.Env)
	for _, tc := range []struct {
		name   string
		claims map[string]string
	}{
		{"AnOperatorSeesTheFailing", operator},
		{"AnAdminSeesTheFailing", functest.StaffClaims("admin@console.local", "admin")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := functest.OK[failingResponse](t, failing(tc.claims))
			if len(got.Data) != 2 {
				t.Fatalf("%d webhooks listed, want acme's and bolt's: %+v", len(got.Data), got.Data)
			}
			acme, bolt := got.Data[0], got.Data[1]
			if acme.Owner != "acme" || acme.Webhook != "wacme1" || acme.Waiting != 1 || acme.MaxAttempts != 2 || !acme.Enabled ||
				acme.LastAttempt == nil || acme.LastAttempt.Status != 500 || acme.LastAttempt.Attempt != 2 || acme.URL != "https://acme.example.com/hooks" {
				t.Errorf("first %+v (last %+v), want acme's webhook waiting after 2 attempts answered 500", acme, acme.LastAttempt)
			}
			if bolt.Owner != "bolt" || bolt.Enabled || bolt.Waiting != 0 || bolt.LastAttempt == nil || bolt.LastAttempt.Status != 410 {
				t.Errorf("second %+v, want bolt's webhook disabled by a 410", bolt)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		claims map[string]string
		status int
	}{
		{"NeitherGroupIsForbidden", functest.StaffClaims("new@console.local"), http.StatusForbidden},
		{"NoStaffClaimsIsUnauthorized", nil, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Proxy.Take()
			r := failing(tc.claims)
			if got, want := r.Status, tc.status; got != want {
				t.Fatalf("status %d, want %d: %s", got, want, r.Body)
			}
			if got := s.Proxy.Take(); len(got) != 0 {
				t.Errorf("%d DynamoDB calls before the role was checked; want none", len(got))
			}
		})
	}
}
