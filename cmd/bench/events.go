package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"stampduty/cmd/internal/schedule"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/fake"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// The webhook dispatch is a scheduled function with no route: its cold
// start is in section 1; section 6 is the DynamoDB calls and units of
// relaying and delivering an event, section 7 what a million events and a
// month of polling cost, section 8 (latency.go) how soon a change reaches
// its receiver.

// dispatchID is the webhook dispatch function's logical id.
const dispatchID = "WebhookDispatchFunction"

// scheduledLabels names each scheduled function the bench measures by the
// label its rows of sections 6–8 begin with. A new scheduled function of
// template.yaml needs a label and rows of its own (TestEveryFunctionIsMeasured).
var scheduledLabels = map[string]string{dispatchID: "webhook dispatch"}

// coldOnly names the scheduled functions measured by their cold start
// (section 1) only: the file sweeper, whose runs find nothing due on the
// quiet tables; its cost per upload is the uploads' own (shared/orders
// TestUploadCosts); and the ledger's reconciler, whose calls per run are
// counted by its own test (functions/reconciler).
var coldOnly = map[string]bool{"FileSweeperFunction": true, "ReconcilerFunction": true}

// onePass is the timeout of the scheduled instances of section 1: their
// run's deadline is past its last-pass margin already, so the first
// invocation is the init's one pass.
const onePass = time.Second

// scheduledEvent returns the Scheduled Event of the first schedule of name.
func (b *bench) scheduledEvent(name string) ([]byte, error) {
	f, ok := b.tmpl.Function(name)
	if !ok || len(f.Schedules) == 0 {
		return nil, fmt.Errorf("template.yaml has no scheduled %s", name)
	}
	return schedule.Event(f.Schedules[0].Name, localdb.Region, time.Now()), nil
}

// isScheduled reports whether name is a function of the template run by a
// schedule, without a route.
func (b *bench) isScheduled(name string) bool {
	f, ok := b.tmpl.Function(name)
	return ok && len(f.Routes) == 0 && len(f.Schedules) > 0
}

// usage is DynamoDB calls and units by DynamoDB's rules.
type usage struct{ Calls, Read, Write float64 }

func (u usage) add(v usage) usage {
	return usage{u.Calls + v.Calls, u.Read + v.Read, u.Write + v.Write}
}

// perEvent is a step's DynamoDB calls per event by kind of call ("Query
// OrdersTable outbox", "PutItem DeliveriesTable"), kinds in order of first
// appearance.
type perEvent struct {
	Kinds []string
	By    map[string]usage
}

// tally returns calls per event of n events; table maps a table's name to
// its logical id. Every call must be accounted.
func tally(calls []storetest.ProxyCall, n int, table func(string) string) (perEvent, error) {
	p := perEvent{By: map[string]usage{}}
	for _, c := range calls {
		if !c.Accounted {
			return p, fmt.Errorf("%s %s was not accounted", c.Operation, c.Table)
		}
		k := strings.TrimSpace(c.Operation + " " + table(c.Table) + " " + c.Index)
		if c.ErrType != "" {
			k += " (" + c.ErrType + ")"
		}
		if _, ok := p.By[k]; !ok {
			p.Kinds = append(p.Kinds, k)
		}
		p.By[k] = p.By[k].add(usage{1, c.Billed.Read, c.Billed.Write})
	}
	for k, u := range p.By { // sums, then means: no rounding on the way
		p.By[k] = usage{u.Calls / float64(n), u.Read / float64(n), u.Write / float64(n)}
	}
	return p, nil
}

// minus returns p − q by kind, the kinds that differ only.
func (p perEvent) minus(q perEvent) perEvent {
	d := perEvent{By: map[string]usage{}}
	round := func(v float64) float64 { return math.Round(v*1e9) / 1e9 }
	for _, k := range append(slices.Clone(p.Kinds), q.Kinds...) {
		a, b := p.By[k], q.By[k]
		if u := (usage{round(a.Calls - b.Calls), round(a.Read - b.Read), round(a.Write - b.Write)}); u != (usage{}) && d.By[k] == (usage{}) {
			d.Kinds, d.By[k] = append(d.Kinds, k), u
		}
	}
	return d
}

// total returns the sum over the kinds.
func (p perEvent) total() (t usage) {
	for _, k := range p.Kinds {
		t = t.add(p.By[k])
	}
	return t
}

