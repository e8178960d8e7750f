package store_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit"
	"stampduty/shared/testkit/storetest"
)

// shardOf is the queue shard of documentId doc: FNV-1a modulo 16, as the
// store computes it (queueShardsAreStable checks the stored items).
func shardOf(doc string) string {
	h := fnv.New32a()
	h.Write([]byte(doc))
	return fmt.Sprintf("%02d", h.Sum32()%16)
}

// queueFixture is 24 Pending orders of three owners, a second apart, whose
// documentIds put orders 2 and 3, and 5 and 6, in the same shard (so that
// pages of 3 end inside a shard), and an order stored before the shards,
// with the bare status as its qs, between orders 7 and 8.
type queueFixture struct {
	ctx    context.Context
	env    *storetest.Env
	proxy  *storetest.Proxy
	ords   *store.Orders
	stored []orders.Stored // oldest first, the legacy order among them
	legacy orders.Stored
}

func newQueueFixture(t *testing.T) *queueFixture {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 90)
	f := &queueFixture{ctx: ctx, env: env, proxy: proxy, ords: db.Orders(env.Table("OrdersTable"))}
	var docs []string
	for i := range 24 {
		doc := ""
		for k := 0; doc == ""; k++ {
			d := fmt.Sprintf("q%02dx%020d", i, k)
			if (i != 3 && i != 6) || shardOf(d) == shardOf(docs[i-1]) {
				doc = d
			}
		}
		docs = append(docs, doc)
		o := newOrder(t, ids, i)
		o.DocumentID = doc
		o.CreatedAt = fmt.Sprintf("2026-11-21T05:00:%02d.000Z", i)
		o.UpdatedAt, o.Fulfillments[0].History[0].At = o.CreatedAt, o.CreatedAt
		owner := fmt.Sprintf("owner-%d", i%3)
		seq, err := f.ords.Create(ctx, owner, o)
		if err != nil {
			t.Fatal(err)
		}
		f.stored = append(f.stored, orders.Stored{OpsOrder: stampduty.OpsOrder{Order: o, Owner: owner, Caller: owner}, Seq: seq, Version: 1})
	}
	item := storedOrder("legacy")
	item["doc"], item["at"] = avS("lgcy0000000000000000000a"), avS("2026-11-21T05:00:07.500Z")
	item["v"], item["qs"], item["qk"] = avN("1"), avS("Pending"), avS("2026-11-21T05:00:07.500Z#lgcy0000000000000000000a")
	putItem(t, env, "OrdersTable", item)
	var err error
	if f.legacy, err = f.ords.Reread(ctx, orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: "legacy"}, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	f.stored = slices.Insert(f.stored, 8, f.legacy)
	proxy.Take()
	return f
}

// TestQueueShards: the queue is spread over 16 shards per status and read
// back oldest first across them, page by page with an opaque cursor,
// orders stored before the shards among them; a page is exactly the
// orders it listed before the shards, read from the table.
func TestQueueShards(t *testing.T) {
	f := newQueueFixture(t)
	testkit.Steps(t, f.queueShardsAreStable, f.pagesOldestFirstAcrossShards, f.cursorRoundTrip,
		f.byDocumentAnswersTheItem, f.movedOrderLeavesTheQueue, f.backfillMovesOrdersIntoShards)
}

func (f *queueFixture) queueShardsAreStable(t *testing.T) {
	shards := map[string]bool{}
	for _, s := range f.stored {
		if s.Owner == "legacy" {
			continue
		}
		item := getItem(t, f.env, "OrdersTable", map[string]types.AttributeValue{"owner": avS(s.Owner), "seq": avN(fmt.Sprint(s.Seq))})
		want := "Pending#" + shardOf(s.DocumentID)
		if got := item["qs"].(*types.AttributeValueMemberS).Value; got != want {
			t.Errorf("order %s: qs = %s, want %s", s.DocumentID, got, want)
		}
		shards[want] = true
	}
	if len(shards) < 8 {
		t.Errorf("24 orders in %d shards, want them spread", len(shards))
	}
}

// page reads one page of status's queue and checks its calls: a Query per
// shard and one for the bare status, then one BatchGetItem.
func (f *queueFixture) page(t *testing.T, status, cursor string, size int) ([]stampduty.OpsOrder, string) {
	t.Helper()
	f.proxy.Take()
	got, next, err := f.ords.Queue(f.ctx, status, false, cursor, size)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.env.Operations(f.proxy.Take()), "BatchGetItem:OrdersTable=1 Query:OrdersTable/index/queue-shards=17"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
	return got, next
}

