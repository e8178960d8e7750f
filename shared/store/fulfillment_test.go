package store_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit"
	"stampduty/shared/testkit/storetest"
)

// moved returns o with its fulfillment moved to Created (reference ref).
func moved(t *testing.T, o stampduty.Order, ref string) stampduty.Order {
	t.Helper()
	ff, changed, err := o.Fulfillments[0].Apply(stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}, o.CreatedAt, "arn:aws:iam::1:user/op")
	if err != nil || !changed {
		t.Fatalf("Apply = %v, %v", changed, err)
	}
	o.Fulfillments = []stampduty.Fulfillment{ff}
	o.UpdatedAt = stampduty.FormatTime(time.Now())
	return o
}

// fulfillmentsFixture is seven orders of three owners, created a second
// apart (oldest first), in a test's tables read through a proxy that
// records the calls.
type fulfillmentsFixture struct {
	ctx     context.Context
	env     *storetest.Env
	proxy   *storetest.Proxy
	ords    *store.Orders
	created []stampduty.Order
}

// newFulfillmentsFixture stores the seven orders and takes the calls made.
func newFulfillmentsFixture(t *testing.T) *fulfillmentsFixture {
	ctx := context.Background()
	env := storetest.New(t)
	db, proxy := env.ProxiedDB()
	ords := db.Orders(env.Table("OrdersTable"))
	ids := db.IDs(env.Table("CountersTable"), 30)

	var created []stampduty.Order
	for i := range 7 {
		o := newOrder(t, ids, i)
		o.CreatedAt = fmt.Sprintf("2026-11-21T04:09:0%d.000Z", i) // oldest first: 0, 1, ...
		o.UpdatedAt = o.CreatedAt
		o.Fulfillments[0].History[0].At = o.CreatedAt
		if _, err := ords.Create(ctx, fmt.Sprintf("owner-%d", i%3), o); err != nil {
			t.Fatal(err)
		}
		created = append(created, o)
	}
	proxy.Take()
	return &fulfillmentsFixture{ctx: ctx, env: env, proxy: proxy, ords: ords, created: created}
}

// TestFulfillments: an order is found by its documentId (its key from the
// keys-only index, then the item), replaced by one conditional write that
// one writer wins, and queued by status across owners, oldest first.
func TestFulfillments(t *testing.T) {
	f := newFulfillmentsFixture(t)
	testkit.Steps(t, f.byDocumentIsTheKeyThenTheItem, f.errByDocumentUnknown, f.replaceIsOneConditionalWrite,
		f.oneWinnerAmongConcurrentReplaces, f.orderStoredBeforeVersionsIsReplacedOnce,
		f.queueOldestFirstAcrossOwners, f.errQueueCursor)
}

func (f *fulfillmentsFixture) byDocumentIsTheKeyThenTheItem(t *testing.T) {
	s, err := f.ords.ByDocument(f.ctx, f.created[4].DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.env.Operations(f.proxy.Take()), "Query:OrdersTable/index/by-document-keys=1 Query:OrdersTable=1"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
	if s.Owner != "owner-1" || s.Seq != 2 || s.Version != 1 || s.DocumentID != f.created[4].DocumentID {
		t.Errorf("ByDocument = owner %s seq %d version %d doc %s", s.Owner, s.Seq, s.Version, s.DocumentID)
	}
	// An order's key never changes: the instance looks it up once.
	if again, err := f.ords.ByDocument(f.ctx, f.created[4].DocumentID); err != nil || again.Seq != 2 {
		t.Fatalf("ByDocument again = %d, %v", again.Seq, err)
	}
	if got, want := f.env.Operations(f.proxy.Take()), "Query:OrdersTable=1"; got != want {
		t.Errorf("calls the second time = %s, want %s", got, want)
	}
}

func (f *fulfillmentsFixture) errByDocumentUnknown(t *testing.T) {
	for range 2 { // an unknown documentId is looked up each time
		if _, err := f.ords.ByDocument(f.ctx, "nosuchdocument0000000000"); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Errorf("ByDocument(unknown) = %v, want ENOTFOUND", err)
		}
		if got, want := f.env.Operations(f.proxy.Take()), "Query:OrdersTable/index/by-document-keys=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
	}
}

func (f *fulfillmentsFixture) replaceIsOneConditionalWrite(t *testing.T) {
	s, err := f.ords.ByDocument(f.ctx, f.created[0].DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	f.proxy.Take()
	next := moved(t, s.Order, "REF-0")
	if err := f.ords.Replace(f.ctx, s, next); err != nil {
		t.Fatal(err)
	}
	if got, want := f.env.Operations(f.proxy.Take()), "PutItem:OrdersTable=1"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
	now, err := f.ords.Reread(f.ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if now.Version != 2 || now.Fulfillments[0].Status != stampduty.StatusCreated || now.Fulfillments[0].UniqueDocRef != "REF-0" {
		t.Errorf("after Replace: version %d, fulfillment %+v", now.Version, now.Fulfillments[0])
	}
	if got, want := len(now.Fulfillments[0].History), 2; got != want {
		t.Errorf("history has %d entries, want %d", got, want)
	}
	t.Run("ErrStaleVersionChangesNothing", func(t *testing.T) {
		err := f.ords.Replace(f.ctx, s, moved(t, s.Order, "REF-OTHER"))
		if !errors.Is(err, orders.ErrChanged) {
			t.Fatalf("Replace from a stale read = %v, want ErrChanged", err)
		}
		again, _ := f.ords.Reread(f.ctx, s)
		if again.Version != 2 || again.Fulfillments[0].UniqueDocRef != "REF-0" {
			t.Errorf("a refused Replace changed the order: %+v", again)
		}
	})
}

func (f *fulfillmentsFixture) oneWinnerAmongConcurrentReplaces(t *testing.T) {
	s, err := f.ords.ByDocument(f.ctx, f.created[1].DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- f.ords.Replace(f.ctx, s, moved(t, s.Order, fmt.Sprintf("REF-%d", i))) }()
	}
	won := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, orders.ErrChanged):
			t.Errorf("Replace: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d Replaces won, want exactly 1", won)
	}
}

