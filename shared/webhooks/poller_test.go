package webhooks_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"stampduty/shared/webhooks"
)

// TestPoller: the pollers' parts of a sharded key: the zero value reads
// every shard as segment 0 of 1; poller i of n reads the shards s with
// s mod n = i, so each of the 16 is read by exactly one poller; a poller
// outside its count is not one.
func TestPoller(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 16} {
		owners := make([]int, 16)
		for i := range max(n, 1) {
			p := webhooks.Poller{Index: i, Count: n}
			if !p.Valid() {
				t.Errorf("%+v is not valid", p)
			}
			if seg, total := p.Segment(); seg != i || total != max(n, 1) {
				t.Errorf("%+v: segment %d of %d, want %d of %d", p, seg, total, i, max(n, 1))
			}
			for s := range 16 {
				if p.Owns(s) {
					owners[s]++
				}
			}
		}
		for s, c := range owners {
			if c != 1 {
				t.Errorf("%d pollers: shard %d read by %d of them, want 1", n, s, c)
			}
		}
	}
	for _, p := range []webhooks.Poller{{Index: 2, Count: 2}, {Index: -1, Count: 2}, {Index: 1, Count: 0}} {
		if p.Valid() {
			t.Errorf("%+v is valid", p)
		}
	}
}

// TestPollerOf: the dispatch function's input names its poller; EventBridge's
// plain Scheduled Event (or no payload) is the only poller, as is 1 of 1;
// anything else that names a poller but not one of the allowed (1, 2, 4),
// or not as whole numbers, is refused rather than polled.
func TestPollerOf(t *testing.T) {
	scheduled := `{"version":"0","id":"x","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`
	for _, c := range []struct {
		payload string
		want    webhooks.Poller
	}{
		{"", webhooks.Poller{}},
		{"null", webhooks.Poller{}},
		{"{}", webhooks.Poller{}},
		{scheduled, webhooks.Poller{}},
		{`{"poller": 0, "pollers": 1}`, webhooks.Poller{}},
		{`{"poller": 0, "pollers": 2}`, webhooks.Poller{Index: 0, Count: 2}},
		{`{"poller": 1, "pollers": 2}`, webhooks.Poller{Index: 1, Count: 2}},
		{` {"pollers": 4, "poller": 3, "other": true} `, webhooks.Poller{Index: 3, Count: 4}},
	} {
		if got, err := webhooks.PollerOf([]byte(c.payload)); err != nil || got != c.want {
			t.Errorf("PollerOf(%s) = %+v, %v; want %+v", c.payload, got, err, c.want)
		}
	}
	for _, c := range []struct{ payload, says string }{
		{`{"poller": 1}`, "go together"},
		{`{"pollers": 2}`, "go together"},
		{`{"poller": null, "pollers": 2}`, "go together"},
		{`{"poller": "1", "pollers": 2}`, `"poller" is not a whole number`},
		{`{"poller": 1.5, "pollers": 2}`, `"poller" is not a whole number`},
		{`{"poller": 0, "pollers": "2"}`, `"pollers" is not a whole number`},
		{`{"poller": 0, "pollers": true}`, `"pollers" is not a whole number`},
		{`{"poller": 0, "pollers": 3}`, "3 pollers, want one of [1 2 4]"},
		{`{"poller": 0, "pollers": 0}`, "0 pollers"},
		{`{"poller": 0, "pollers": 16}`, "16 pollers"},
		{`{"poller": 2, "pollers": 2}`, "poller 2 of 2 does not exist"},
		{`{"poller": -1, "pollers": 4}`, "poller -1 of 4 does not exist"},
		{`[0, 2]`, "not a JSON object"},
		{`"poller"`, "not a JSON object"},
		{`{"poller": 0,`, "not a JSON object"},
	} {
		_, err := webhooks.PollerOf([]byte(c.payload))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("PollerOf(%s) = %v, want an error saying %q", c.payload, err, c.says)
		}
	}
}

// TestPollersRunEachAsItsPoller: each invocation runs as the poller its
// payload names, on a Dispatcher made once per poller and kept for its
// later runs; a malformed payload is an error and polls nothing.
func TestPollersRunEachAsItsPoller(t *testing.T) {
	h := newHarness(t)
	var made []webhooks.Poller
	var log strings.Builder
	ps := &webhooks.Pollers{Log: &log, New: func(p webhooks.Poller) *webhooks.Dispatcher {
		made = append(made, p)
		return h.dispatcher()
	}}
	run := func(payload string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		return ps.Run(ctx, []byte(payload), 10*time.Millisecond, 250*time.Millisecond)
	}
	for _, payload := range []string{`{"poller": 1, "pollers": 2}`, `{"poller": 0, "pollers": 2}`, `{"poller": 1, "pollers": 2}`, `{"detail-type": "Scheduled Event"}`, ""} {
		if err := run(payload); err != nil {
			t.Fatalf("run %s: %v", payload, err)
		}
	}
	if err := run(`{"poller": 2, "pollers": 2}`); err == nil || !strings.Contains(err.Error(), "poller 2 of 2 does not exist") {
		t.Errorf("run of poller 2 of 2: %v, want its error", err)
	}
	if want := []webhooks.Poller{{Index: 1, Count: 2}, {Index: 0, Count: 2}, {}}; !slices.Equal(made, want) {
		t.Errorf("dispatchers made for %v, want %v (one per poller)", made, want)
	}
	if got, want := log.String(), "webhooks: polling as poller 1 of 2\nwebhooks: polling as poller 0 of 2\nwebhooks: polling as poller 0 of 1\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
}