// wantJSON is orders as a page lists them.
func wantJSON(stored []orders.Stored) string {
	var ops []stampduty.OpsOrder
	for _, s := range stored {
		ops = append(ops, s.OpsOrder)
	}
	b, _ := json.Marshal(ops)
	return string(b)
}

func (f *queueFixture) pagesOldestFirstAcrossShards(t *testing.T) {
	cursor := ""
	for i := 0; ; i++ {
		got, next := f.page(t, stampduty.StatusPending, cursor, 3)
		want := f.stored[min(3*i, len(f.stored)):min(3*i+3, len(f.stored))]
		if b, _ := json.Marshal(got); string(b) != wantJSON(want) {
			t.Errorf("page %d =\n%s\nwant\n%s", i, b, wantJSON(want))
		}
		// As before the shards: a full page has a cursor, a short one none.
		if (next != "") != (len(got) == 3) {
			t.Errorf("page %d: %d orders, next %q", i, len(got), next)
		}
		if next == "" {
			if 3*i+len(got) != len(f.stored) {
				t.Errorf("the queue ended after %d orders, want %d", 3*i+len(got), len(f.stored))
			}
			return
		}
		cursor = next
	}
}

func (f *queueFixture) cursorRoundTrip(t *testing.T) {
	_, next := f.page(t, stampduty.StatusPending, "", 3)
	a, n1, err1 := f.ords.Queue(f.ctx, stampduty.StatusPending, false, next, 3)
	b, n2, err2 := f.ords.Queue(f.ctx, stampduty.StatusPending, false, next, 3)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if err1 != nil || err2 != nil || string(ja) != string(jb) || n1 != n2 {
		t.Errorf("the same cursor read twice gave different pages: %v %v", err1, err2)
	}
	// A cursor made before the shards (the last entry's keys of the index
	// that held one partition per status) places the page the same way.
	last := f.stored[5]
	c, _ := json.Marshal(map[string]any{"s": "Pending", "k": last.CreatedAt + "#" + last.DocumentID, "o": last.Owner, "n": last.Seq})
	got, _ := f.page(t, stampduty.StatusPending, base64.RawURLEncoding.EncodeToString(c), 3)
	if j, _ := json.Marshal(got); string(j) != wantJSON(f.stored[6:9]) {
		t.Errorf("page after an old cursor =\n%s\nwant\n%s", j, wantJSON(f.stored[6:9]))
	}
}

func (f *queueFixture) byDocumentAnswersTheItem(t *testing.T) {
	for _, s := range []orders.Stored{f.stored[4], f.legacy} {
		got, err := f.ords.ByDocument(f.ctx, s.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := f.ords.Reread(f.ctx, s)
		if jg, jw := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); jg != jw {
			t.Errorf("ByDocument =\n%s\nwant the item\n%s", jg, jw)
		}
	}
}

