package store_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// pending returns a new pending event of type typ about o, made at o's updatedAt.
func pending(t testing.TB, typ string, o stampduty.Order, previous, status *string) stampduty.Pending {
	t.Helper()
	p, err := stampduty.NewPending(typ, o.UpdatedAt, o, previous, status)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ids returns the ids of events.
func eventIDs(events []stampduty.Pending) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.ID)
	}
	return out
}

// pendingDocs returns the documentIds of the orders Pending lists.
func pendingDocs(t *testing.T, ords *store.Orders) []string {
	t.Helper()
	found, _, err := ords.Pending(context.Background(), webhooks.Poller{}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, s := range found {
		docs = append(docs, s.DocumentID)
	}
	return docs
}

// checkNoOutbox checks that an order item has no outbox and is not in the
// outbox index.
func checkNoOutbox(t *testing.T, item map[string]types.AttributeValue) {
	t.Helper()
	for _, name := range []string{"ob", "obp", "obk"} {
		if v, ok := item[name]; ok {
			t.Errorf("%s = %s on an order without pending events", name, render(v))
		}
	}
}

// outboxFixture is a test's tables, read through a proxy that records the
// calls, with the orders TestOutbox's steps store.
type outboxFixture struct {
	ctx   context.Context
	env   *storetest.Env
	proxy *storetest.Proxy
	ids   *store.IDs
	ords  *store.Orders
}

// newOutboxFixture opens a test's tables through a proxy, with ids reserved
// 30 at a time.
func newOutboxFixture(t *testing.T) *outboxFixture {
	env, db, proxy, ids := proxiedStore(t, 30)
	return &outboxFixture{ctx: context.Background(), env: env, proxy: proxy, ids: ids, ords: db.Orders(env.Table("OrdersTable"))}
}

// checkCalls checks the calls made since the last Take.
func (f *outboxFixture) checkCalls(t *testing.T, want string) {
	t.Helper()
	if got := f.env.Operations(f.proxy.Take()); got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
}

// item returns the stored item of s.
func (f *outboxFixture) item(t *testing.T, s orders.Stored) map[string]types.AttributeValue {
	t.Helper()
	return getItem(t, f.env, "OrdersTable", map[string]types.AttributeValue{"owner": avS(s.Owner), "seq": avN(strconv.FormatInt(s.Seq, 10))})
}

// create stores a new order of owner with its order.created event.
func (f *outboxFixture) create(t *testing.T, owner string, n int) (orders.Stored, stampduty.Pending) {
	t.Helper()
	o := newOrder(t, f.ids, n)
	ev := pending(t, stampduty.EventOrderCreated, o, nil, nil)
	seq, err := f.ords.Create(f.ctx, owner, o, ev)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.ords.Reread(f.ctx, orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: owner}, Seq: seq})
	if err != nil {
		t.Fatal(err)
	}
	return s, ev
}

