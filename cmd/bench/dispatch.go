package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/cmd/internal/schedule"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// The webhook dispatch, a scheduled function with no route: its cold start
// is in section 1; section 6 is the DynamoDB calls and units of relaying and
// delivering one event, section 7 what a million events and a month of
// polling cost, section 8 how soon a change reaches its receiver.

// dispatchID is the webhook dispatch function's logical id.
const dispatchID = "WebhookDispatchFunction"

// scheduledLabels names each scheduled function (one with a Schedule event
// and no route) the bench measures, by the label its rows of sections 6–8
// begin with. A new scheduled function of template.yaml needs a label and
// rows of its own (TestEveryFunctionIsMeasured).
var scheduledLabels = map[string]string{dispatchID: "webhook dispatch"}

// coldOnly names the scheduled functions the bench measures by their cold
// start (section 1) only: the file sweeper, whose runs find nothing due on
// the bench's quiet tables; its cost per upload is the uploads' own
// (shared/orders TestUploadCosts).
var coldOnly = map[string]bool{"FileSweeperFunction": true}

// onePass is the timeout the scheduled instances of section 1 get: their
// run's deadline has passed its last-pass margin already, so the first
// invocation is the init's first pass (the template's run polls for about
// a minute).
const onePass = time.Second

// Sizes of sections 6 and 8.
const (
	// stepEvents is how many events each step of section 6 relays and
	// delivers: one outbox Query's worth (webhooks.DefaultBatch).
	stepEvents = webhooks.DefaultBatch
	// latencyChanges is how many changes section 8 times, each made
	// latencyGap (uniformly random) after the previous one.
	latencyChanges = 100
)

// latencyGap bounds the pause between two changes of section 8: random, so
// that the changes fall anywhere in the dispatcher's 1 s poll.
var latencyGap = [2]time.Duration{100 * time.Millisecond, 400 * time.Millisecond}

// scheduledEvent returns the Scheduled Event payload of the first schedule
// of the function name.
func (b *bench) scheduledEvent(name string) ([]byte, error) {
	f, ok := b.tmpl.Function(name)
	if !ok || len(f.Schedules) == 0 {
		return nil, fmt.Errorf("template.yaml has no scheduled %s", name)
	}
	return schedule.Event(f.Schedules[0].Name, localdb.Region, time.Now()), nil
}

// isScheduled reports whether name is a function of the template that is
// run by a schedule and has no route.
func (b *bench) isScheduled(name string) bool {
	f, ok := b.tmpl.Function(name)
	return ok && len(f.Routes) == 0 && len(f.Schedules) > 0
}

// freshTables creates another copy of the template's tables in the bench's
// dynalite, named prefix + logical id, seeded with the sample catalogue,
// and returns their names by logical id.
func (b *bench) freshTables(prefix string) (map[string]string, error) {
	names := map[string]string{}
	for _, t := range b.tmpl.Tables {
		names[t.LogicalID] = prefix + t.LogicalID
	}
	client := localdb.Client(b.endpoint)
	if err := localdb.CreateTables(b.ctx, client, b.tmpl.Tables, names); err != nil {
		return nil, fmt.Errorf("tables %s*: %w", prefix, err)
	}
	if _, err := localdb.Seed(b.ctx, store.New(client), func(id string) string { return names[id] },
		filepath.Join(b.root, localdb.SampleCatalogue), false); err != nil {
		return nil, fmt.Errorf("tables %s*: %w", prefix, err)
	}
	return names, nil
}

// freshProxied is freshTables behind a new proxy that accounts their
// writes by their indexes; the caller closes the proxy.
func (b *bench) freshProxied(prefix string) (map[string]string, *storetest.Proxy, error) {
	names, err := b.freshTables(prefix)
	if err != nil {
		return nil, nil, err
	}
	proxy, err := storetest.StartProxy(b.endpoint, storetest.Schemas(b.tmpl, names))
	return names, proxy, err
}

// withTables returns env with each variable that names a table by its
// logical id (as localstack.Env resolves them) naming names[id] instead.
func withTables(env []string, names map[string]string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		k, v, _ := strings.Cut(kv, "=")
		if n, ok := names[v]; ok {
			out[i] = k + "=" + n
		}
	}
	return out
}