// The steps of section 6, in order.
const (
	stepRelay        = "relay, 1 webhook"
	stepRelayExtra   = "relay, each extra webhook"
	stepDeliver      = "deliver once (2xx), 1 webhook"
	stepDeliverExtra = "deliver once (2xx), each extra webhook"
	stepRetry        = "a failed attempt (500, retried later), 1 webhook"
	stepEmpty        = "an empty pass (no event), per pass"
)

var stepOrder = []string{stepRelay, stepRelayExtra, stepDeliver, stepDeliverExtra, stepRetry, stepEmpty}

// dispatchResults are the webhook dispatch's measurements.
type dispatchResults struct {
	Steps  map[string]perEvent      // section 6's calls per event by step (per pass for stepEmpty)
	Wall   map[string]time.Duration // wall time per event of a step's passes, measured without accounting
	Events int                      // events each step measured
	// OrderBytes is the size of the steps' order item with its event
	// pending, and OrderWrite its create's write units (with its index
	// entries).
	OrderBytes int
	OrderWrite float64
	// Latency holds section 8's times from a change to its first attempt,
	// PollsPerSecond the relay passes (Scans of the outbox index) the
	// scheduled binary made a second,
	// and LatencyNote how section 8 was run.
	Latency        durations
	PollsPerSecond float64
	LatencyNote    string
	// KeepUp is section 11's.
	KeepUp keepUp
}

// eventBench measures the dispatcher's DynamoDB calls, in process, over one
// copy of the template's tables through a proxy.
type eventBench struct {
	db, direct *store.DB // through the proxy, and around it for what is not measured
	proxy      *storetest.Proxy
	table      func(logicalID string) string
	body       *stampduty.OrderBody // of each order created
	n          int                  // events per step: one outbox Query's worth (webhooks.DefaultBatch)
}

// logical returns the logical id of a table name.
func (e *eventBench) logical(name string) string {
	for _, id := range []string{"OrdersTable", "WebhooksTable", "DeliveriesTable", "CountersTable", "ArticlesTable"} {
		if e.table(id) == name {
			return id
		}
	}
	return name
}

// dispatcher returns a dispatcher over the proxied store, delivering to
// loopback receivers. The orders have no files to sign. It makes one
// attempt at a time, so that each attempt makes its own read of the
// webhook (attempts of a caller that start together share one): the units
// are the most an event costs, whatever the timing.
func (e *eventBench) dispatcher() *webhooks.Dispatcher {
	return &webhooks.Dispatcher{Outbox: e.db.Orders(e.table("OrdersTable")), Hooks: e.db.Webhooks(e.table("WebhooksTable")),
		Jobs: e.db.Deliveries(e.table("DeliveriesTable")), Files: fake.Files{}, Deliverer: webhooks.Deliverer{Guard: webhooks.Guard{Local: true}},
		Parallel: 1, PerWebhook: 1}
}

// register gives owner a webhook at url for events, around the proxy.
func register(ctx context.Context, db *store.DB, table func(string) string, owner, url string, events ...string) error {
	reg := &webhooks.Registry{Hooks: db.Webhooks(table("WebhooksTable")), Jobs: db.Deliveries(table("DeliveriesTable")),
		IDs: db.IDs(table("CountersTable"), store.IDBlock), Guard: webhooks.Guard{Local: true}, Now: time.Now}
	if _, err := reg.Register(ctx, owner, webhooks.Registration{URL: url, Events: events}); err != nil {
		return fmt.Errorf("register a webhook: %w", err)
	}
	return nil
}

// passes runs pass until it does nothing and returns the calls and the wall
// time of the passes that did something, and what they did in all.
func (e *eventBench) passes(mode storetest.Mode, pass func() (int, error)) (calls []storetest.ProxyCall, wall time.Duration, done int, err error) {
	for {
		var n int
		var took time.Duration
		got, err := within(e.proxy, mode, func() (err error) {
			t0 := time.Now()
			n, err = pass()
			took = time.Since(t0)
			return err
		})
		if err != nil || n == 0 {
			return calls, wall, done, err
		}
		calls, wall, done = append(calls, got...), wall+took, done+n
	}
}

