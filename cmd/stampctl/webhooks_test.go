package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// TestWebhooksFailing seeds webhooks, jobs and attempts straight in the
// tables and checks what `webhooks failing` prints: nothing failing, then
// the failing and the disabled webhooks as a table and as JSON.
func TestWebhooksFailing(t *testing.T) {
	h := newHarness(t)
	h.vars["WEBHOOKS_TABLE"], h.vars["DELIVERIES_TABLE"] = h.env.Table("WebhooksTable"), h.env.Table("DeliveriesTable")
	hooks, del := h.db.Webhooks(h.vars["WEBHOOKS_TABLE"]), h.db.Deliveries(h.vars["DELIVERIES_TABLE"])
	ctx := context.Background()

	t.Run("NoneSaysSo", func(t *testing.T) {
		if r := h.mustRun(t, "", "webhooks", "failing"); r.stdout != "no webhook is failing: no event waits after 1 or more attempts, and no webhook is disabled\n" {
			t.Errorf("stdout %q", r.stdout)
		}
		if r := h.mustRun(t, "", "webhooks", "failing", "-json"); r.stdout != "[]\n" {
			t.Errorf("-json: stdout %q, want an empty list", r.stdout)
		}
	})

	hook := func(doc, url string, enabled bool) webhooks.Webhook {
		return webhooks.Webhook{ID: 1, DocumentID: doc, URL: url, Events: []string{stampduty.EventOrderCreated}, Enabled: enabled,
			CreatedAt: "2026-11-23T09:00:00.000Z", Secret: webhooks.NewSecret()}
	}
	for owner, set := range map[string]webhooks.Set{
		"acme": {Live: []webhooks.Webhook{hook("wacme1", "https://acme.example.com/hooks", true), hook("wacme2", "https://acme.example.com/quiet", true)}},
		"bolt": {Live: []webhooks.Webhook{hook("wbolt1", "https://bolt.example.com/gone", false)}},
		"carl": {Gone: []webhooks.Gone{{Webhook: hook("wcarl1", "https://carl.example.com/deleted", true), Deleted: "2026-11-23T09:30:00.000Z"}}},
	} {
		if err := hooks.SaveWebhooks(ctx, owner, set, 0); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	// job stores a job of owner's webhook: an event made at at, n attempts,
	// next due at next ("" with done), each attempt answered status.
	job := func(owner, doc, at string, attempts int, next, done string, status int) {
		t.Helper()
		n++
		j := webhooks.Job{Owner: owner, Webhook: doc, Pending: stampduty.Pending{ID: "evt_" + strings.Repeat("e", 21) + string(rune('a'+n)) + "00",
			Type: stampduty.EventOrderCreated, At: at}, Seq: webhooks.Seq("o"+strings.Repeat("0", 23), int64(n), 0), Next: next, Done: done}
		if ok, err := del.Put(ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		for i := 1; i <= attempts; i++ {
			j.N, j.First = i, at
			tried := at[:17] + "0" + string(rune('0'+i)) + at[19:] // at + i seconds
			a := webhooks.Attempt{EventID: j.ID, Type: j.Type, Attempt: i, Status: status, At: tried, DurationMS: 3}
			if i < attempts || done == webhooks.JobDue {
				a.NextAttemptAt = &next
			}
			if err := del.Attempted(ctx, webhooks.AttemptDone{Job: j, Attempt: a}); err != nil {
				t.Fatal(err)
			}
		}
	}
	job("acme", "wacme1", "2026-11-23T10:05:00.000Z", 1, "2026-11-23T10:05:30.000Z", webhooks.JobDue, 503)
	job("acme", "wacme1", "2026-11-23T10:00:00.000Z", 3, "2026-11-23T10:10:00.000Z", webhooks.JobDue, 0)
	job("acme", "wacme1", "2026-11-23T09:00:00.000Z", 1, "", webhooks.JobDelivered, 204)
	job("acme", "wacme2", "2026-11-23T10:07:00.000Z", 0, "2026-11-23T10:07:00.000Z", webhooks.JobDue, 0)
	job("bolt", "wbolt1", "2026-11-23T08:00:00.000Z", 2, "", webhooks.JobDisabled, 410)
	job("carl", "wcarl1", "2026-11-23T07:00:00.000Z", 4, "2026-11-23T08:00:00.000Z", webhooks.JobDue, 500)

	t.Run("TheFailingAndTheDisabledAsATable", func(t *testing.T) {
		r := h.mustRun(t, "", "webhooks", "failing")
		ls := lines(r.stdout)
		want := [][]string{
			{"OWNER", "WEBHOOK", "ENABLED", "WAITING", "OLDEST", "EVENT", "MAX", "ATTEMPTS", "LAST", "ATTEMPT", "NEXT", "DUE", "URL"},
			{"acme", "wacme1", "true", "2", "2026-11-23T10:00:00.000Z", "3", "503", "at", "2026-11-23T10:05:01.000Z", "2026-11-23T10:05:30.000Z", "https://acme.example.com/hooks"},
			{"bolt", "wbolt1", "false", "0", "-", "0", "410", "at", "2026-11-23T08:00:02.000Z", "-", "https://bolt.example.com/gone"},
		}
		if len(ls) != len(want) {
			t.Fatalf("%d lines, want %d:\n%s", len(ls), len(want), r.stdout)
		}
		for i, l := range ls {
			if got := strings.Fields(l); !reflect.DeepEqual(got, want[i]) {
				t.Errorf("line %d = %q\nwant %q", i, got, want[i])
			}
			if i > 0 && strings.Index(l, "http") != strings.Index(ls[0], "URL") {
				t.Errorf("line %d is not aligned with the header:\n%s", i, r.stdout)
			}
		}
	})
	t.Run("MinAttemptsZeroListsTheNotYetTried", func(t *testing.T) {
		r := h.mustRun(t, "", "webhooks", "failing", "-min-attempts", "0")
		if !strings.Contains(r.stdout, "wacme2") || len(lines(r.stdout)) != 4 {
			t.Errorf("stdout:\n%s\nwant wacme2's event, not yet tried, too", r.stdout)
		}
		r = h.mustRun(t, "", "webhooks", "failing", "--min-attempts", "2")
		if f := strings.Fields(lines(r.stdout)[1]); f[1] != "wacme1" || f[3] != "1" {
			t.Errorf("stdout:\n%s\nwant only wacme1's event of 3 attempts waiting", r.stdout)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		r := h.mustRun(t, "", "webhooks", "failing", "--json")
		var got []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v:\n%s", err, r.stdout)
		}
		next := "2026-11-23T10:05:30.000Z"
		want := []map[string]any{
			{"owner": "acme", "livemode": true, "webhook": "wacme1", "url": "https://acme.example.com/hooks", "enabled": true, "waiting": 2.0,
				"oldest_event_at": "2026-11-23T10:00:00.000Z", "max_attempts": 3.0, "next_attempt_at": next,
				"last_attempt": map[string]any{"event_id": "evt_" + strings.Repeat("e", 21) + "b00", "type": "order.created", "attempt": 1.0,
					"status": 503.0, "at": "2026-11-23T10:05:01.000Z", "duration_ms": 3.0, "next_attempt_at": next}},
			{"owner": "bolt", "livemode": true, "webhook": "wbolt1", "url": "https://bolt.example.com/gone", "enabled": false, "waiting": 0.0,
				"oldest_event_at": nil, "max_attempts": 0.0, "next_attempt_at": nil,
				"last_attempt": map[string]any{"event_id": "evt_" + strings.Repeat("e", 21) + "f00", "type": "order.created", "attempt": 2.0,
					"status": 410.0, "at": "2026-11-23T08:00:02.000Z", "duration_ms": 3.0, "next_attempt_at": nil}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("-json =\n%s\nwant %v", r.stdout, want)
		}
	})
}

// TestWebhooksFailingNamesTheCaller: a failing webhook registered with a
// test token is listed under its caller's name, marked "(test)" in the
// table and livemode false in JSON, never under the test principal's key.
func TestWebhooksFailingNamesTheCaller(t *testing.T) {
	h := newHarness(t)
	h.vars["WEBHOOKS_TABLE"], h.vars["DELIVERIES_TABLE"] = h.env.Table("WebhooksTable"), h.env.Table("DeliveriesTable")
	hooks, del := h.db.Webhooks(h.vars["WEBHOOKS_TABLE"]), h.db.Deliveries(h.vars["DELIVERIES_TABLE"])
	ctx := context.Background()
	owner := stampduty.TestOwnerOf("dana")
	w := webhooks.Webhook{ID: 1, DocumentID: "wdana1", URL: "https://dana.example.com/hooks", Events: []string{stampduty.EventOrderCreated},
		Enabled: true, CreatedAt: "2026-11-23T09:00:00.000Z", Secret: webhooks.NewSecret()}
	if err := hooks.SaveWebhooks(ctx, owner, webhooks.Set{Live: []webhooks.Webhook{w}}, 0); err != nil {
		t.Fatal(err)
	}
	next := "2026-11-23T10:05:30.000Z"
	j := webhooks.Job{Owner: owner, Webhook: w.DocumentID, Pending: stampduty.Pending{ID: "evt_" + strings.Repeat("d", 21) + "a00",
		Type: stampduty.EventOrderCreated, At: "2026-11-23T10:05:00.000Z"}, Seq: webhooks.Seq("o"+strings.Repeat("0", 23), 1, 0), Next: next}
	if ok, err := del.Put(ctx, j); !ok || err != nil {
		t.Fatal(ok, err)
	}
	j.N, j.First = 1, j.At
	if err := del.Attempted(ctx, webhooks.AttemptDone{Job: j, Attempt: webhooks.Attempt{EventID: j.ID, Type: j.Type, Attempt: 1,
		Status: 500, At: "2026-11-23T10:05:01.000Z", DurationMS: 3, NextAttemptAt: &next}}); err != nil {
		t.Fatal(err)
	}
	r := h.mustRun(t, "", "webhooks", "failing")
	if ls := lines(r.stdout); len(ls) != 2 || !strings.HasPrefix(ls[1], "dana (test) ") || strings.Contains(r.stdout, "~test") {
		t.Errorf("stdout:\n%s\nwant dana's webhook listed as \"dana (test)\"", r.stdout)
	}
	r = h.mustRun(t, "", "webhooks", "failing", "--json")
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if len(got) != 1 || got[0]["owner"] != "dana" || got[0]["livemode"] != false {
		t.Errorf("-json =\n%s\nwant owner dana, livemode false", r.stdout)
	}
}