// advance stores s's fulfillment moved to Created with its event.
func (f *outboxFixture) advance(t *testing.T, s orders.Stored, ref string) (orders.Stored, stampduty.Pending) {
	t.Helper()
	next := moved(t, s.Order, ref)
	prev, st := stampduty.StatusPending, stampduty.StatusCreated
	ev := pending(t, stampduty.EventOrderStatusChanged, next, &prev, &st)
	if err := f.ords.Replace(f.ctx, s, next, ev); err != nil {
		t.Fatal(err)
	}
	now, err := f.ords.Reread(f.ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return now, ev
}

// TestOutbox: an order's pending events are stored in the write of its
// change, found through the outbox index, and removed by the relay without
// ever making a change of the order fail.
func TestOutbox(t *testing.T) {
	f := newOutboxFixture(t)
	testkit.Steps(t, f.createStoresItsEventInTheSameWrite, f.replaceKeepsTheOutboxItReadAndAppends,
		f.orderWithoutEventsIsNotInTheIndex, f.pendingIsOneScanOldestFirst,
		f.relayedRemovesThemWithOneConditionalUpdate, f.errRelayedAfterAChangeRemovesNothing,
		f.errRelayedTwiceFromOneRead, f.writerWhoReadBeforeTheRelayWritesItBack,
		f.relayedWithNothingToRemoveWritesNothing)
}

func (f *outboxFixture) createStoresItsEventInTheSameWrite(t *testing.T) {
	f.proxy.Take()
	s, ev := f.create(t, "alice", 1)
	// the ids (a fresh stack: the shard's first block, then its seed, read
	// from the counter before the shards), the seq (the caller's first: the
	// counter, then its seed from the newest stored seq), the one PutItem,
	// the Reread
	f.checkCalls(t, "GetItem:CountersTable=1 PutItem:OrdersTable=1 Query:OrdersTable=2 UpdateItem:CountersTable=2 UpdateItem:OrdersTable=2")
	if !reflect.DeepEqual(s.Outbox, []stampduty.Pending{ev}) {
		t.Errorf("outbox = %+v, want %+v", s.Outbox, ev)
	}
	it := f.item(t, s)
	if got, want := render(it["obp"]), `{S:"`+store.OutboxShard(s.DocumentID)+`"}`; got != want { // its shard
		t.Errorf("obp = %s, want %s", got, want)
	}
	if got, want := render(it["obk"]), `{S:"`+ev.At+"#"+s.DocumentID+`"}`; got != want {
		t.Errorf("obk = %s, want %s", got, want)
	}
}

func (f *outboxFixture) replaceKeepsTheOutboxItReadAndAppends(t *testing.T) {
	s, created := f.create(t, "bob", 2)
	s, moved := f.advance(t, s, "REF-B")
	if got, want := eventIDs(s.Outbox), []string{created.ID, moved.ID}; !slices.Equal(got, want) {
		t.Fatalf("outbox = %v, want %v (oldest first)", got, want)
	}
	if got := s.Outbox[1]; !reflect.DeepEqual(got, moved) {
		t.Errorf("stored event\n%+v\nwant\n%+v", got, moved)
	}
	if got, want := render(f.item(t, s)["obk"]), `{S:"`+created.At+"#"+s.DocumentID+`"}`; got != want {
		t.Errorf("obk = %s, want the oldest event's %s", got, want)
	}
}

func (f *outboxFixture) orderWithoutEventsIsNotInTheIndex(t *testing.T) {
	o := newOrder(t, f.ids, 3)
	if _, err := f.ords.Create(f.ctx, "carol", o); err != nil {
		t.Fatal(err)
	}
	s, err := f.ords.Reread(f.ctx, orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: "carol"}, Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkNoOutbox(t, f.item(t, s))
	if docs := pendingDocs(t, f.ords); slices.Contains(docs, o.DocumentID) {
		t.Errorf("Pending lists %s, which has no pending events", o.DocumentID)
	}
}

func (f *outboxFixture) pendingIsOneScanOldestFirst(t *testing.T) {
	e2, db2, proxy2, ids2 := proxiedStore(t, 30)
	ords2 := db2.Orders(e2.Table("OrdersTable"))
	var want []string
	for i, at := range []string{"2026-11-21T04:09:02.000Z", "2026-11-21T04:09:00.000Z", "2026-11-21T04:09:01.000Z"} {
		o := newOrder(t, ids2, i)
		o.CreatedAt, o.UpdatedAt = at, at
		if _, err := ords2.Create(f.ctx, "dave", o, pending(t, stampduty.EventOrderCreated, o, nil, nil)); err != nil {
			t.Fatal(err)
		}
		want = append(want, o.DocumentID)
	}
	want = []string{want[1], want[2], want[0]}
	proxy2.Take()
	proxy2.SetMode(storetest.Account)
	if got := pendingDocs(t, ords2); !slices.Equal(got, want) {
		t.Errorf("Pending = %v, want %v (the longest-waiting first)", got, want)
	}
	calls := proxy2.Take()
	// Every shard and the unsharded key in one call, eventually
	// consistent: the index's three items (under 4 KB) are 0.5 RCU.
	if got, want := e2.Operations(calls), "Scan:OrdersTable/index/outbox=1"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
	if c := calls[0]; !c.Accounted || c.Billed.Read != 0.5 || c.ItemBytes == 0 {
		t.Errorf("the Scan is accounted %v, billed %v for %d bytes: want 0.5 RCU for the items it read", c.Accounted, c.Billed, c.ItemBytes)
	}
	// Idle: the index holds none.
	found, _, err := ords2.Pending(f.ctx, webhooks.Poller{}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range found {
		if err := ords2.Relayed(f.ctx, s, eventIDs(s.Outbox)); err != nil {
			t.Fatal(err)
		}
	}
	proxy2.Take()
	if got := pendingDocs(t, ords2); len(got) != 0 {
		t.Errorf("Pending = %v, want none", got)
	}
	if calls := proxy2.Take(); e2.Operations(calls) != "Scan:OrdersTable/index/outbox=1" || calls[0].Billed.Read != 0.5 {
		t.Errorf("an empty index: %s, %v, want one Scan of 0.5 RCU", e2.Operations(calls), calls[0].Billed)
	}
}

func (f *outboxFixture) relayedRemovesThemWithOneConditionalUpdate(t *testing.T) {
	s, created := f.create(t, "erin", 4)
	s, moved := f.advance(t, s, "REF-E")
	f.proxy.Take()
	if err := f.ords.Relayed(f.ctx, s, []string{created.ID}); err != nil {
		t.Fatal(err)
	}
	f.checkCalls(t, "UpdateItem:OrdersTable=1")
	now, err := f.ords.Reread(f.ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := eventIDs(now.Outbox), []string{moved.ID}; !slices.Equal(got, want) {
		t.Errorf("outbox = %v, want %v", got, want)
	}
	if now.Version != s.Version {
		t.Errorf("version %d after relaying, want %d: the relay never changes it", now.Version, s.Version)
	}
	if got, want := render(f.item(t, now)["obk"]), `{S:"`+moved.At+"#"+s.DocumentID+`"}`; got != want {
		t.Errorf("obk = %s, want the oldest remaining event's %s", got, want)
	}
	if err := f.ords.Relayed(f.ctx, now, []string{moved.ID}); err != nil {
		t.Fatal(err)
	}
	checkNoOutbox(t, f.item(t, now))
	if docs := pendingDocs(t, f.ords); slices.Contains(docs, s.DocumentID) {
		t.Errorf("Pending still lists %s", s.DocumentID)
	}
}

func (f *outboxFixture) errRelayedAfterAChangeRemovesNothing(t *testing.T) {
	read, created := f.create(t, "frank", 5)
	f.advance(t, read, "REF-F")
	err := f.ords.Relayed(f.ctx, read, []string{created.ID})
	if !errors.Is(err, orders.ErrChanged) {
		t.Fatalf("Relayed from a stale read = %v, want ErrChanged", err)
	}
	now, _ := f.ords.Reread(f.ctx, read)
	if len(now.Outbox) != 2 {
		t.Errorf("outbox = %v, want both events kept", eventIDs(now.Outbox))
	}
}

func (f *outboxFixture) errRelayedTwiceFromOneRead(t *testing.T) {
	read, created := f.create(t, "gina", 6)
	read, _ = f.advance(t, read, "REF-G")
	if err := f.ords.Relayed(f.ctx, read, []string{created.ID}); err != nil {
		t.Fatal(err)
	}
	if err := f.ords.Relayed(f.ctx, read, []string{created.ID}); !errors.Is(err, orders.ErrChanged) {
		t.Errorf("the same relay again = %v, want ErrChanged (its outbox is no longer the one read)", err)
	}
}

func (f *outboxFixture) writerWhoReadBeforeTheRelayWritesItBack(t *testing.T) {
	// Expected: the writer stores the outbox it read. The relay finds
	// the event again and hands it on once more, which does nothing:
	// its job per webhook already exists.
	read, created := f.create(t, "hank", 7)
	if err := f.ords.Relayed(f.ctx, read, []string{created.ID}); err != nil {
		t.Fatal(err)
	}
	now, moved := f.advance(t, read, "REF-H")
	if got, want := eventIDs(now.Outbox), []string{created.ID, moved.ID}; !slices.Equal(got, want) {
		t.Errorf("outbox = %v, want %v: the writer's change succeeds, with what it read", got, want)
	}
	if docs := pendingDocs(t, f.ords); !slices.Contains(docs, read.DocumentID) {
		t.Errorf("Pending does not list %s again", read.DocumentID)
	}
}

func (f *outboxFixture) relayedWithNothingToRemoveWritesNothing(t *testing.T) {
	s, _ := f.create(t, "ivan", 8)
	f.proxy.Take()
	if err := f.ords.Relayed(f.ctx, s, []string{"evt_notinthisoutbox000000000"}); err != nil {
		t.Fatal(err)
	}
	if calls := f.proxy.Take(); len(calls) != 0 {
		t.Errorf("calls = %s, want none", f.env.Operations(calls))
	}
}

// TestOutboxWriteUnits measures what a pending event costs: the write units
// DynamoDB bills a create and a status change of a typical order (the
// table and its three indexes: by-document-keys and queue-shards project
// the keys only, outbox every attribute), with and without the event in
// the write. The table design (README.md) quotes
// these numbers.
func TestOutboxWriteUnits(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 30)
	proxy.SetMode(storetest.Account)
	ords := db.Orders(env.Table("OrdersTable"))
	// put returns the billed write units and the item's size of the one
	// PutItem among calls.
	write := func(op string, calls []storetest.ProxyCall) (float64, int) {
		t.Helper()
		for _, c := range calls {
			if c.Operation == op {
				if !c.Accounted {
					t.Fatalf("PutItem not accounted: %+v", c)
				}
				return c.Billed.Write, c.ItemBytes
			}
		}
		t.Fatalf("no %s among %s", op, env.Operations(calls))
		return 0, 0
	}
	for _, tc := range []struct {
		name  string
		event bool
		// relayed: the create's event is relayed before the change, as it
		// is within seconds when the dispatcher runs.
		relayed     bool
		create      float64 // the create's write units
		relay       float64 // the relay's of the create's event
		change      float64 // a status change's
		relayChange float64 // the relay's of the change's event(s)
	}{
		{"WithoutAnEvent", false, false, 3, 0, 3, 0},
		// The change's event leaves out its order (the item's own): the
		// item stays under 1 KB, so its writes and the outbox entry are
		// 1 WCU each (6 and 4 while every event carried its order).
		{"WithAPendingEvent", true, true, 4, 2, 4, 2},
		{"WithTheCreatesEventStillPending", true, false, 4, 0, 6, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner := "owner-" + tc.name
			o := newOrder(t, ids, 1)
			var evs []stampduty.Pending
			if tc.event {
				evs = append(evs, pending(t, stampduty.EventOrderCreated, o, nil, nil))
			}
			proxy.Take()
			seq, err := ords.Create(ctx, owner, o, evs...)
			if err != nil {
				t.Fatal(err)
			}
			units, size := write("PutItem", proxy.Take())
			t.Logf("create: %d bytes, %v WCU", size, units)
			if units != tc.create {
				t.Errorf("create billed %v WCU, want %v", units, tc.create)
			}
			s, err := ords.Reread(ctx, orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: owner}, Seq: seq})
			if err != nil {
				t.Fatal(err)
			}
			if tc.relayed {
				proxy.Take()
				if err := ords.Relayed(ctx, s, eventIDs(s.Outbox)); err != nil {
					t.Fatal(err)
				}
				units, size := write("UpdateItem", proxy.Take())
				t.Logf("relay: %d bytes, %v WCU", size, units)
				if units != tc.relay {
					t.Errorf("relay billed %v WCU, want %v", units, tc.relay)
				}
				s.Outbox = nil
			}
			next := moved(t, s.Order, "REF-1")
			evs = nil
			if tc.event {
				prev, st := stampduty.StatusPending, stampduty.StatusCreated
				evs = append(evs, pending(t, stampduty.EventOrderStatusChanged, next, &prev, &st))
			}
			proxy.Take()
			if err := ords.Replace(ctx, s, next, evs...); err != nil {
				t.Fatal(err)
			}
			units, size = write("PutItem", proxy.Take())
			t.Logf("status change: %d bytes, %v WCU", size, units)
			if units != tc.change {
				t.Errorf("status change billed %v WCU, want %v", units, tc.change)
			}
			if !tc.event {
				return
			}
			if s, err = ords.Reread(ctx, s); err != nil {
				t.Fatal(err)
			}
			proxy.Take()
			if err := ords.Relayed(ctx, s, eventIDs(s.Outbox)); err != nil {
				t.Fatal(err)
			}
			units, size = write("UpdateItem", proxy.Take())
			t.Logf("relay of the change: %d bytes, %v WCU", size, units)
			if units != tc.relayChange {
				t.Errorf("relay billed %v WCU, want %v", units, tc.relayChange)
			}
		})
	}
}
