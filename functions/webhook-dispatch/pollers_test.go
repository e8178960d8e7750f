package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/webhooks"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
)

// The tests of this file run the dispatcher's reads over dynalite: what an
// idle run costs, pollers that share the work, the relay's sweep of a
// backlog, and the due jobs a run wrote itself.

// onItsOwn returns a dispatcher of poller p over db (a store through a
// proxy of its own), on the real clock.
func (w *world) onItsOwn(db *store.DB, p webhooks.Poller) *webhooks.Dispatcher {
	d := w.dispatcher(0)
	d.Outbox, d.Hooks = db.Orders(w.env.Table("OrdersTable")), db.Webhooks(w.env.Table("WebhooksTable"))
	d.Jobs, d.Now, d.Poller = db.Deliveries(w.env.Table("DeliveriesTable")), nil, p
	return d
}

// running runs d (polling every `every`) until stop is called or the test
// ends; stop returns once the run has.
func running(t *testing.T, d *webhooks.Dispatcher, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Run(ctx, every, 0) // it ends with the context
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// waitFor waits until path got n requests, at most within; it returns how
// long that took.
func (w *world) waitFor(path string, n int, within time.Duration) time.Duration {
	w.t.Helper()
	start := time.Now()
	for len(w.rc.At(path)) < n {
		if time.Since(start) > within {
			w.t.Fatalf("%s got %d requests in %v, want %d", path, len(w.rc.At(path)), within, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestIdleRun: a run with nothing to do costs one Scan of the outbox
// index a second and a Query of each due shard every 5 s (about 4.4 calls
// a second; 34 with a Query of every shard of both indexes each second),
// a change still gets its first attempt within about a second (the relay
// hands it on), and a redelivery, written by another function, within
// about 5 s.
func TestIdleRun(t *testing.T) {
	w := newWorld(t)
	w.register(localdb.DevOwner, "/all", allTypes...)
	db, proxy := w.env.ProxiedDB()
	stop := running(t, w.onItsOwn(db, webhooks.Poller{}), time.Second)
	defer stop()
	time.Sleep(500 * time.Millisecond) // past the run's first reads
	proxy.Take()
	const window = 10 * time.Second
	time.Sleep(window)
	calls := storetest.Requests(proxy.Take())
	rate := float64(len(calls)) / window.Seconds()
	t.Logf("idle for %v: %s, %.1f calls a second", window, w.env.Operations(calls), rate)
	if rate > 5 {
		t.Errorf("an idle run makes %.1f calls a second (%s), want at most 5", rate, w.env.Operations(calls))
	}

	createOrder(t, w.env, localdb.DevOwner)
	took := w.waitFor("/all", 1, 5*time.Second)
	t.Logf("first attempt %v after the change", took)
	if took > 2*time.Second {
		t.Errorf("the first attempt came %v after the change, want within about a second", took)
	}
	time.Sleep(1500 * time.Millisecond) // idle again
	got := w.rc.At("/all")
	if _, err := w.reg.Redeliver(context.Background(), localdb.DevOwner, got[0].ID); err != nil {
		t.Fatal(err)
	}
	// Within the idle read's 5 s, and not held by the first attempt's
	// lease (it ends with the attempt's record).
	took = w.waitFor("/all", 2, 20*time.Second)
	t.Logf("redelivery %v after it was asked", took)
	if took > 6*time.Second {
		t.Errorf("the redelivery came %v after it was asked, want within about 5 s", took)
	}
}

// readsOf records what a poller's reads returned.
type readsOf struct {
	mu      sync.Mutex
	orders  []string // documentIds of the outboxes read
	jobs    []string // <webhook>#<eventId> of the due jobs read
	queries []int    // the Queries of the due index each read made
}

// dueQueries counts the Queries of the due index among the calls that
// reached proxy.
func dueQueries(proxy *storetest.Proxy) int {
	n := 0
	for _, c := range storetest.Requests(proxy.All()) {
		if c.Operation == "Query" && c.Index == store.DueIndex {
			n++
		}
	}
	return n
}

// outboxReads is a store's outbox that records what it returns.
type outboxReads struct {
	*store.Orders
	r *readsOf
}

func (o outboxReads) Pending(ctx context.Context, p webhooks.Poller, cursor string, limit int) ([]orders.Stored, string, error) {
	ps, next, err := o.Orders.Pending(ctx, p, cursor, limit)
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	for _, s := range ps {
		o.r.orders = append(o.r.orders, s.DocumentID)
	}
	return ps, next, err
}

// jobReads is a store's deliveries that records the due jobs it returns
// and the Queries each read made through proxy (the only reads of the due
// index, one after another).
type jobReads struct {
	*store.Deliveries
	r     *readsOf
	proxy *storetest.Proxy
}

func (j jobReads) Due(ctx context.Context, p webhooks.Poller, now time.Time, limit int) ([]webhooks.Job, error) {
	before := dueQueries(j.proxy)
	js, err := j.Deliveries.Due(ctx, p, now, limit)
	j.r.mu.Lock()
	defer j.r.mu.Unlock()
	if err == nil {
		j.r.queries = append(j.r.queries, dueQueries(j.proxy)-before)
	}
	for _, job := range js {
		j.r.jobs = append(j.r.jobs, job.Webhook+"#"+job.ID)
	}
	return js, err
}

// TestTwoPollers: pollers 0 and 1 of 2, running together over the same
// tables, relay and deliver every event exactly once, each order's in the
// order of its changes, neither reading an outbox or a due job the other
// read: each reads its segment of the outbox index and its due shards (9
// Queries a read for poller 0, with the unsharded key; 8 for poller 1).
func TestTwoPollers(t *testing.T) {
	w := newWorld(t)
	w.subscribers()
	for range 4 {
		w.changes()
	}
	for range 6 {
		createOrder(t, w.env, other)
	}
	evs := w.stored()
	var reads [2]readsOf
	var stops [2]func()
	engine := w.env.Endpoint // each poller's proxy in front of it, side by side
	for i := range 2 {
		proxy, err := storetest.StartProxy(engine, storetest.Schemas(w.env.Template, w.env.Names))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Close)
		db := store.New(localdb.Client(proxy.URL))
		d := w.onItsOwn(db, webhooks.Poller{Index: i, Count: 2})
		d.Outbox = outboxReads{db.Orders(w.env.Table("OrdersTable")), &reads[i]}
		d.Jobs = jobReads{db.Deliveries(w.env.Table("DeliveriesTable")), &reads[i], proxy}
		stops[i] = running(t, d, time.Second)
	}
	for _, r := range []struct {
		path, owner string
		types       []string
	}{{"/all", localdb.DevOwner, allTypes}, {"/created", localdb.DevOwner, []string{stampduty.EventOrderCreated}}, {"/other", other, allTypes}} {
		owed := 0
		for _, ev := range evs {
			if ev.owner == r.owner && slices.Contains(r.types, ev.Type) {
				owed++
			}
		}
		w.waitFor(r.path, owed, 20*time.Second)
	}
	time.Sleep(2 * time.Second) // anything doubled would show by now
	stops[0]()
	stops[1]()
	w.expectAll(evs)
	for what, read := range map[string][2][]string{"outbox": {reads[0].orders, reads[1].orders}, "due job": {reads[0].jobs, reads[1].jobs}} {
		for _, x := range read[0] {
			if slices.Contains(read[1], x) {
				t.Errorf("%s %s read by both pollers", what, x)
			}
		}
	}
	t.Logf("outboxes read: %d by poller 0, %d by poller 1; due jobs read: %d and %d", len(reads[0].orders), len(reads[1].orders),
		len(reads[0].jobs), len(reads[1].jobs))
	for i, per := range []int{9, 8} { // its shards, and for poller 0 the unsharded key
		if len(reads[i].queries) == 0 || slices.ContainsFunc(reads[i].queries, func(n int) bool { return n != per }) {
			t.Errorf("poller %d's reads of the due index made %v Queries, want %d each", i, reads[i].queries, per)
		}
	}
}

// TestRelaySweepsABacklog: a relay pass reads one page of the outbox index
// on from where the last pass stopped, so a backlog is relayed to its end
// while as many new outboxes arrive each pass as a pass reads: none of the
// backlog waits for ever behind newer ones (it does when each pass scans
// from the start).
func TestRelaySweepsABacklog(t *testing.T) {
	w := newWorld(t)
	w.register(localdb.DevOwner, "/all", stampduty.EventOrderCreated)
	backlog := map[string]bool{}
	for range 24 {
		backlog[createOrder(t, w.env, localdb.DevOwner).DocumentID] = true
	}
	d := w.dispatcher(0)
	d.Batch = 3
	ctx := context.Background()
	for pass := 1; ; pass++ {
		if _, err := d.Relay(ctx); err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, ev := range w.stored() {
			if backlog[ev.order] {
				left++
			}
		}
		if left == 0 {
			t.Logf("the backlog of 24 relayed in %d passes of 3", pass)
			return
		}
		if pass == 40 {
			t.Fatalf("%d of the backlog of 24 not relayed after %d passes of 3, while 3 new orders came each pass", left, pass)
		}
		for range 3 {
			createOrder(t, w.env, localdb.DevOwner)
		}
	}
}

// TestRunReadsTheRetryItWrote: a run that wrote a retry reads the due jobs
// once it is due (at the next tick), however long it would otherwise wait
// while idle, and not before it is due.
func TestRunReadsTheRetryItWrote(t *testing.T) {
	w := newWorld(t)
	w.rc.On("/flaky", func(rw http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			rw.WriteHeader(http.StatusInternalServerError)
			return
		}
		rw.WriteHeader(http.StatusNoContent)
	})
	hook := w.register(localdb.DevOwner, "/flaky", stampduty.EventOrderCreated)
	createOrder(t, w.env, localdb.DevOwner)
	d := w.dispatcher(0)
	d.Idle = time.Hour // only the retry it wrote makes it read the due jobs
	running(t, d, 200*time.Millisecond)
	w.waitFor("/flaky", 1, 5*time.Second)
	w.clock.set(w.start, 30*time.Second-time.Millisecond) // the retry is due 30 s after the first attempt
	time.Sleep(time.Second)
	if got := len(w.rc.At("/flaky")); got != 1 {
		t.Fatalf("/flaky got %d requests a moment before the retry was due, want 1", got)
	}
	w.clock.set(w.start, 30*time.Second)
	if took := w.waitFor("/flaky", 2, 5*time.Second); took > time.Second {
		t.Errorf("the retry came %v after it was due, want at the next tick", took)
	}
	var atts []webhooks.Attempt
	for end := time.Now().Add(2 * time.Second); len(atts) < 2 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		atts = w.attempts(localdb.DevOwner, hook.DocumentID) // the retry's record follows its answer
	}
	if len(atts) != 2 || atts[0].Status != http.StatusInternalServerError || atts[1].Status != http.StatusNoContent {
		t.Errorf("attempts %+v, want a failure then its retry delivered", atts)
	}
}

// TestDispatchInput: the function runs each invocation as the poller its
// schedule's input names, reading that poller's due shards (9 Queries of
// the due index a read for poller 0 of 2, with the unsharded key; 8 for
// poller 1 of 2; all 17 for EventBridge's plain Scheduled Event, the only
// poller), and refuses an input that names no poller of the allowed
// counts before it reads anything.
func TestDispatchInput(t *testing.T) {
	s, run := functest.NewScheduled(t, "WebhookDispatchFunction", wire)
	invoke := func(payload string) (calls, due int, err error) {
		s.Proxy.Take()
		ctx, cancel := context.WithTimeout(context.Background(), Margin+500*time.Millisecond)
		defer cancel()
		err = run(ctx, json.RawMessage(payload))
		all := storetest.Requests(s.Proxy.Take())
		for _, c := range all {
			if c.Operation == "Query" && c.Index == store.DueIndex {
				due++
			}
		}
		return len(all), due, err
	}
	scheduled := `{"version":"0","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`
	for _, c := range []struct {
		payload string
		per     int
	}{{`{"poller": 0, "pollers": 2}`, 9}, {`{"poller": 1, "pollers": 2}`, 8}, {`{"poller": 3, "pollers": 4}`, 4}, {`{"poller": 0, "pollers": 1}`, 17}, {scheduled, 17}} {
		_, n, err := invoke(c.payload)
		if err != nil {
			t.Fatalf("run %s: %v", c.payload, err)
		}
		if n == 0 || n%c.per != 0 {
			t.Errorf("run %s made %d Queries of the due index, want a multiple of %d (its shards)", c.payload, n, c.per)
		}
	}
	for _, payload := range []string{`{"poller": 2, "pollers": 2}`, `{"poller": 0, "pollers": 3}`, `{"poller": "0", "pollers": 2}`, `{"pollers": 2}`} {
		n, _, err := invoke(payload)
		if err == nil || !strings.Contains(err.Error(), "dispatch input") {
			t.Errorf("run %s: %v, want an error about its input", payload, err)
		}
		if n != 0 {
			t.Errorf("run %s made %d DynamoDB calls, want none", payload, n)
		}
	}
}

// TestTemplateRunsThePollers: for each number of pollers the template's
// DispatchPollers allows (exactly webhooks.PollerCounts), the function's
// enabled schedules are that many, every minute, and their inputs name
// pollers 0 to N-1 of N, each once; another number is refused.
func TestTemplateRunsThePollers(t *testing.T) {
	root, err := samtemplate.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "template.yaml")
	tmpl, err := samtemplate.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var allowed []int
	for _, v := range tmpl.Allowed["DispatchPollers"] {
		n, _ := strconv.Atoi(v)
		allowed = append(allowed, n)
	}
	if !slices.Equal(allowed, webhooks.PollerCounts()) || tmpl.Parameters["DispatchPollers"] != "1" {
		t.Fatalf("DispatchPollers allows %v (default %s), want %v (default 1)", allowed, tmpl.Parameters["DispatchPollers"], webhooks.PollerCounts())
	}
	for _, n := range allowed {
		tmpl, err := samtemplate.LoadWith(path, map[string]string{"DispatchPollers": strconv.Itoa(n)})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := tmpl.Function("WebhookDispatchFunction")
		var got []webhooks.Poller
		for _, s := range f.Schedules {
			if !s.Enabled {
				continue
			}
			p, err := webhooks.PollerOf([]byte(s.Input))
			if err != nil || s.Expression != "rate(1 minute)" {
				t.Errorf("%d pollers: schedule %s %s input %s: %v", n, s.Name, s.Expression, s.Input, err)
			}
			got = append(got, p)
		}
		var want []webhooks.Poller
		for i := range n {
			want = append(want, webhooks.Poller{Index: i, Count: n})
		}
		if n == 1 {
			want = []webhooks.Poller{{}}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d pollers: the enabled schedules run %v, want %v", n, got, want)
		}
	}
	if _, err := samtemplate.LoadWith(path, map[string]string{"DispatchPollers": "3"}); err == nil {
		t.Error("DispatchPollers=3 accepted")
	}
}
