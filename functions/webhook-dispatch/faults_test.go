package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// The tests of this file inject faults into the dispatch, end to end over
// the local engines: changes are made through the store and the
// fulfillment workflow, events go out through the real adapters to
// loopback receivers, and DynamoDB faults come from the stack's proxy.
// Where the retry schedule is long the dispatcher runs on a clock the test
// moves; the function's own run is used where real time suffices.

// other is the caller whose webhooks must never get dev's events.
const other = "someone-else"

// clock is a time the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// set moves the clock to start+d.
func (c *clock) set(start time.Time, d time.Duration) {
	c.mu.Lock()
	c.t = start.Add(d)
	c.mu.Unlock()
}

// world is one fault test's stack: the dispatch function over fresh
// tables, a store and the fulfillment workflow through the stack's proxy
// (so that its faults reach them), a caller's registry and a clock.
type world struct {
	t     *testing.T
	s     *functest.Stack
	run   function.Run
	env   *storetest.Env
	db    *store.DB
	f     *orders.Fulfiller
	reg   *webhooks.Registry
	clock *clock
	rc    *receiver
	start time.Time
}

func newWorld(t *testing.T) *world {
	s, run := functest.NewScheduled(t, "WebhookDispatchFunction", wire)
	env := s.Env
	db := store.New(localdb.Client(s.Proxy.URL))
	f := functest.Fulfiller(env)
	f.Orders = db.Orders(env.Table("OrdersTable"))
	start := time.Now().UTC().Truncate(time.Second)
	w := &world{t: t, s: s, run: run, env: env, db: db, f: f, clock: &clock{t: start}, rc: newReceiver(t), start: start,
		reg: &webhooks.Registry{Hooks: env.DB().Webhooks(env.Table("WebhooksTable")), Jobs: env.DB().Deliveries(env.Table("DeliveriesTable")),
			IDs: env.DB().IDs(env.Table("CountersTable"), 10), Guard: webhooks.Guard{Local: true}, Now: time.Now}}
	return w
}

// register registers the receiver's path as a webhook of owner for events.
func (w *world) register(owner, path string, events ...string) webhooks.Registered {
	w.t.Helper()
	return w.registerURL(owner, w.rc.URL+path, events...)
}

func (w *world) registerURL(owner, url string, events ...string) webhooks.Registered {
	w.t.Helper()
	h, err := w.reg.Register(context.Background(), owner, webhooks.Registration{URL: url, Events: events})
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

// allTypes are the four event types.
var allTypes = []string{stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged,
	stampduty.EventOrderDocumentUploaded, stampduty.EventOrderCertificateAttached}

// dispatcher returns a dispatcher over the real adapters, through the
// proxy, on the world's clock, with deliveries cut after timeout (0: the
// real 10 s).
func (w *world) dispatcher(timeout time.Duration) *webhooks.Dispatcher {
	env := w.env
	return &webhooks.Dispatcher{
		Outbox:    w.db.Orders(env.Table("OrdersTable")),
		Hooks:     w.db.Webhooks(env.Table("WebhooksTable")),
		Jobs:      w.db.Deliveries(env.Table("DeliveriesTable")),
		Files:     files.New(env.S3(), env.Table("FilesBucket")),
		Deliverer: webhooks.Deliverer{Guard: webhooks.Guard{Local: true}, Timeout: timeout},
		Now:       w.clock.now,
		Log:       w.s.Logs,
	}
}

// pass runs one pass of d at start+at, as Run does: relay, then deliver.
func (w *world) pass(ctx context.Context, d *webhooks.Dispatcher, at time.Duration) (webhooks.RelayReport, webhooks.DeliverReport, error) {
	w.clock.set(w.start, at)
	rr, err1 := d.Relay(ctx)
	dr, err2 := d.Deliver(ctx)
	return rr, dr, errors.Join(err1, err2)
}

// storedEvent is an event the orders table holds, with its order's owner.
type storedEvent struct {
	owner, order string
	stampduty.Pending
}

// stored returns the events pending in the orders' outboxes (read past
// the proxy, so no fault hides them), each order's oldest first.
func (w *world) stored() []storedEvent {
	w.t.Helper()
	ps, _, err := w.env.DB().Orders(w.env.Table("OrdersTable")).Pending(context.Background(), webhooks.Poller{}, "", 100)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []storedEvent
	for _, p := range ps {
		for _, ev := range p.Outbox {
			out = append(out, storedEvent{p.Owner, p.DocumentID, ev})
		}
	}
	return out
}

// job returns the job of event id for owner's webhook doc.
func (w *world) job(owner, doc, id string) webhooks.Job {
	w.t.Helper()
	j, ok, err := w.env.DB().Deliveries(w.env.Table("DeliveriesTable")).Job(context.Background(), owner, doc, id)
	if err != nil || !ok {
		w.t.Fatalf("job of event %s for webhook %s: %v, %v", id, doc, ok, err)
	}
	return j
}

// attempts returns the attempts of owner's webhook doc, oldest first.
func (w *world) attempts(owner, doc string) []webhooks.Attempt {
	w.t.Helper()
	atts, err := w.reg.Deliveries(context.Background(), owner, doc)
	if err != nil {
		w.t.Fatal(err)
	}
	slices.Reverse(atts)
	return atts
}

// received is one event a receiver got: the event id of its header, which
// must be its body's, and its body's type and order.
type received struct{ id, typ, order string }

// received decodes what path got, in order of arrival.
func (w *world) received(path string) []received {
	w.t.Helper()
	var out []received
	for _, d := range w.rc.At(path) {
		var ev webhooks.Event
		var o stampduty.Order
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			w.t.Fatalf("%s got %q: %v", path, d.Body, err)
		}
		if err := json.Unmarshal(ev.Data.Order, &o); err != nil {
			w.t.Fatalf("%s got the order %q: %v", path, ev.Data.Order, err)
		}
		if ev.ID != d.ID {
			w.t.Errorf("%s got event %s with the header id %s", path, ev.ID, d.ID)
		}
		out = append(out, received{d.ID, ev.Type, o.DocumentID})
	}
	return out
}

