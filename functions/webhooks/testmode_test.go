package main

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/webhooks"
)

// TestTestAndLiveAreSeparate: a caller's test webhooks and live webhooks
// are two worlds (test-mode.md, "Test tokens"): each token lists only its
// own mode's; neither can delete, read the deliveries of, or redeliver an
// event of the other's (404, as for another caller's, and nothing
// changes); the limit of webhooks.MaxPerCaller counts each mode apart.
func TestTestAndLiveAreSeparate(t *testing.T) {
	s := functest.New(t, "WebhooksFunction", wire)
	ctx := context.Background()
	liveToken, testToken := functest.AddLiveAndTestTokens(t, s.Env, "acme")
	live, test := caller{s, liveToken}, caller{s, testToken}
	liveHook := functest.OK[registered](t, live.register(t, "https://127.0.0.1/live", stampduty.EventOrderCreated)).Data.DocumentID
	testHook := functest.OK[registered](t, test.register(t, "https://127.0.0.1/test", stampduty.EventOrderCreated)).Data.DocumentID

	// One delivered event of each mode's order, to its webhook.
	jobs := s.Env.DB().Deliveries(s.Env.Table("DeliveriesTable"))
	at := stampduty.FormatTime(time.Now().Add(-time.Hour))
	type event struct{ owner, hook, id string }
	newEvent := func(owner, hook string) event {
		o := functest.AddOrders(t, s.Env, owner, 1)[0]
		id, _ := stampduty.NewEventID()
		j := webhooks.Job{Owner: owner, Webhook: hook, Pending: stampduty.Pending{ID: id, Type: stampduty.EventOrderCreated, At: at, Order: o},
			Seq: webhooks.Seq(o.DocumentID, 1, 0), First: at, N: 1, Done: webhooks.JobDelivered}
		if ok, err := jobs.Put(ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		return event{owner, hook, id}
	}
	liveEvent, testEvent := newEvent("acme", liveHook), newEvent(stampduty.TestOwnerOf("acme"), testHook)
	job := func(e event) webhooks.Job {
		j, ok, err := jobs.Job(ctx, e.owner, e.hook, e.id)
		if !ok || err != nil {
			t.Fatalf("the job of %s: %v %v", e.id, ok, err)
		}
		return j
	}

	t.Run("EachTokenListsOnlyItsOwnMode", func(t *testing.T) {
		for _, tc := range []struct {
			c    caller
			want string
		}{{live, liveHook}, {test, testHook}} {
			if got := tc.c.list(t); len(got) != 1 || got[0].DocumentID != tc.want {
				t.Errorf("lists %+v, want only %s", got, tc.want)
			}
		}
	})
	for _, tc := range []struct {
		name        string
		c, owner    caller
		hook, event string
		e           event
	}{
		{"LiveTokenCannotTouchATestWebhook", live, test, testHook, testEvent.id, testEvent},
		{"TestTokenCannotTouchALiveWebhook", test, live, liveHook, liveEvent.id, liveEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner, before := tc.owner, job(tc.e)
			for _, req := range []struct{ method, path string }{
				{"DELETE", "/api/webhooks/" + tc.hook},
				{"GET", "/api/webhooks/" + tc.hook + "/deliveries"},
				{"POST", "/api/webhook-events/" + tc.event + "/redeliver"},
			} {
				wantError(t, tc.c.do(req.method, req.path, ""), http.StatusNotFound, "cannot be found")
			}
			if after := job(tc.e); !reflect.DeepEqual(after, before) {
				t.Errorf("the job changed: %+v, was %+v", after, before)
			}
			if !slices.ContainsFunc(owner.list(t), func(w webhooks.Webhook) bool { return w.DocumentID == tc.hook }) {
				t.Error("the webhook is gone")
			}
		})
	}
	t.Run("EachTokenReachesItsOwn", func(t *testing.T) {
		for _, tc := range []struct {
			c    caller
			hook string
			e    event
		}{{live, liveHook, liveEvent}, {test, testHook, testEvent}} {
			if got := functest.OK[attempts](t, tc.c.do("GET", "/api/webhooks/"+tc.hook+"/deliveries", "")).Data; len(got) != 0 {
				t.Errorf("deliveries %+v, want none recorded", got)
			}
			r := tc.c.do("POST", "/api/webhook-events/"+tc.e.id+"/redeliver", "")
			if r.Status != http.StatusAccepted || job(tc.e).Done != webhooks.JobDue {
				t.Errorf("redeliver: %d %s, want 202 and the job due", r.Status, r.Body)
			}
			if r := tc.c.do("DELETE", "/api/webhooks/"+tc.hook, ""); r.Status != http.StatusOK {
				t.Errorf("delete: %d %s", r.Status, r.Body)
			}
		}
	})
	t.Run("TheLimitCountsEachModeApart", func(t *testing.T) {
		fill := func(c caller) []webhooks.Webhook {
			for range webhooks.MaxPerCaller - len(c.list(t)) {
				functest.OK[registered](t, c.register(t, "https://127.0.0.1/hook", stampduty.EventOrderCreated))
			}
			return c.list(t)
		}
		liveHooks := fill(live)
		// Ten live webhooks, and the test token registers one more.
		functest.OK[registered](t, test.register(t, "https://127.0.0.1/hook", stampduty.EventOrderCreated))
		testHooks := fill(test)
		for _, c := range []caller{live, test} {
			wantError(t, c.register(t, "https://127.0.0.1/hook", stampduty.EventOrderCreated), http.StatusConflict, "at most 10 webhooks")
		}
		ids := map[string]bool{}
		for _, w := range slices.Concat(liveHooks, testHooks) {
			ids[w.DocumentID] = true
		}
		if got, want := len(ids), 2*webhooks.MaxPerCaller; got != want {
			t.Errorf("%d webhooks of the two modes, want %d", got, want)
		}
	})
}