func (f *queueFixture) movedOrderLeavesTheQueue(t *testing.T) {
	s, err := f.ords.ByDocument(f.ctx, f.stored[1].DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ords.Replace(f.ctx, s, moved(t, s.Order, "REF-Q")); err != nil {
		t.Fatal(err)
	}
	got, _ := f.page(t, stampduty.StatusPending, "", 3)
	if j, _ := json.Marshal(got); string(j) != wantJSON([]orders.Stored{f.stored[0], f.stored[2], f.stored[3]}) {
		t.Errorf("Pending after a move = %s", j)
	}
	created, _ := f.page(t, stampduty.StatusCreated, "", 3)
	if len(created) != 1 || created[0].DocumentID != s.DocumentID || created[0].Fulfillments[0].UniqueDocRef != "REF-Q" {
		t.Errorf("Created = %+v, want the moved order", created)
	}
	// An entry the index still holds for an order that has moved on (the
	// index lags its table) is left out: here an item whose qs says
	// Pending and whose fulfillment says Created.
	item := getItem(t, f.env, "OrdersTable", map[string]types.AttributeValue{"owner": avS(s.Owner), "seq": avN(fmt.Sprint(s.Seq))})
	item["qs"] = avS("Pending#" + shardOf(s.DocumentID))
	putItem(t, f.env, "OrdersTable", item)
	if got, _ := f.page(t, stampduty.StatusPending, "", 3); len(got) != 2 {
		t.Errorf("Pending lists %d orders from a page of 3 entries, want the 2 still Pending", len(got))
	}
	item["qs"] = avS("Created#" + shardOf(s.DocumentID))
	putItem(t, f.env, "OrdersTable", item)
}

func (f *queueFixture) backfillMovesOrdersIntoShards(t *testing.T) {
	// One more order stored before the queue: no qs at all, not listed.
	old := storedOrder("older")
	old["doc"], old["at"] = avS("oldr0000000000000000000b"), avS("2026-11-21T04:59:59.000Z")
	putItem(t, f.env, "OrdersTable", old)
	n, err := f.ords.Backfill(f.ctx)
	if err != nil || n != 2 {
		t.Fatalf("Backfill = %d, %v; want 2 (the bare status and the order without queue keys)", n, err)
	}
	for owner, doc := range map[string]string{"legacy": f.legacy.DocumentID, "older": "oldr0000000000000000000b"} {
		item := getItem(t, f.env, "OrdersTable", map[string]types.AttributeValue{"owner": avS(owner), "seq": avN("1")})
		if got, want := item["qs"].(*types.AttributeValueMemberS).Value, "Pending#"+shardOf(doc); got != want {
			t.Errorf("%s after Backfill: qs = %s, want %s", owner, got, want)
		}
	}
	var docs []string
	for cursor := ""; ; {
		page, next := f.page(t, stampduty.StatusPending, cursor, 10)
		for _, o := range page {
			docs = append(docs, o.DocumentID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	want := []string{"oldr0000000000000000000b"}
	for _, s := range f.stored {
		if s.DocumentID != f.stored[1].DocumentID {
			want = append(want, s.DocumentID)
		}
	}
	if fmt.Sprint(docs) != fmt.Sprint(want) {
		t.Errorf("Pending after Backfill = %v\nwant %v", docs, want)
	}
	if n, err := f.ords.Backfill(f.ctx); err != nil || n != 0 {
		t.Errorf("second Backfill = %d, %v; want 0", n, err)
	}
}

// TestStatusChangeIndexWrites: the keys-only indexes are written only when
// their keys change. A status change with its event, and the relay of that
// event, write by-document-keys nothing and queue-shards 2 WCU (the entry
// moves: a delete and a put of a keys-sized entry); the table 1 + 1 (the
// change's event leaves out its order, the item's own, so the item stays
// under 1 KB) and the outbox entry 1 + 1 (put, then deleted): 6 WCU in
// all, under the 8 WCU bar. A create writes each index 1 WCU, as before.
func TestStatusChangeIndexWrites(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 30)
	proxy.SetMode(storetest.Account)
	ords := db.Orders(env.Table("OrdersTable"))
	// byIndex sums the write units of calls by index ("" the table's).
	byIndex := func(calls []storetest.ProxyCall) map[string]float64 {
		t.Helper()
		out := map[string]float64{}
		for _, c := range calls {
			if !c.Accounted {
				t.Fatalf("%s not accounted: %v", c.Operation, proxy.Err())
			}
			for _, k := range c.Keys {
				out[k.Index] += k.Units
			}
		}
		return out
	}
	o := newOrder(t, ids, 1)
	seq, err := ords.Create(ctx, "owner", o, pending(t, stampduty.EventOrderCreated, o, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := byIndex(proxy.Take()); got[store.DocumentIndex] != 1 || got[store.QueueIndex] != 1 {
		t.Errorf("create wrote %v, want 1 WCU to each keys-only index", got)
	}
	s, err := ords.Reread(ctx, orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: "owner"}, Seq: seq})
	if err != nil {
		t.Fatal(err)
	}
	if err := ords.Relayed(ctx, s, eventIDs(s.Outbox)); err != nil {
		t.Fatal(err)
	}
	s.Outbox = nil
	proxy.Take()
	next := moved(t, s.Order, "REF-1")
	prev, st := stampduty.StatusPending, stampduty.StatusCreated
	if err := ords.Replace(ctx, s, next, pending(t, stampduty.EventOrderStatusChanged, next, &prev, &st)); err != nil {
		t.Fatal(err)
	}
	if s, err = ords.Reread(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := ords.Relayed(ctx, s, eventIDs(s.Outbox)); err != nil {
		t.Fatal(err)
	}
	got := byIndex(proxy.Take())
	t.Logf("a status change with its event, relay included: %v", got)
	if got[store.DocumentIndex] != 0 || got[store.QueueIndex] != 2 || got[""] != 2 || got[store.OutboxIndex] != 2 {
		t.Errorf("wrote %v, want by-document-keys 0, queue-shards 2, the table 2, outbox 2", got)
	}
}