// unsigned is the orders.Files of the in-process dispatcher: the bench's
// orders have no files, so there is nothing to sign.
type unsigned struct{ orders.Files }

// Sign signs nothing.
func (unsigned) Sign(context.Context, *stampduty.Order) error { return nil }

// usage is DynamoDB calls and units by DynamoDB's rules.
type usage struct{ Calls, Read, Write float64 }

// add returns u + v.
func (u usage) add(v usage) usage {
	return usage{u.Calls + v.Calls, u.Read + v.Read, u.Write + v.Write}
}

// perEvent is the DynamoDB calls of a step per event, by kind of call
// ("Query OrdersTable outbox", "PutItem DeliveriesTable"), in the order the
// kinds first appeared.
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
		k := c.Operation + " " + table(c.Table)
		if c.Index != "" {
			k += " " + c.Index
		}
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
	for _, k := range append(slices.Clone(p.Kinds), q.Kinds...) {
		if _, ok := d.By[k]; ok {
			continue
		}
		a, b := p.By[k], q.By[k]
		round := func(v float64) float64 { return math.Round(v*1e9) / 1e9 }
		u := usage{round(a.Calls - b.Calls), round(a.Read - b.Read), round(a.Write - b.Write)}
		if u != (usage{}) {
			d.Kinds, d.By[k] = append(d.Kinds, k), u
		}
	}
	return d
}

// total returns the sum over the kinds.
func (p perEvent) total() usage {
	var t usage
	for _, k := range p.Kinds {
		t = t.add(p.By[k])
	}
	return t
}

// The steps of section 6, by name.
const (
	stepRelay        = "relay, 1 webhook"
	stepRelayExtra   = "relay, each extra webhook"
	stepDeliver      = "deliver once (2xx), 1 webhook"
	stepDeliverExtra = "deliver once (2xx), each extra webhook"
	stepRetry        = "a failed attempt (500, retried later), 1 webhook"
	stepEmpty        = "an empty pass (no event), per pass"
)

// stepOrder is the order of section 6's steps.
var stepOrder = []string{stepRelay, stepRelayExtra, stepDeliver, stepDeliverExtra, stepRetry, stepEmpty}

// dispatchResults are the webhook dispatch's measurements.
type dispatchResults struct {
	// Steps are section 6's calls per event by step (per pass for stepEmpty).
	Steps map[string]perEvent
	// Wall is the wall time per event of a step's passes, measured without
	// accounting, by step.
	Wall map[string]time.Duration
	// Events is how many events each step measured.
	Events int
	// OrderBytes is the size of the steps' order item with its event
	// pending, and OrderWrite its create's write units (the item and its
	// index entries).
	OrderBytes int
	OrderWrite float64
	// Latency holds section 8's times from a change to its first attempt.
	Latency durations
	// PollsPerSecond is how many outbox Queries the scheduled binary made
	// per second during section 8.
	PollsPerSecond float64
	// LatencyNote says how section 8 was run.
	LatencyNote string
}

// eventBench measures the dispatcher's DynamoDB calls, in process, over one
// copy of the template's tables through a proxy in Account mode.
type eventBench struct {
	db     *store.DB // through the proxy
	direct *store.DB // around it, for what is not measured
	proxy  *storetest.Proxy
	table  func(logicalID string) string
	body   *stampduty.OrderBody // of each order created
	n      int                  // events per step
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
// loopback receivers.
func (e *eventBench) dispatcher() *webhooks.Dispatcher {
	return &webhooks.Dispatcher{
		Outbox:    e.db.Orders(e.table("OrdersTable")),
		Hooks:     e.db.Webhooks(e.table("WebhooksTable")),
		Jobs:      e.db.Deliveries(e.table("DeliveriesTable")),
		Files:     unsigned{},
		Deliverer: webhooks.Deliverer{Guard: webhooks.Guard{Local: true}},
	}
}

// allEvents are the four event types.
var allEvents = []string{stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged, stampduty.EventOrderDocumentUploaded, stampduty.EventOrderCertificateAttached}

// receiver starts a loopback receiver answering status to every request.
func receiver(status int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
	}))
}