func (f *fulfillmentsFixture) orderStoredBeforeVersionsIsReplacedOnce(t *testing.T) {
	putItem(t, f.env, "OrdersTable", storedOrder("legacy"))
	// It has a doc, so the documentId index finds it.
	s, err := f.ords.ByDocument(f.ctx, "o2ZQm3X8pV1nR7tK4wY9sL0c")
	if err != nil || s.Owner != "legacy" || s.Version != 0 {
		t.Fatalf("ByDocument(legacy) = owner %q version %d, %v", s.Owner, s.Version, err)
	}
	if err := f.ords.Replace(f.ctx, s, moved(t, s.Order, "REF-L")); err != nil {
		t.Fatal(err)
	}
	if err := f.ords.Replace(f.ctx, s, moved(t, s.Order, "REF-L2")); !errors.Is(err, orders.ErrChanged) {
		t.Errorf("second Replace from version 0 = %v, want ErrChanged", err)
	}
}

func (f *fulfillmentsFixture) queueOldestFirstAcrossOwners(t *testing.T) {
	f.proxy.Take()
	var docs []string
	cursor := ""
	for page := 0; ; page++ {
		got, next, err := f.ords.Queue(f.ctx, stampduty.StatusPending, false, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := f.env.Operations(f.proxy.Take()), "BatchGetItem:OrdersTable=1 Query:OrdersTable/index/queue-shards=17"; got != want {
			t.Errorf("page %d: calls = %s, want %s", page, got, want)
		}
		for _, o := range got {
			docs = append(docs, o.DocumentID)
			if o.Owner == "" {
				t.Errorf("queue order %s has no owner", o.DocumentID)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	// created[0] and [1] moved to Created; the legacy order has no queue keys.
	var want []string
	for _, o := range f.created[2:] {
		want = append(want, o.DocumentID)
	}
	if fmt.Sprint(docs) != fmt.Sprint(want) {
		t.Errorf("Pending queue = %v, want %v", docs, want)
	}
	created0, _, err := f.ords.Queue(f.ctx, stampduty.StatusCreated, false, "", 10)
	if err != nil || len(created0) != 3 {
		t.Errorf("Created queue has %d orders (%v), want 3", len(created0), err)
	}
}

func (f *fulfillmentsFixture) errQueueCursor(t *testing.T) {
	_, next, err := f.ords.Queue(f.ctx, stampduty.StatusPending, false, "", 1)
	if err != nil || next == "" {
		t.Fatalf("Queue = %q, %v", next, err)
	}
	for name, c := range map[string]string{
		"NotBase64":     "!!!",
		"NotJSON":       base64.RawURLEncoding.EncodeToString([]byte("nope")),
		"UnknownFields": base64.RawURLEncoding.EncodeToString([]byte(`{"s":"Pending","k":"a","o":"b","n":1,"x":1}`)),
		"NoSeq":         base64.RawURLEncoding.EncodeToString([]byte(`{"s":"Pending","k":"a","o":"b"}`)),
	} {
		if _, _, err := f.ords.Queue(f.ctx, stampduty.StatusPending, false, c, 1); stampduty.ErrorCode(err) != stampduty.EINVALID {
			t.Errorf("%s: Queue = %v, want EINVALID", name, err)
		}
	}
	if _, _, err := f.ords.Queue(f.ctx, stampduty.StatusCreated, false, next, 1); stampduty.ErrorCode(err) != stampduty.EINVALID {
		t.Errorf("another queue's cursor: %v, want EINVALID", err)
	}
}

// TestBackfill: orders stored before the queue existed join it, once.
func TestBackfill(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	ords := env.DB().Orders(env.Table("OrdersTable"))
	putItem(t, env, "OrdersTable", storedOrder("legacy-1"))
	old2 := storedOrder("legacy-2")
	old2["doc"], old2["at"] = avS("p2ZQm3X8pV1nR7tK4wY9sL0c"), avS("2026-11-20T01:00:00.000Z")
	putItem(t, env, "OrdersTable", old2)
	ids := env.DB().IDs(env.Table("CountersTable"), 10)
	if _, err := ords.Create(ctx, "new", newOrder(t, ids, 1)); err != nil {
		t.Fatal(err)
	}
	if page, _, _ := ords.Queue(ctx, stampduty.StatusPending, false, "", 10); len(page) != 1 {
		t.Fatalf("before: queue has %d orders, want only the new one", len(page))
	}
	n, err := ords.Backfill(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Backfill = %d, %v; want 2", n, err)
	}
	page, _, err := ords.Queue(ctx, stampduty.StatusPending, false, "", 10)
	if err != nil || len(page) != 3 {
		t.Fatalf("after: queue has %d orders (%v), want 3", len(page), err)
	}
	if page[0].Owner != "legacy-2" || page[1].Owner != "legacy-1" {
		t.Errorf("queue order = %s, %s, %s; want the oldest first", page[0].Owner, page[1].Owner, page[2].Owner)
	}
	if n, err := ords.Backfill(ctx); err != nil || n != 0 {
		t.Errorf("second Backfill = %d, %v; want 0", n, err)
	}
	if s, _ := ords.ByDocument(ctx, "p2ZQm3X8pV1nR7tK4wY9sL0c"); s.Version != 0 {
		t.Errorf("Backfill set a version: %d", s.Version)
	}
}
