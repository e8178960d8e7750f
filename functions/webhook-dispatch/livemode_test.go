package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// TestEventsSayTheirMode: every event of a test order says "livemode":
// false, at the top level and in the order it carries (data.order), and
// every event of a live order true (test-mode.md, as Stripe marks events),
// whether it goes out on its first attempt (the job the relay made) or on
// a retry (the job read back from the deliveries table), for events of the
// create and of a change by the caller, through the real store and files.
func TestEventsSayTheirMode(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const caller = "acme"
	testOwner := stampduty.TestOwnerOf(caller)
	types := []string{stampduty.EventOrderCreated, stampduty.EventOrderDocumentUploaded}
	w.register(caller, "/live", types...)
	w.register(testOwner, "/test", types...)
	w.register(caller, "/live-retried", types...)
	w.register(testOwner, "/test-retried", types...)
	firstFails := func(rw http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			rw.WriteHeader(http.StatusInternalServerError)
			return
		}
		rw.WriteHeader(http.StatusNoContent)
	}
	w.rc.On("/live-retried", firstFails)
	w.rc.On("/test-retried", firstFails)
	for _, owner := range []string{caller, testOwner} {
		o := createOrder(t, w.env, owner)
		if _, err := w.f.UploadDocument(ctx, owner, o.DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF,
			Body: []byte("%PDF-1.7\nx\n%%EOF\n")}); err != nil {
			t.Fatal(err)
		}
	}
	d := w.dispatcher(0)
	for _, at := range []time.Duration{0, time.Minute} {
		if _, _, err := w.pass(ctx, d, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path      string
		want      bool
		delivered int
	}{
		// The first request to a -retried path fails: its event goes out again
		// a minute later, from the job stored in the deliveries table.
		{"/live", true, 2}, {"/test", false, 2}, {"/live-retried", true, 3}, {"/test-retried", false, 3},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got := w.rc.At(tc.path)
			if len(got) != tc.delivered {
				t.Fatalf("%d deliveries, want %d", len(got), tc.delivered)
			}
			for _, dl := range got {
				var ev struct {
					Type     string `json:"type"`
					Livemode *bool  `json:"livemode"`
					Data     struct {
						Order struct {
							Livemode *bool `json:"livemode"`
						} `json:"order"`
					} `json:"data"`
				}
				if err := json.Unmarshal(dl.Body, &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Livemode == nil || *ev.Livemode != tc.want {
					t.Errorf("%s: top-level livemode %s, want %v: %s", ev.Type, functest.Shown(ev.Livemode), tc.want, dl.Body)
				}
				if ev.Data.Order.Livemode == nil || *ev.Data.Order.Livemode != tc.want {
					t.Errorf("%s: data.order.livemode %s, want %v", ev.Type, functest.Shown(ev.Data.Order.Livemode), tc.want)
				}
			}
		})
	}
}