// scenario gives a new owner hooks webhooks (every event type) whose
// receiver answers status and e.n new orders, each with its order.created
// event pending; relays and delivers the events, measuring as mode says;
// and returns the calls and wall times of the relay [0] and delivery [1].
func (e *eventBench) scenario(ctx context.Context, owner string, hooks, status int, mode storetest.Mode) (calls [2][]storetest.ProxyCall, wall [2]time.Duration, err error) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
	}))
	defer rc.Close()
	all := []string{stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged, stampduty.EventOrderDocumentUploaded, stampduty.EventOrderCertificateAttached}
	for i := range hooks {
		if err := register(ctx, e.direct, e.table, owner, fmt.Sprintf("%s/%d", rc.URL, i), all...); err != nil {
			return calls, wall, err
		}
	}
	c := creator(e.direct, e.table)
	for range e.n {
		if _, err := c.Create(ctx, owner, e.body, nil); err != nil {
			return calls, wall, fmt.Errorf("create an order: %w", err)
		}
	}
	d := e.dispatcher()
	var relayed int
	calls[0], wall[0], relayed, err = e.passes(mode, func() (int, error) {
		rep, err := d.Relay(ctx)
		if err == nil && rep.Left > 0 {
			err = fmt.Errorf("relay left %d outboxes", rep.Left)
		}
		return rep.Relayed, err
	})
	if err == nil && relayed != e.n {
		err = fmt.Errorf("relayed %d outboxes, want %d", relayed, e.n)
	}
	want := webhooks.DeliverReport{Attempts: e.n * hooks, Delivered: e.n * hooks}
	if status >= 300 {
		want = webhooks.DeliverReport{Attempts: e.n * hooks, Retried: e.n * hooks}
	}
	var got webhooks.DeliverReport
	if err == nil {
		calls[1], wall[1], _, err = e.passes(mode, func() (int, error) {
			r, err := d.Deliver(ctx)
			got.Attempts, got.Delivered, got.Retried = got.Attempts+r.Attempts, got.Delivered+r.Delivered, got.Retried+r.Retried
			got.GaveUp, got.Disabled, got.Skipped = got.GaveUp+r.GaveUp, got.Disabled+r.Disabled, got.Skipped+r.Skipped
			return r.Attempts, err
		})
	}
	if err == nil && got != want {
		err = fmt.Errorf("delivery %+v, want %+v", got, want)
	}
	if err != nil {
		return calls, wall, fmt.Errorf("%s: %w", owner, err)
	}
	return calls, wall, nil
}