// expect checks that path got exactly the events of evs its webhook (of
// owner, subscribed to types) is owed, each order's in the order of their
// changes, none missing and none of another caller or type; with once,
// each exactly once (every attempt succeeded), else at least once, each
// attempt of an event with its id.
func (w *world) expect(path, owner string, types []string, evs []storedEvent, once bool) {
	w.t.Helper()
	owed := map[string]storedEvent{}
	var want []storedEvent
	for _, ev := range evs {
		if ev.owner == owner && slices.Contains(types, ev.Type) {
			owed[ev.ID] = ev
			want = append(want, ev)
		}
	}
	got := w.received(path)
	seen := map[string]int{}
	perOrder := map[string][]string{}
	for _, r := range got {
		ev, ok := owed[r.id]
		if !ok {
			w.t.Errorf("%s got event %s (%s of order %s), which its webhook is not owed", path, r.id, r.typ, r.order)
			continue
		}
		if r.typ != ev.Type || r.order != ev.order {
			w.t.Errorf("%s got event %s as %s of order %s, stored as %s of order %s", path, r.id, r.typ, r.order, ev.Type, ev.order)
		}
		if seen[r.id]++; seen[r.id] == 1 {
			perOrder[r.order] = append(perOrder[r.order], r.id)
		}
	}
	wantPerOrder := map[string][]string{}
	for _, ev := range want {
		wantPerOrder[ev.order] = append(wantPerOrder[ev.order], ev.ID)
		if seen[ev.ID] == 0 {
			w.t.Errorf("%s never got event %s (%s of order %s)", path, ev.ID, ev.Type, ev.order)
		}
		if once && seen[ev.ID] > 1 {
			w.t.Errorf("%s got event %s %d times, want once", path, ev.ID, seen[ev.ID])
		}
	}
	for order, ids := range wantPerOrder {
		if got := perOrder[order]; len(got) == len(ids) && !slices.Equal(got, ids) {
			w.t.Errorf("%s got the events of order %s in the order %v, want %v", path, order, got, ids)
		}
	}
}

// refuse is a proxy fault: DynamoDB refusing the op calls on table (index
// "" for the table itself) that match, without applying them.
func refuse(op, table string, match func() bool) func(storetest.ProxyCall) *storetest.Fault {
	return func(c storetest.ProxyCall) *storetest.Fault {
		if c.Operation == op && c.Table == table && c.Index == "" && (match == nil || match()) {
			return &storetest.Fault{Status: http.StatusBadRequest, Type: "AccessDeniedException"}
		}
		return nil
	}
}