// setUp gives owner hooks webhooks (every event type) at url and e.n new
// orders, each with its order.created event pending, around the proxy.
func (e *eventBench) setUp(ctx context.Context, owner, url string, hooks int) error {
	reg := &webhooks.Registry{Hooks: e.direct.Webhooks(e.table("WebhooksTable")), Jobs: e.direct.Deliveries(e.table("DeliveriesTable")),
		IDs: e.direct.IDs(e.table("CountersTable"), store.IDBlock), Guard: webhooks.Guard{Local: true}, Now: time.Now}
	for i := range hooks {
		if _, err := reg.Register(ctx, owner, webhooks.Registration{URL: fmt.Sprintf("%s/%d", url, i), Events: allEvents}); err != nil {
			return fmt.Errorf("register a webhook: %w", err)
		}
	}
	creator := &orders.Creator{Articles: e.direct.Articles(e.table("ArticlesTable")), IDs: e.direct.IDs(e.table("CountersTable"), store.IDBlock),
		Orders: e.direct.Orders(e.table("OrdersTable"))}
	for range e.n {
		if _, err := creator.Create(ctx, owner, e.body, nil); err != nil {
			return fmt.Errorf("create an order: %w", err)
		}
	}
	return nil
}

// passes runs pass until it does nothing and returns the calls and the wall
// time of the passes that did something, and what they did in all.
func (e *eventBench) passes(mode storetest.Mode, pass func() (int, error)) (calls []storetest.ProxyCall, wall time.Duration, done int, err error) {
	e.proxy.Take()
	e.proxy.SetMode(mode)
	defer e.proxy.SetMode(storetest.Record)
	for {
		t0 := time.Now()
		n, err := pass()
		took := time.Since(t0)
		got := e.proxy.Take()
		if err != nil {
			return nil, 0, 0, err
		}
		if n == 0 {
			return calls, wall, done, e.proxy.Err()
		}
		calls, wall, done = append(calls, got...), wall+took, done+n
	}
}

// scenario relays and delivers the events of e.n new orders of a new owner
// with hooks webhooks whose receiver answers status, measuring as mode
// says, and returns the calls of each phase and their wall times.
func (e *eventBench) scenario(ctx context.Context, owner string, hooks, status int, mode storetest.Mode) (relay, deliver []storetest.ProxyCall, relayWall, deliverWall time.Duration, err error) {
	rc := receiver(status)
	defer rc.Close()
	if err := e.setUp(ctx, owner, rc.URL, hooks); err != nil {
		return nil, nil, 0, 0, err
	}
	d := e.dispatcher()
	relay, relayWall, relayed, err := e.passes(mode, func() (int, error) {
		rep, err := d.Relay(ctx)
		if err == nil && rep.Left > 0 {
			err = fmt.Errorf("relay left %d outboxes", rep.Left)
		}
		return rep.Relayed, err
	})
	if err == nil && relayed != e.n {
		err = fmt.Errorf("relayed %d outboxes, want %d", relayed, e.n)
	}
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("%s: %w", owner, err)
	}
	want := webhooks.DeliverReport{Attempts: e.n * hooks, Delivered: e.n * hooks}
	if status >= 300 {
		want = webhooks.DeliverReport{Attempts: e.n * hooks, Retried: e.n * hooks}
	}
	var got webhooks.DeliverReport
	deliver, deliverWall, _, err = e.passes(mode, func() (int, error) {
		rep, err := d.Deliver(ctx)
		got.Attempts, got.Delivered, got.Retried = got.Attempts+rep.Attempts, got.Delivered+rep.Delivered, got.Retried+rep.Retried
		got.Skipped += rep.Skipped
		return rep.Attempts, err
	})
	if err == nil && got != want {
		err = fmt.Errorf("delivery %+v, want %+v", got, want)
	}
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("%s: %w", owner, err)
	}
	return relay, deliver, relayWall, deliverWall, nil
}

