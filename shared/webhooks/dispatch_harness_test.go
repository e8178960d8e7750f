package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/fake"
	"stampduty/shared/webhooks"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// advance moves the clock on by d.
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// harness is a dispatcher over fake stores with a settable clock.
type harness struct {
	t     *testing.T
	out   *Outbox
	hooks *Hooks
	jobs  *Jobs
	clock *clock
	d     *webhooks.Dispatcher
}

// newHarness returns a harness whose dispatcher delivers to loopback
// receivers with a delivery timeout of 200 ms.
func newHarness(t *testing.T) *harness {
	h := &harness{t: t, out: &Outbox{}, hooks: &Hooks{}, jobs: &Jobs{},
		clock: &clock{t: time.Date(2026, 11, 21, 4, 9, 0, 0, time.UTC)}}
	h.d = h.dispatcher()
	return h
}

// dispatcher returns another dispatcher over the harness's stores.
func (h *harness) dispatcher() *webhooks.Dispatcher {
	return &webhooks.Dispatcher{Outbox: h.out, Hooks: h.hooks, Jobs: h.jobs, Files: fake.Files{},
		Deliverer: webhooks.Deliverer{Guard: webhooks.Guard{Local: true}, Timeout: 200 * time.Millisecond},
		Now:       h.clock.Now}
}

// hook registers a webhook of owner to url for events.
func (h *harness) hook(owner, doc, url string, enabled bool, events ...string) {
	h.hooks.Add(owner, webhooks.Webhook{DocumentID: doc, URL: url, Events: events, Enabled: enabled,
		Secret: "whsec_" + doc + "-secret-secret-secret-secret"})
}

// change stores a change of owner's order doc and returns its event id.
func (h *harness) change(owner, doc, typ string) string {
	h.t.Helper()
	id, err := stampduty.NewEventID()
	if err != nil {
		h.t.Fatal(err)
	}
	st := "Pending"
	var prev *string
	if typ == stampduty.EventOrderStatusChanged {
		prev = &st
	}
	h.out.Change(owner, doc, stampduty.Pending{ID: id, Type: typ, At: stampduty.FormatTime(h.clock.Now()), PreviousStatus: prev, Status: &st})
	return id
}

// pass relays then delivers once and returns the delivery's report.
func (h *harness) pass() webhooks.DeliverReport {
	h.t.Helper()
	if _, err := h.d.Relay(context.Background()); err != nil {
		h.t.Fatalf("Relay: %v", err)
	}
	rep, err := h.d.Deliver(context.Background())
	if err != nil {
		h.t.Fatalf("Deliver: %v", err)
	}
	return rep
}

// quickPass makes a pass and fails the test if it took over 2 s: what
// makes the receiver slow (what) is cut at the 200 ms delivery timeout or
// the 64 KiB answer bound.
func (h *harness) quickPass(what string) {
	h.t.Helper()
	start := time.Now()
	h.pass()
	if took := time.Since(start); took > 2*time.Second {
		h.t.Errorf("%s held the pass %s with a 200 ms timeout", what, took)
	}
}

// job returns the job of owner's webhook doc for event id.
func (h *harness) job(owner, doc, id string) webhooks.Job {
	h.t.Helper()
	for _, j := range h.jobs.All() {
		if j.Owner == owner && j.Webhook == doc && j.ID == id {
			return j
		}
	}
	h.t.Fatalf("no job of event %s for webhook %s", id, doc)
	return webhooks.Job{}
}

// got is one request a receiver got.
type got struct {
	header string // Stampduty-Event-Id
	event  webhooks.Event
	order  string
}

// receiver is a test receiver that records what it gets and answers with
// the status its script gives the n-th request (from 0), 200 past its end.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []got
	script func(n int, w http.ResponseWriter) int
}

// newReceiver starts a receiver answering the given statuses in turn.
func newReceiver(t *testing.T, statuses ...int) *receiver {
	return newScripted(t, func(n int, _ http.ResponseWriter) int {
		if n < len(statuses) {
			return statuses[n]
		}
		return http.StatusOK
	})
}

// newScripted starts a receiver whose answers script gives.
func newScripted(t *testing.T, script func(n int, w http.ResponseWriter) int) *receiver {
	r := &receiver{script: script}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// serve records a request and answers it.
func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var ev webhooks.Event
	json.Unmarshal(b, &ev)
	var o struct {
		DocumentID string `json:"documentId"`
	}
	json.Unmarshal(ev.Data.Order, &o)
	r.mu.Lock()
	n := len(r.got)
	r.got = append(r.got, got{header: req.Header.Get(webhooks.HeaderEventID), event: ev, order: o.DocumentID})
	r.mu.Unlock()
	if code := r.script(n, w); code != 0 {
		w.WriteHeader(code)
	}
}

// ids returns the event ids the receiver got, in order.
func (r *receiver) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, g := range r.got {
		out = append(out, g.event.ID)
	}
	return out
}

// requests returns what the receiver got.
func (r *receiver) requests() []got {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// assertIDs fails t unless the receiver got exactly want, in that order.
func assertIDs(t *testing.T, name string, r *receiver, want ...string) {
	t.Helper()
	if got := r.ids(); !slices.Equal(got, want) {
		t.Errorf("%s got events %v, want %v", name, got, want)
	}
}

// assertAttempts fails t unless the attempt records of owner's webhook doc
// have the given statuses, the last with no next attempt when last is set.
func assertAttempts(t *testing.T, h *harness, owner, doc string, statuses ...int) []webhooks.Attempt {
	t.Helper()
	as := h.jobs.Log(owner, doc)
	var codes []int
	for _, a := range as {
		codes = append(codes, a.Status)
	}
	if !slices.Equal(codes, statuses) {
		t.Errorf("attempts of %s answered %v, want %v", doc, codes, statuses)
	}
	return as
}

const (
	created = stampduty.EventOrderCreated
	changed = stampduty.EventOrderStatusChanged
)

// errString returns "ok" for nil, else err's message.
func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// equal reports whether a and b hold the same strings in the same order.
func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