// measure runs section 6's scenarios, timed and then accounted, and the
// empty pass, into r.
func (e *eventBench) measure(ctx context.Context, r *dispatchResults) error {
	r.Events = e.n
	var got [3][2]perEvent       // relay and delivery of each scenario, per event
	var wall [3][2]time.Duration // the same, timed
	for i, sc := range []struct{ hooks, status int }{{1, http.StatusNoContent}, {2, http.StatusNoContent}, {1, http.StatusInternalServerError}} {
		for _, mode := range []storetest.Mode{storetest.Meter, storetest.Account} {
			calls, w, err := e.scenario(ctx, fmt.Sprintf("bench-webhooks-%d-%d", i, mode), sc.hooks, sc.status, mode)
			for k := range 2 {
				if err == nil && mode == storetest.Meter {
					wall[i][k] = w[k] / time.Duration(e.n)
				} else if err == nil {
					got[i][k], err = tally(calls[k], e.n, e.logical)
				}
			}
			if err != nil {
				return err
			}
		}
	}
	// Each extra webhook is the difference of two timings: 0 when noise
	// makes it negative.
	r.Wall = map[string]time.Duration{stepRelay: wall[0][0], stepDeliver: wall[0][1], stepRetry: wall[2][1],
		stepRelayExtra: max(0, wall[1][0]-wall[0][0]), stepDeliverExtra: max(0, wall[1][1]-wall[0][1])}
	r.Steps = map[string]perEvent{stepRelay: got[0][0], stepDeliver: got[0][1], stepRetry: got[2][1],
		stepRelayExtra: got[1][0].minus(got[0][0]), stepDeliverExtra: got[1][1].minus(got[0][1])}
	if err := e.orderSize(ctx, r); err != nil {
		return err
	}
	// An empty pass: every outbox and due job is done (the retries are due
	// in 30 s).
	d := e.dispatcher()
	calls, err := within(e.proxy, storetest.Account, func() error {
		if rep, err := d.Relay(ctx); err != nil || rep.Relayed+rep.Left > 0 {
			return fmt.Errorf("the empty pass relayed %+v: %v", rep, err)
		}
		if rep, err := d.Deliver(ctx); err != nil || rep.Attempts+rep.Skipped > 0 {
			return fmt.Errorf("the empty pass delivered %+v: %v", rep, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("empty pass: %w", err)
	}
	r.Steps[stepEmpty], err = tally(calls, 1, e.logical)
	return err
}

// orderSize measures the order item of the steps with its event pending:
// one more create through the proxy, whose event is then relayed (to no
// webhook) around the measurement.
func (e *eventBench) orderSize(ctx context.Context, r *dispatchResults) error {
	c := creator(e.direct, e.table)
	c.Orders = e.db.Orders(e.table("OrdersTable"))
	calls, err := within(e.proxy, storetest.Account, func() error {
		_, err := c.Create(ctx, "bench-webhooks-size", e.body, nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("order size: %w", err)
	}
	for _, c := range calls {
		if c.Operation == "PutItem" && c.Accounted {
			r.OrderBytes, r.OrderWrite = c.PutBytes, c.Billed.Write
		}
	}
	if r.OrderBytes == 0 {
		return fmt.Errorf("order size: no PutItem accounted among %d calls", len(calls))
	}
	if rep, err := e.dispatcher().Relay(ctx); err != nil || rep.Relayed != 1 {
		return fmt.Errorf("order size: relay %+v: %v", rep, err)
	}
	return nil
}

// measureEvents is section 6, over fresh tables behind a proxy that
// accounts the calls by DynamoDB's rules over the template's indexes.
func (b *bench) measureEvents() error {
	say("webhook dispatch: calls and units per event…\n")
	names, proxy, err := b.freshProxied("events-")
	if err != nil {
		return err
	}
	defer proxy.Close()
	e := &eventBench{db: store.New(localdb.Client(proxy.URL)), direct: store.New(localdb.Client(b.endpoint)), proxy: proxy,
		table: func(id string) string { return names[id] }, body: b.body, n: webhooks.DefaultBatch}
	return e.measure(b.ctx, &b.dispatch)
}

// eventTable is section 6.
func (b *bench) eventTable() (*table, error) {
	label := scheduledLabels[dispatchID]
	t := &table{
		Title:    "6. Webhook events: DynamoDB calls and capacity units per event (dynalite, measured at the wire)",
		Header:   []string{"step", "DynamoDB call", "calls per event", "RCU per event", "WCU per event"},
		TextCols: 2,
	}
	for _, s := range stepOrder {
		p, ok := b.dispatch.Steps[s]
		if !ok {
			return nil, fmt.Errorf("section 6 has no step %q", s)
		}
		for _, k := range append(slices.Clone(p.Kinds), "all") {
			u, ok := p.By[k]
			if !ok {
				u = p.total()
			}
			t.add(label+": "+s, k, num(u.Calls, 3), num(u.Read, 3), num(u.Write, 3))
		}
	}
	t.note("the dispatcher's passes (webhooks.Dispatcher Relay, then Deliver, as each poll of %s makes them), in process, over a fresh copy of the template's tables behind the measuring proxy; each step relays and delivers %d events (one outbox Query's worth), each the order.created event of an order of the create-order request above, to loopback receivers answering 204 (or 500)", dispatchID, b.dispatch.Events)
	t.note("the order item with its order.created event pending: %d bytes (DynamoDB's formula; the event leaves out the order's snapshot while it is the item's own), created for %s WCU with its index entries; its relay rewrites the item and its outbox entry", b.dispatch.OrderBytes, num(b.dispatch.OrderWrite, 3))
	t.note("means per event: the Queries and the relay's webhooks GetItem are shared by the events of a pass (a pass reads up to %d outboxes and %d due jobs of each of the %d shards and the unsharded key of each index, and a caller's webhooks once per pass for the relay); the delivery reads the webhook again before each attempt (here one attempt at a time, so one read each: attempts of a caller that start together share one) and writes the records of the attempts that end together in one BatchWriteItem, then their jobs in another (here one attempt at a time, whose records up to 4 lanes write: their calls an event vary from run to run, at most 2, their units do not); the first attempt takes a lease here, which a run's own relay makes unneeded (section 11); alone in its pass, an event bears the Queries whole", webhooks.DefaultBatch, webhooks.DefaultBatch, store.Shards)
	t.note("each extra webhook: the same events with 2 webhooks minus with 1; a failed attempt: the receiver answers 500 and the job is due again 30 s later (the same units for each retry); an empty pass: what every poll costs when nothing is pending")
	t.note("units by DynamoDB's rules over the template's indexes: OrdersTable's outbox entry (projection ALL) is rewritten with the item, its by-document-keys and queue-shards entries (keys only) are not; DeliveriesTable's due entry (global, ALL) with the job while it is not done, its waiting entry (local, keys and next) when the job joins or leaves it or its next moves (a retry, a postponement)")
	return t, nil
}

// month is the month of the fixed costs.
const month = 30 * 24 * time.Hour

// eventCostTable is section 7: a million events, and the poller's month.
func (b *bench) eventCostTable() (*table, error) {
	p, label := usEast1, scheduledLabels[dispatchID]
	f, ok := b.tmpl.Function(dispatchID)
	if !ok || len(f.Schedules) == 0 {
		return nil, fmt.Errorf("template.yaml has no scheduled %s", dispatchID)
	}
	every, err := schedule.Rate(f.Schedules[0].Expression)
	if err != nil {
		return nil, err
	}
	memGB := float64(f.MemorySize) / 1024
	dynamo := func(u usage) float64 { return u.Read*p.ReadUnits + u.Write*p.WriteUnits }
	t := &table{
		Title:  "7. Webhook events: cost per million (US$, us-east-1)",
		Header: []string{"what", "calls", "RCU", "WCU", "DynamoDB", "Lambda ms (this host)", "Lambda duration share", "total"},
	}
	steps, wall := b.dispatch.Steps, b.dispatch.Wall
	for _, r := range []struct {
		name  string
		steps []string
	}{
		{"a million events, each to 1 webhook, delivered at the first attempt", []string{stepRelay, stepDeliver}},
		{"each extra subscribed webhook, per million events", []string{stepRelayExtra, stepDeliverExtra}},
		{"a million failed attempts (retries)", []string{stepRetry}},
	} {
		var u usage
		var ms float64
		for _, s := range r.steps {
			u, ms = u.add(steps[s].total()), ms+float64(wall[s])/float64(time.Millisecond)
		}
		dyn, lam := dynamo(u), ms/1000*memGB*p.GBSecond*1e6
		t.add(label+": "+r.name, num(u.Calls, 3), num(u.Read, 3), num(u.Write, 3), dollars(dyn), fmt.Sprintf("%.3f", ms), dollars(lam), dollars(dyn+lam))
	}
	// The poller: always running, its relay polling PollsPerSecond times
	// a second (a Scan of the outbox index each), its delivery reading
	// the due shards every webhooks.DefaultIdle while idle: a month of
	// idle seconds, each costing `empty`.
	var empty usage
	for k, u := range steps[stepEmpty].By {
		per := 1 / webhooks.DefaultIdle.Seconds() // the due reads a second
		if strings.Contains(k, " outbox") {
			per = b.dispatch.PollsPerSecond
		}
		empty = empty.add(usage{u.Calls * per, u.Read * per, u.Write * per})
	}
	polls := month.Seconds()
	runs := float64(month / every)
	always := month.Seconds() * memGB * p.GBSecond
	upper := runs * float64(f.Timeout) * memGB * p.GBSecond
	requests := runs * p.LambdaRequests / 1e6
	pollDyn := polls * dynamo(empty) / 1e6
	t.add(label+": the poller, a month (fixed, whatever the events)", num(polls*empty.Calls, 0), num(polls*empty.Read, 0), num(polls*empty.Write, 0),
		dollars(pollDyn), "—", dollars(always+requests), dollars(pollDyn+always+requests))
	t.note("prices as in section 5 (DynamoDB on-demand $%.3f per million read request units, $%.3f per million write request units; Lambda arm64 $%.10f per GB-second at %d MB)", p.ReadUnits, p.WriteUnits, p.GBSecond, f.MemorySize)
	t.note("events: the units of section 6 (relay + delivery); Lambda ms = the wall time per event of the same passes on this host without accounting (the receiver answers at once on loopback; a slow receiver holds the pass for up to its 10 s timeout), billed at %d MB: a share of the poller's time, which is paid whatever the events while a pass fits in its 1 s poll", f.MemorySize)
	t.note("the poller (template: %s, Timeout %d s, MemorySize %d MB): %.0f runs a month of 30 days; one instance always running is %s a month of Lambda duration + %s of requests (each run polls until %d s minus its margin and runs may overlap a little; billing every run its whole timeout would be %s); while idle, %.2f relay passes a second measured in section 8 and a read of the due shards every %v, as in the empty pass of section 6 (%s calls, %s RCU a second): %s a month of DynamoDB",
		f.Schedules[0].Expression, f.Timeout, f.MemorySize, runs, dollars(always), dollars(requests), f.Timeout, dollars(upper),
		b.dispatch.PollsPerSecond, webhooks.DefaultIdle, num(empty.Calls, 2), num(empty.Read, 2), dollars(pollDyn))
	return t, nil
}