// measure runs section 6's scenarios, timed and then accounted, and the
// empty pass, into r.
func (e *eventBench) measure(ctx context.Context, r *dispatchResults) error {
	r.Steps, r.Wall, r.Events = map[string]perEvent{}, map[string]time.Duration{}, e.n
	type phases struct{ relay, deliver perEvent }
	var got [3]phases
	for i, sc := range []struct {
		hooks, status int
	}{{1, http.StatusNoContent}, {2, http.StatusNoContent}, {1, http.StatusInternalServerError}} {
		for _, mode := range []storetest.Mode{storetest.Meter, storetest.Account} {
			owner := fmt.Sprintf("bench-webhooks-%d-%d", i, mode)
			relay, deliver, rw, dw, err := e.scenario(ctx, owner, sc.hooks, sc.status, mode)
			if err != nil {
				return err
			}
			if mode == storetest.Meter {
				switch i {
				case 0:
					r.Wall[stepRelay], r.Wall[stepDeliver] = rw/time.Duration(e.n), dw/time.Duration(e.n)
				case 1:
					// Differences of two timings: 0 when noise makes them negative.
					r.Wall[stepRelayExtra] = max(0, rw/time.Duration(e.n)-r.Wall[stepRelay])
					r.Wall[stepDeliverExtra] = max(0, dw/time.Duration(e.n)-r.Wall[stepDeliver])
				case 2:
					r.Wall[stepRetry] = dw / time.Duration(e.n)
				}
				continue
			}
			if got[i].relay, err = tally(relay, e.n, e.logical); err != nil {
				return err
			}
			if got[i].deliver, err = tally(deliver, e.n, e.logical); err != nil {
				return err
			}
		}
	}
	r.Steps[stepRelay], r.Steps[stepDeliver] = got[0].relay, got[0].deliver
	r.Steps[stepRelayExtra], r.Steps[stepDeliverExtra] = got[1].relay.minus(got[0].relay), got[1].deliver.minus(got[0].deliver)
	r.Steps[stepRetry] = got[2].deliver
	if err := e.orderSize(ctx, r); err != nil {
		return err
	}
	// An empty pass: every pending outbox and due job is done (the retries
	// are due in 30 s).
	e.proxy.Take()
	e.proxy.SetMode(storetest.Account)
	d := e.dispatcher()
	rep, err := d.Relay(ctx)
	if err == nil && rep.Relayed+rep.Left > 0 {
		err = fmt.Errorf("the empty pass relayed %+v", rep)
	}
	var drep webhooks.DeliverReport
	if err == nil {
		drep, err = d.Deliver(ctx)
	}
	if err == nil && drep.Attempts+drep.Skipped > 0 {
		err = fmt.Errorf("the empty pass delivered %+v", drep)
	}
	calls := e.proxy.Take()
	e.proxy.SetMode(storetest.Record)
	if err != nil {
		return fmt.Errorf("empty pass: %w", err)
	}
	r.Steps[stepEmpty], err = tally(calls, 1, e.logical)
	return err
}