// hang is a proxy fault: DynamoDB never answering the op calls on table.
func hang(op, table string) func(storetest.ProxyCall) *storetest.Fault {
	return func(c storetest.ProxyCall) *storetest.Fault {
		if c.Operation == op && c.Table == table && c.Index == "" {
			return &storetest.Fault{Hang: true}
		}
		return nil
	}
}

// createOrder stores a new order of owner with its order.created event, as
// the create-order function does, and returns it.
func createOrder(t *testing.T, env *storetest.Env, owner string) stampduty.Order {
	t.Helper()
	o, ev := newOrder(t, env)
	if _, err := env.DB().Orders(env.Table("OrdersTable")).Create(context.Background(), owner, o, ev); err != nil {
		t.Fatal(err)
	}
	return o
}

// newOrder returns a new order, not stored, and its order.created event.
func newOrder(t *testing.T, env *storetest.Env) (stampduty.Order, stampduty.Pending) {
	t.Helper()
	ctx := context.Background()
	db := env.DB()
	first, err := db.IDs(env.Table("CountersTable"), 10).Reserve(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	art, err := db.Articles(env.Table("ArticlesTable")).Get(ctx, "Affidavit", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	req := stampduty.OrderRequest{Amount: 20, Purpose: art.PurposeName, State: art.State, PaidBy: stampduty.SecondParty, Description: "N/A",
		FirstPartyMobileNumber: "9876543210", FirstPartyName: "Asha Rao", SecondPartyName: "Bank", FirstPartyPan: "ABCDE1234F"}
	o, err := stampduty.NewOrder(req, art, 20, stampduty.NewOrderIDs(first, 1), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ev, err := stampduty.NewPending(stampduty.EventOrderCreated, o.CreatedAt, o, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o, ev
}

// changes makes, through the workflows, an order of dev with three
// events (created, document uploaded, status changed) and an order of
// other with one (created), and returns the events they stored.
func (w *world) changes() []storedEvent {
	w.t.Helper()
	ctx := context.Background()
	before := w.stored()
	o := createOrder(w.t, w.env, localdb.DevOwner)
	if _, err := w.f.UploadDocument(ctx, localdb.DevOwner, o.DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF,
		Body: []byte("%PDF-1.7\nx\n%%EOF\n")}); err != nil {
		w.t.Fatal(err)
	}
	if err := w.advance(o); err != nil {
		w.t.Fatal(err)
	}
	createOrder(w.t, w.env, other)
	evs := slices.DeleteFunc(w.stored(), func(ev storedEvent) bool {
		return slices.ContainsFunc(before, func(b storedEvent) bool { return b.ID == ev.ID })
	})
	if len(evs) != 4 {
		w.t.Fatalf("%d events stored, want 4", len(evs))
	}
	return evs
}

// advance moves o's first fulfillment from Pending to Created, with a
// unique_doc_ref of its own (a number names one paper: papers.md).
func (w *world) advance(o stampduty.Order) error {
	_, err := w.f.Advance(context.Background(), o.DocumentID, o.Fulfillments[0].DocumentID,
		stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-" + strings.ToUpper(o.DocumentID)}, functest.Operator)
	return err
}

// subscribers registers the usual receivers: dev's /all (every type) and
// /created (order.created only), other's /other (every type).
func (w *world) subscribers() {
	w.register(localdb.DevOwner, "/all", allTypes...)
	w.register(localdb.DevOwner, "/created", stampduty.EventOrderCreated)
	w.register(other, "/other", allTypes...)
}

// expectAll checks the usual receivers got evs exactly once each.
func (w *world) expectAll(evs []storedEvent) {
	w.t.Helper()
	w.expect("/all", localdb.DevOwner, allTypes, evs, true)
	w.expect("/created", localdb.DevOwner, []string{stampduty.EventOrderCreated}, evs, true)
	w.expect("/other", other, allTypes, evs, true)
}

// TestDispatchDiesBeforeTheFirstAttempt: a run that dies after its relay
// put the jobs of a change and before it removed the events from the
// outbox (DynamoDB refuses the removal, or the run's context ends while it
// waits for it) loses nothing and doubles nothing: the next run puts no
// job twice, empties the outbox and delivers every event once.
func TestDispatchDiesBeforeTheFirstAttempt(t *testing.T) {
	for _, c := range []struct {
		name    string
		fault   func(table string) func(storetest.ProxyCall) *storetest.Fault
		timeout time.Duration
	}{
		{"RemovalRefused", func(tb string) func(storetest.ProxyCall) *storetest.Fault { return refuse("UpdateItem", tb, nil) }, time.Minute},
		{"RunCancelledDuringRemoval", func(tb string) func(storetest.ProxyCall) *storetest.Fault { return hang("UpdateItem", tb) }, time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.subscribers()
			evs := w.changes()
			d := w.dispatcher(0)
			w.s.Proxy.SetFault(c.fault(w.env.Table("OrdersTable")))
			ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			rep, err := d.Relay(ctx)
			cancel()
			w.s.Proxy.SetFault(nil)
			if rep.Jobs == 0 || rep.Relayed != 0 || c.timeout < time.Minute && err == nil {
				t.Fatalf("the dying relay: %+v, %v; want jobs put and no outbox emptied", rep, err)
			}
			if got := w.stored(); len(got) != len(evs) {
				t.Fatalf("%d events left in the outboxes, want all %d", len(got), len(evs))
			}
			rr, _, err := w.pass(context.Background(), d, time.Second)
			// 5 jobs in all: dev's 3 events to /all, its order.created to
			// /created, other's to /other.
			if err != nil || rep.Jobs+rr.Jobs != 5 || rr.Relayed != 2 {
				t.Errorf("the next pass: %+v after %+v, %v; want both outboxes emptied and no job put twice", rr, rep, err)
			}
			if got := w.stored(); len(got) != 0 {
				t.Errorf("%d events still pending", len(got))
			}
			w.pass(context.Background(), d, 2*time.Second)
			w.expectAll(evs)
		})
	}
}

// TestDispatchDiesMidAttempt: a run that dies after the POST and before
// recording the attempt holds the job's lease; no other run attempts it
// until the lease (the timeout and 5 s) runs out, and then the receiver
// gets the event again with the same id. Likewise when DynamoDB refuses
// the attempt's record.
func TestDispatchDiesMidAttempt(t *testing.T) {
	const timeout = 2 * time.Second
	for _, c := range []struct {
		name string
		// die makes the pass at start die after the POST.
		die func(w *world, d *webhooks.Dispatcher)
	}{
		{"RunCancelledAfterThePOST", func(w *world, d *webhooks.Dispatcher) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w.rc.On("/all", func(rw http.ResponseWriter, req *http.Request, n int) {
				if n == 1 {
					cancel() // the run dies while the receiver holds the POST
					<-req.Context().Done()
					return
				}
				rw.WriteHeader(http.StatusNoContent)
			})
			w.pass(ctx, d, 0)
		}},
		{"RecordRefused", func(w *world, d *webhooks.Dispatcher) {
			if _, err := d.Relay(context.Background()); err != nil {
				w.t.Fatal(err)
			}
			// The records go in a BatchWriteItem, before their jobs'.
			w.s.Proxy.SetFault(refuse("BatchWriteItem", w.env.Table("DeliveriesTable"), nil))
			defer w.s.Proxy.SetFault(nil)
			if _, _, err := w.pass(context.Background(), d, 0); err == nil {
				w.t.Error("the pass whose record was refused reports no error")
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			all := w.register(localdb.DevOwner, "/all", allTypes...)
			createOrder(t, w.env, localdb.DevOwner)
			evs := w.stored()
			d := w.dispatcher(timeout)
			c.die(w, d)
			if got := w.received("/all"); len(got) != 1 {
				t.Fatalf("/all got %d requests, want the one the run died in", len(got))
			}
			if atts := w.attempts(localdb.DevOwner, all.DocumentID); len(atts) != 0 {
				t.Fatalf("the dead attempt was recorded: %+v", atts)
			}
			// Until the lease runs out, no run attempts the job.
			w.pass(context.Background(), d, time.Second)
			w.pass(context.Background(), d, timeout+5*time.Second-time.Millisecond)
			if got := w.received("/all"); len(got) != 1 {
				t.Fatalf("/all got %d requests while the lease held, want 1", len(got))
			}
			w.pass(context.Background(), d, timeout+5*time.Second)
			got := w.received("/all")
			if len(got) != 2 || got[0].id != got[1].id || got[0].id != evs[0].ID {
				t.Errorf("/all got %+v, want event %s twice", got, evs[0].ID)
			}
			w.expect("/all", localdb.DevOwner, allTypes, evs, false)
			if atts := w.attempts(localdb.DevOwner, all.DocumentID); len(atts) != 1 || atts[0].Status != http.StatusNoContent ||
				atts[0].EventID != evs[0].ID || atts[0].NextAttemptAt != nil {
				t.Errorf("attempts %+v, want the one delivery recorded", atts)
			}
			if j := w.job(localdb.DevOwner, all.DocumentID, evs[0].ID); j.Done != webhooks.JobDelivered {
				t.Errorf("the job is %q, want delivered", j.Done)
			}
		})
	}
}

// TestDynamoDBRefusesTheWrites: a change whose order write DynamoDB refuses
// stores no change and so no event, and the change made again stores one;
// a relay whose job writes are refused, all or some, leaves the outbox for
// the next pass, which delivers every event once.
func TestDynamoDBRefusesTheWrites(t *testing.T) {
	t.Run("OrderWriteRefusedRecordsNoEvent", func(t *testing.T) {
		w := newWorld(t)
		w.subscribers()
		ctx := context.Background()
		d := w.dispatcher(0)
		o1 := createOrder(t, w.env, localdb.DevOwner)
		evs := w.stored()
		w.pass(ctx, d, 0)

		w.s.Proxy.SetFault(refuse("PutItem", w.env.Table("OrdersTable"), nil))
		o2, ev := newOrder(t, w.env)
		orders := w.db.Orders(w.env.Table("OrdersTable"))
		if _, err := orders.Create(ctx, localdb.DevOwner, o2, ev); err == nil {
			t.Fatal("the refused create succeeded")
		}
		if err := w.advance(o1); err == nil {
			t.Fatal("the refused change succeeded")
		}
		w.s.Proxy.SetFault(nil)
		if got := w.stored(); len(got) != 0 {
			t.Fatalf("refused writes left %d events", len(got))
		}
		if _, err := w.env.DB().Orders(w.env.Table("OrdersTable")).ByDocument(ctx, o2.DocumentID); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Fatalf("the refused order: %v, want not found", err)
		}
		w.pass(ctx, d, time.Second)

		if _, err := orders.Create(ctx, localdb.DevOwner, o2, ev); err != nil {
			t.Fatal(err)
		}
		if err := w.advance(o1); err != nil {
			t.Fatal(err)
		}
		again := w.stored()
		if len(again) != 2 {
			t.Fatalf("the changes made again stored %d events, want 2", len(again))
		}
		w.pass(ctx, d, 2*time.Second)
		w.expectAll(append(evs, again...))
		if got := w.received("/all"); len(got) != 3 {
			t.Errorf("/all got %d events, want 3", len(got))
		}
	})
	for _, c := range []struct {
		name string
		// refused says whether the n-th job write (from 1) is refused.
		refused func(n int64) bool
	}{
		{"AllJobWritesRefused", func(int64) bool { return true }},
		{"SomeJobWritesRefused", func(n int64) bool { return n%2 == 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.subscribers()
			evs := w.changes()
			d := w.dispatcher(0)
			var n atomic.Int64
			w.s.Proxy.SetFault(refuse("PutItem", w.env.Table("DeliveriesTable"), func() bool { return c.refused(n.Add(1)) }))
			rr, err := d.Relay(context.Background())
			w.s.Proxy.SetFault(nil)
			if err != nil || rr.Relayed == 2 || rr.Left == 0 {
				t.Fatalf("the refused relay: %+v, %v; want outboxes left", rr, err)
			}
			if got := w.stored(); len(got) == 0 {
				t.Fatal("the outboxes were emptied though their jobs were refused")
			}
			w.pass(context.Background(), d, time.Second)
			w.pass(context.Background(), d, 2*time.Second)
			if got := w.stored(); len(got) != 0 {
				t.Errorf("%d events still pending", len(got))
			}
			w.expectAll(evs)
		})
	}
}

// TestHostileReceivers: a receiver that fails is retried on the schedule,
// counted from the first attempt, with the same event id, and given up
// after the 7th attempt; one that hangs is cut at the timeout; a redirect
// is not followed and counts as a failure; a 10 MB answer is cut at 64 KiB
// without holding the pass; a receiver that disappears is retried and gets
// the event once it is back; a 410 disables its webhook at once. The other
// webhooks get their events all along.
func TestHostileReceivers(t *testing.T) {
	t.Run("FailingIsRetriedOnScheduleThenGivenUp", failingIsRetriedOnScheduleThenGivenUp)
	t.Run("HangingIsCutAtTheTimeout", hangingIsCutAtTheTimeout)
	t.Run("RedirectIsNotFollowed", redirectIsNotFollowed)
	t.Run("HugeAnswerIsCut", hugeAnswerIsCut)
	t.Run("DisappearedIsRetriedUntilBack", disappearedIsRetriedUntilBack)
	t.Run("GoneDisablesAtOnce", goneDisablesAtOnce)
}

// retrySchedule is when each attempt of a delivery is due after the first.
func retrySchedule() []time.Duration {
	return []time.Duration{0, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}
}

func failingIsRetriedOnScheduleThenGivenUp(t *testing.T) {
	schedule := retrySchedule()
	w := newWorld(t)
	w.subscribers()
	fail := w.register(localdb.DevOwner, "/fail", stampduty.EventOrderCreated)
	w.rc.On("/fail", func(rw http.ResponseWriter, _ *http.Request, _ int) { rw.WriteHeader(http.StatusInternalServerError) })
	evs := w.changes()
	d := w.dispatcher(0)
	ctx := context.Background()
	for i, at := range schedule {
		if i > 0 {
			w.pass(ctx, d, at-time.Second)
			if got := w.received("/fail"); len(got) != i {
				t.Fatalf("a second before attempt %d is due: /fail got %d requests, want %d", i+1, len(got), i)
			}
		}
		w.pass(ctx, d, at)
		if got := w.received("/fail"); len(got) != i+1 {
			t.Fatalf("when attempt %d is due (%v): /fail got %d requests", i+1, at, len(got))
		}
	}
	w.pass(ctx, d, 48*time.Hour)
	got := w.received("/fail")
	if len(got) != len(schedule) {
		t.Errorf("/fail got %d requests after giving up, want %d", len(got), len(schedule))
	}
	for _, r := range got {
		if r.id != got[0].id {
			t.Errorf("attempts carry the ids %s and %s", got[0].id, r.id)
		}
	}
	w.expect("/fail", localdb.DevOwner, []string{stampduty.EventOrderCreated}, evs, false)
	atts := w.attempts(localdb.DevOwner, fail.DocumentID)
	if len(atts) != len(schedule) {
		t.Fatalf("%d attempts recorded, want %d", len(atts), len(schedule))
	}
	for i, a := range atts {
		var next string
		if i+1 < len(schedule) {
			next = stampduty.FormatTime(w.start.Add(schedule[i+1]))
		}
		if a.Attempt != i+1 || a.Status != http.StatusInternalServerError || a.At != stampduty.FormatTime(w.start.Add(schedule[i])) ||
			(a.NextAttemptAt == nil) != (next == "") || a.NextAttemptAt != nil && *a.NextAttemptAt != next {
			t.Errorf("attempt %d: %+v, want status 500 at %v, next %q", i+1, a, schedule[i], next)
		}
	}
	if j := w.job(localdb.DevOwner, fail.DocumentID, got[0].id); j.Done != webhooks.JobGaveUp || j.N != len(schedule) {
		t.Errorf("the job: %q after %d attempts, want given up after %d", j.Done, j.N, len(schedule))
	}
	w.expectAll(evs)
}

// retried registers path answering bad to the first attempt and 204
// to the next, makes the changes, and checks that the first attempt
// failed (check) and the retry, 30 s later, delivered the same event.
func retried(t *testing.T, w *world, timeout time.Duration, path string, bad answer, check func(a webhooks.Attempt, took time.Duration)) {
	h := w.register(localdb.DevOwner, path, stampduty.EventOrderCreated)
	w.rc.On(path, func(rw http.ResponseWriter, req *http.Request, n int) {
		if n == 1 {
			bad(rw, req, n)
			return
		}
		rw.WriteHeader(http.StatusNoContent)
	})
	evs := w.changes()
	d := w.dispatcher(timeout)
	ctx := context.Background()
	began := time.Now()
	if _, _, err := w.pass(ctx, d, 0); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	atts := w.attempts(localdb.DevOwner, h.DocumentID)
	if len(atts) != 1 || atts[0].NextAttemptAt == nil || *atts[0].NextAttemptAt != stampduty.FormatTime(w.start.Add(30*time.Second)) {
		t.Fatalf("attempts %+v, want one failure due again in 30 s", atts)
	}
	check(atts[0], took)
	w.expectAll(evs) // the other webhooks are not held
	w.pass(ctx, d, 30*time.Second)
	got := w.received(path)
	if len(got) != 2 || got[0].id != got[1].id {
		t.Fatalf("%s got %+v, want one event twice", path, got)
	}
	w.expect(path, localdb.DevOwner, []string{stampduty.EventOrderCreated}, evs, false)
	if atts := w.attempts(localdb.DevOwner, h.DocumentID); len(atts) != 2 || atts[1].Status != http.StatusNoContent || atts[1].NextAttemptAt != nil {
		t.Errorf("attempts %+v, want the retry delivered", atts)
	}
}

func hangingIsCutAtTheTimeout(t *testing.T) {
	w := newWorld(t)
	w.subscribers()
	const timeout = 500 * time.Millisecond
	retried(t, w, timeout, "/hang", func(_ http.ResponseWriter, req *http.Request, _ int) {
		select {
		case <-req.Context().Done():
		case <-time.After(time.Minute):
		}
	}, func(a webhooks.Attempt, took time.Duration) {
		if a.Status != 0 || a.DurationMS < timeout.Milliseconds() || a.DurationMS > 3*timeout.Milliseconds() {
			t.Errorf("the hanging attempt: %+v, want no status, cut at %v", a, timeout)
		}
	})
}

func redirectIsNotFollowed(t *testing.T) {
	w := newWorld(t)
	w.subscribers()
	retried(t, w, 0, "/redirect", func(rw http.ResponseWriter, req *http.Request, _ int) {
		http.Redirect(rw, req, w.rc.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}, func(a webhooks.Attempt, _ time.Duration) {
		if a.Status != http.StatusTemporaryRedirect {
			t.Errorf("the redirected attempt: %+v, want status 307", a)
		}
	})
	if got := w.rc.At("/elsewhere"); len(got) != 0 {
		t.Errorf("the redirect was followed: /elsewhere got %d requests", len(got))
	}
}

func hugeAnswerIsCut(t *testing.T) {
	w := newWorld(t)
	w.subscribers()
	// 10 MB in 64 KiB pieces, 10 ms apart: reading it all would take
	// more than 1.6 s.
	var sent atomic.Int64
	var cut atomic.Bool
	retried(t, w, 0, "/huge", func(rw http.ResponseWriter, _ *http.Request, _ int) {
		rw.WriteHeader(http.StatusInternalServerError)
		piece := []byte(strings.Repeat("x", 64<<10))
		for sent.Load() < 10<<20 {
			n, err := rw.Write(piece)
			sent.Add(int64(n))
			if err != nil {
				cut.Store(true)
				return
			}
			rw.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	}, func(a webhooks.Attempt, took time.Duration) {
		if a.Status != http.StatusInternalServerError || a.DurationMS > 1000 || took > 3*time.Second {
			t.Errorf("the huge answer's attempt: %+v, the pass took %v; want it cut short", a, took)
		}
	})
	time.Sleep(200 * time.Millisecond) // the receiver notices the closed connection
	if !cut.Load() || sent.Load() >= 10<<20 {
		t.Errorf("the receiver sent %d bytes, cut %v: want the connection dropped before 10 MB", sent.Load(), cut.Load())
	}
}

func disappearedIsRetriedUntilBack(t *testing.T) {
	schedule := retrySchedule()
	w := newWorld(t)
	w.subscribers()
	away := newReceiver(t)
	addr := away.Listener.Addr().String()
	h := w.registerURL(localdb.DevOwner, away.URL+"/back", stampduty.EventOrderCreated)
	away.Close()
	evs := w.changes()
	d := w.dispatcher(0)
	ctx := context.Background()
	w.pass(ctx, d, 0)
	w.pass(ctx, d, schedule[1])
	atts := w.attempts(localdb.DevOwner, h.DocumentID)
	if len(atts) != 2 || atts[0].Status != 0 || atts[1].Status != 0 || atts[1].NextAttemptAt == nil {
		t.Fatalf("attempts while away: %+v, want two refused connections and a retry due", atts)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the receiver's port was taken meanwhile: %v", err)
	}
	back := startReceiver(t, l)
	w.pass(ctx, d, schedule[2])
	w.expectAll(evs)
	w.rc = back
	w.expect("/back", localdb.DevOwner, []string{stampduty.EventOrderCreated}, evs, true)
	if atts := w.attempts(localdb.DevOwner, h.DocumentID); len(atts) != 3 || atts[2].Status != http.StatusNoContent || atts[2].NextAttemptAt != nil {
		t.Errorf("attempts %+v, want the third delivered", atts)
	}
}

func goneDisablesAtOnce(t *testing.T) {
	schedule := retrySchedule()
	w := newWorld(t)
	w.subscribers()
	gone := w.register(localdb.DevOwner, "/gone", allTypes...)
	evs := w.changes()
	d := w.dispatcher(0)
	ctx := context.Background()
	if _, dr, err := w.pass(ctx, d, 0); err != nil || dr.Disabled != 1 {
		t.Fatalf("the pass: %+v, %v; want one webhook disabled", dr, err)
	}
	got := w.received("/gone")
	if len(got) != 1 {
		t.Fatalf("/gone got %d requests, want 1", len(got))
	}
	hooks, err := w.reg.List(ctx, localdb.DevOwner)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(hooks, func(h webhooks.Webhook) bool { return h.DocumentID == gone.DocumentID }); i < 0 || hooks[i].Enabled {
		t.Errorf("the webhook that answered 410 is not disabled")
	}
	for _, ev := range evs {
		if ev.owner == localdb.DevOwner {
			if j := w.job(localdb.DevOwner, gone.DocumentID, ev.ID); j.Done != webhooks.JobDisabled {
				t.Errorf("the job of %s is %q, want disabled", ev.Type, j.Done)
			}
		}
	}
	o := createOrder(t, w.env, localdb.DevOwner)
	later := w.stored()
	for _, at := range schedule[1:] {
		w.pass(ctx, d, at)
	}
	if got := w.received("/gone"); len(got) != 1 {
		t.Errorf("/gone got %d requests after 410, want only the first", len(got))
	}
	if atts := w.attempts(localdb.DevOwner, gone.DocumentID); len(atts) != 1 || atts[0].Status != http.StatusGone || atts[0].NextAttemptAt != nil {
		t.Errorf("attempts %+v, want the 410 alone with no next attempt", atts)
	}
	if _, ok, err := w.env.DB().Deliveries(w.env.Table("DeliveriesTable")).Job(ctx, localdb.DevOwner, gone.DocumentID, later[0].ID); ok || err != nil {
		t.Errorf("order %s's later event got a job for the disabled webhook (%v)", o.DocumentID, err)
	}
	w.expectAll(append(evs, later...))
}

// TestOverlappingRuns: two runs of the function at once (EventBridge
// starts one while the last still polls) attempt no job twice at once and
// deliver every event once.
func TestOverlappingRuns(t *testing.T) {
	w := newWorld(t)
	w.subscribers()
	var (
		mu       sync.Mutex
		inFlight = map[string]int{}
		twice    []string
	)
	w.rc.On("/all", func(rw http.ResponseWriter, req *http.Request, _ int) {
		id := req.Header.Get(webhooks.HeaderEventID)
		mu.Lock()
		if inFlight[id]++; inFlight[id] > 1 {
			twice = append(twice, id)
		}
		mu.Unlock()
		time.Sleep(150 * time.Millisecond)
		mu.Lock()
		inFlight[id]--
		mu.Unlock()
		rw.WriteHeader(http.StatusNoContent)
	})
	var evs []storedEvent
	for range 3 {
		evs = append(evs, w.changes()...)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), Margin+3*time.Second)
			defer cancel()
			errs[i] = w.run(ctx, nil)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if len(twice) > 0 {
		t.Errorf("events attempted twice at once: %v", twice)
	}
	w.expectAll(evs)
}