// orderSize measures the order item of the steps with its event pending:
// one more create through the proxy (its PutItem's size and units), whose
// event is then relayed (to no webhook) around the measurement.
func (e *eventBench) orderSize(ctx context.Context, r *dispatchResults) error {
	creator := &orders.Creator{Articles: e.direct.Articles(e.table("ArticlesTable")), IDs: e.direct.IDs(e.table("CountersTable"), store.IDBlock),
		Orders: e.db.Orders(e.table("OrdersTable"))}
	e.proxy.Take()
	e.proxy.SetMode(storetest.Account)
	_, err := creator.Create(ctx, "bench-webhooks-size", e.body, nil)
	calls := e.proxy.Take()
	e.proxy.SetMode(storetest.Record)
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

// measureEvents is section 6: the dispatcher's calls over fresh tables
// behind a proxy that accounts them by DynamoDB's rules over the
// template's indexes, with orders of the create-order request.
func (b *bench) measureEvents() error {
	fmt.Fprintln(b.status, "webhook dispatch: calls and units per event…")
	names, proxy, err := b.freshProxied("events-")
	if err != nil {
		return err
	}
	defer proxy.Close()
	body, err := orderBody(firsts(b.reqs)["CreateOrderFunction"].ev.Body)
	if err != nil {
		return err
	}
	e := &eventBench{db: store.New(localdb.Client(proxy.URL)), direct: store.New(localdb.Client(b.endpoint)), proxy: proxy,
		table: func(id string) string { return names[id] }, body: body, n: stepEvents}
	return e.measure(b.ctx, &b.dispatch)
}

// arrivals records the first time a receiver got each event, by the
// documentId of its order.
type arrivals struct {
	mu    sync.Mutex
	first map[string]time.Time
	bad   error
}

// ServeHTTP records a delivery and answers 204.
func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	var ev webhooks.Event
	var o stampduty.Order
	err := json.NewDecoder(r.Body).Decode(&ev)
	if err == nil {
		err = json.Unmarshal(ev.Data.Order, &o)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil || o.DocumentID == "" {
		a.bad = cmpErr(a.bad, fmt.Errorf("a delivery without its order: %v", err))
	} else if _, ok := a.first[o.DocumentID]; !ok {
		a.first[o.DocumentID] = at
	}
	w.WriteHeader(http.StatusNoContent)
}

// cmpErr returns err, or next when err is nil.
func cmpErr(err, next error) error {
	if err != nil {
		return err
	}
	return next
}

// got returns the arrival of order doc.
func (a *arrivals) got(doc string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.first[doc]
	return t, ok
}

// measureLatency is section 8: the dispatch function's host binary, run by
// the local schedule (cmd/internal/schedule over a runtimeapi.Pool, as
// make local runs it) on its template rate, over fresh tables behind a
// recording proxy; latencyChanges orders are created with their event
// (orders.Creator on the database directly), latencyGap apart, for a
// caller with one webhook at a loopback receiver; each latency is from the
// start of the create's call to the receiver's first request of its event.
func (b *bench) measureLatency() error {
	fmt.Fprintln(b.status, "webhook dispatch: latency of", latencyChanges, "changes…")
	f, ok := b.tmpl.Function(dispatchID)
	if !ok {
		return fmt.Errorf("template.yaml has no %s", dispatchID)
	}
	names, proxy, err := b.freshProxied("latency-")
	if err != nil {
		return err
	}
	defer proxy.Close()
	arr := &arrivals{first: map[string]time.Time{}}
	rc := httptest.NewServer(arr)
	defer rc.Close()
	direct := store.New(localdb.Client(b.endpoint))
	const owner = "bench-latency"
	reg := &webhooks.Registry{Hooks: direct.Webhooks(names["WebhooksTable"]), Jobs: direct.Deliveries(names["DeliveriesTable"]),
		IDs: direct.IDs(names["CountersTable"], store.IDBlock), Guard: webhooks.Guard{Local: true}, Now: time.Now}
	if _, err := reg.Register(b.ctx, owner, webhooks.Registration{URL: rc.URL + "/hook", Events: []string{stampduty.EventOrderCreated}}); err != nil {
		return fmt.Errorf("latency: register: %w", err)
	}
	fn, err := localstack.Function(b.tmpl, f, b.bins[dispatchID], localstack.Engines{DynamoDB: proxy.URL, S3: b.s3Endpoint}, b.logs[dispatchID])
	if err != nil {
		return err
	}
	fn.Env = withTables(fn.Env, names)
	pool := runtimeapi.NewPool(fn)
	defer pool.Close()
	every, err := schedule.Rate(f.Schedules[0].Expression)
	if err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	jobs := []schedule.Job{{Function: dispatchID, Rule: f.Schedules[0].Name, Every: every, Target: pool}}
	ctx, cancel := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	wg.Go(func() { schedule.Run(ctx, jobs, localdb.Region, b.logs[dispatchID]) })
	defer func() { cancel(); wg.Wait() }()
	// The first run has started once it polls.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if slices.ContainsFunc(proxy.All(), func(c storetest.ProxyCall) bool { return c.Index == "outbox" }) {
			break
		}
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			return b.withLog(errors.New("latency: the scheduled dispatch did not poll within 30 s"), dispatchID)
		}
	}
	body, err := orderBody(firsts(b.reqs)["CreateOrderFunction"].ev.Body)
	if err != nil {
		return err
	}
	creator := &orders.Creator{Articles: direct.Articles(names["ArticlesTable"]), IDs: direct.IDs(names["CountersTable"], store.IDBlock),
		Orders: direct.Orders(names["OrdersTable"])}
	proxy.Take()
	began := time.Now()
	changed := map[string]time.Time{}
	var docs []string
	for i := range latencyChanges {
		time.Sleep(latencyGap[0] + rand.N(latencyGap[1]-latencyGap[0]))
		t0 := time.Now()
		doc, err := creator.Create(b.ctx, owner, body, nil)
		if err != nil {
			return fmt.Errorf("latency: change %d: %w", i+1, err)
		}
		changed[doc], docs = t0, append(docs, doc)
		if (i+1)%10 == 0 {
			fmt.Fprintf(b.status, "\rlatency: %d/%d changes", i+1, latencyChanges)
		}
	}
	fmt.Fprintln(b.status)
	var last time.Time
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		missing := 0
		for _, d := range docs {
			if at, ok := arr.got(d); !ok {
				missing++
			} else if at.After(last) {
				last = at
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			return b.withLog(fmt.Errorf("latency: %d of %d events did not reach the receiver within 20 s of the last change", missing, len(docs)), dispatchID)
		}
	}
	arr.mu.Lock()
	bad := arr.bad
	arr.mu.Unlock()
	if bad != nil {
		return fmt.Errorf("latency: %w", bad)
	}
	polls := 0
	for _, c := range proxy.Take() {
		if c.Index == "outbox" {
			polls++
		}
	}
	b.dispatch.Latency = nil
	for _, d := range docs {
		at, _ := arr.got(d)
		b.dispatch.Latency = append(b.dispatch.Latency, at.Sub(changed[d]))
	}
	b.dispatch.PollsPerSecond = float64(polls) / last.Sub(began).Seconds()
	b.dispatch.LatencyNote = fmt.Sprintf("%s's host binary run by the local schedule (cmd/internal/schedule, %s, as make local runs it) through the local Runtime API, "+
		"against dynalite through a recording proxy; %d orders created with their order.created event (orders.Creator on the database directly), %v–%v apart (uniformly random); "+
		"one webhook at a loopback receiver; latency = start of the create's call → the receiver's first request of its event; %s in all",
		dispatchID, f.Schedules[0].Expression, latencyChanges, latencyGap[0], latencyGap[1], last.Sub(began).Round(100*time.Millisecond))
	return nil
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
		for _, k := range p.Kinds {
			u := p.By[k]
			t.add(label+": "+s, k, num(u.Calls, 3), num(u.Read, 3), num(u.Write, 3))
		}
		u := p.total()
		t.add(label+": "+s, "all", num(u.Calls, 3), num(u.Read, 3), num(u.Write, 3))
	}
	t.note("the dispatcher's passes (webhooks.Dispatcher Relay, then Deliver, as each poll of %s makes them), in process, over a fresh copy of the template's tables behind the measuring proxy; each step relays and delivers %d events (one outbox Query's worth), each the order.created event of an order of the create-order request above, to loopback receivers answering 204 (or 500)", dispatchID, b.dispatch.Events)
	t.note("the order item with its order.created event pending: %d bytes (DynamoDB's formula; the event carries the order's snapshot), created for %s WCU with its index entries; its relay rewrites the item and its three index entries", b.dispatch.OrderBytes, num(b.dispatch.OrderWrite, 3))
	t.note("means per event: the Queries and the webhooks GetItem are shared by the events of a pass (a pass reads up to %d outboxes and %d due jobs, and a caller's webhooks once per pass for the relay and once per webhook for the delivery); alone in its pass, an event bears them whole", webhooks.DefaultBatch, webhooks.DefaultBatch)
	t.note("each extra webhook: the same events with 2 webhooks minus with 1; a failed attempt: the receiver answers 500 and the job is due again 30 s later (the same units for each retry); an empty pass: what every poll costs when nothing is pending")
	t.note("units by DynamoDB's rules over the template's indexes: OrdersTable's outbox, by-document and queue entries (projection ALL) are rewritten with the item; DeliveriesTable's due entry (global, ALL) with the job while it is not done, its waiting entry (local, keys and next) when the job joins or leaves it or its next moves (a retry, a postponement)")
	return t, nil
}

// month is the month of the fixed costs.
const month = 30 * 24 * time.Hour

// eventCost is the cost in US dollars of a million of something that uses
// u DynamoDB units and ms of Lambda time each, at memGB.
func (p prices) eventCost(u usage, ms, memGB float64) (dynamo, lambda float64) {
	return u.Read*p.ReadUnits + u.Write*p.WriteUnits, ms / 1000 * memGB * p.GBSecond * 1e6
}

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
		dyn, lam := p.eventCost(u, ms, memGB)
		t.add(label+": "+r.name, num(u.Calls, 3), num(u.Read, 3), num(u.Write, 3), dollars(dyn), fmt.Sprintf("%.3f", ms), dollars(lam), dollars(dyn+lam))
	}
	// The poller: always running, polling PollsPerSecond times a second.
	empty := steps[stepEmpty].total()
	polls := b.dispatch.PollsPerSecond * month.Seconds()
	runs := float64(month / every)
	always := month.Seconds() * memGB * p.GBSecond
	upper := runs * float64(f.Timeout) * memGB * p.GBSecond
	requests := runs * p.LambdaRequests / 1e6
	pollDyn := polls * (empty.Read*p.ReadUnits + empty.Write*p.WriteUnits) / 1e6
	t.add(label+": the poller, a month (fixed, whatever the events)", num(polls*empty.Calls, 0), num(polls*empty.Read, 0), num(polls*empty.Write, 0),
		dollars(pollDyn), "—", dollars(always+requests), dollars(pollDyn+always+requests))
	t.note("prices as in section 5 (DynamoDB on-demand $%.3f per million read request units, $%.3f per million write request units; Lambda arm64 $%.10f per GB-second at %d MB)", p.ReadUnits, p.WriteUnits, p.GBSecond, f.MemorySize)
	t.note("events: the units of section 6 (relay + delivery); Lambda ms = the wall time per event of the same passes on this host without accounting (the receiver answers at once on loopback; a slow receiver holds the pass for up to its 10 s timeout), billed at %d MB: a share of the poller's time, which is paid whatever the events while a pass fits in its 1 s poll", f.MemorySize)
	t.note("the poller (template: %s, Timeout %d s, MemorySize %d MB): %.0f runs a month of 30 days; one instance always running is %s a month of Lambda duration + %s of requests (each run polls until %d s minus its margin and runs may overlap a little; billing every run its whole timeout would be %s); %.2f passes a second measured in section 8, each an empty pass of section 6 (%s calls, %s RCU): %s a month of DynamoDB",
		f.Schedules[0].Expression, f.Timeout, f.MemorySize, runs, dollars(always), dollars(requests), f.Timeout, dollars(upper),
		b.dispatch.PollsPerSecond, num(empty.Calls, 2), num(empty.Read, 2), dollars(pollDyn))
	return t, nil
}

// latencyTable is section 8.
func (b *bench) latencyTable() (*table, error) {
	t := &table{
		Title:  "8. Webhook latency: stored change → first delivery attempt (local stack)",
		Header: []string{"what", "changes", "median ms", "p90 ms", "worst ms", "best ms"},
	}
	l := b.dispatch.Latency
	if len(l) == 0 {
		return nil, errors.New("section 8 has no latencies")
	}
	med, best, p90 := l.stats()
	t.add(scheduledLabels[dispatchID]+": order.created, 1 webhook", fmt.Sprint(len(l)), ms(med), ms(p90), ms(slices.Max(l)), ms(best))
	t.note("%s", b.dispatch.LatencyNote)
	t.note("the dispatcher relays and delivers once a pass, %.2f passes a second measured (each run polls every second), so a change waits up to a second for the next pass, then the pass's relay and delivery; on AWS the outbox is read from a global index, whose lag (typically well under a second) adds to it, and a cold start (section 1) to the first pass of a run", b.dispatch.PollsPerSecond)
	return t, nil
}
