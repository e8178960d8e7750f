package orders_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

// recordingFiles is the real file store with its calls counted, and a
// fault to inject into Put.
type recordingFiles struct {
	*files.Store
	putErr   error
	purgeErr error
	puts     []string
	deletes  []string
}

func (r *recordingFiles) Put(ctx context.Context, key, mime string, body []byte, sum [32]byte) error {
	r.puts = append(r.puts, key)
	if r.putErr != nil {
		return r.putErr
	}
	return r.Store.Put(ctx, key, mime, body, sum)
}

func (r *recordingFiles) Purge(ctx context.Context, key string) error {
	r.deletes = append(r.deletes, key)
	if r.purgeErr != nil {
		return r.purgeErr
	}
	return r.Store.Purge(ctx, key)
}

// failingReplace is an orders store whose writes fail as DynamoDB's may.
type failingReplace struct {
	orders.Fulfillments
	err error
}

func (f failingReplace) Replace(context.Context, orders.Stored, stampduty.Order, ...stampduty.Pending) error {
	return f.err
}

var pdf = []byte("%PDF-1.7\nx\n%%EOF\n")

// fulfillmentWorld is a fresh set of tables and a bucket with the sample
// catalogue and the orders of "owner" in them, for Fulfillers.
type fulfillmentWorld struct {
	env    *storetest.Env
	orders *store.Orders
	mine   []stampduty.Order
}

// newFulfillmentWorld makes a fulfillmentWorld where "owner" has n orders.
func newFulfillmentWorld(t *testing.T, n int) *fulfillmentWorld {
	env := storetest.New(t)
	functest.Seed(t, env)
	mine := functest.AddOrders(t, env, "owner", n)
	return &fulfillmentWorld{env: env, orders: env.DB().Orders(env.Table("OrdersTable")), mine: mine}
}

// files returns the bucket, its calls counted.
func (w *fulfillmentWorld) files() *recordingFiles {
	return &recordingFiles{Store: files.New(w.env.S3(), w.env.Table("FilesBucket"))}
}

// fulfiller returns a Fulfiller over o (w's orders table, or one wrapping
// it) and f.
func (w *fulfillmentWorld) fulfiller(o orders.Fulfillments, f *recordingFiles) *orders.Fulfiller {
	return &orders.Fulfiller{Orders: o, Files: f, Direct: f.Store, Watches: w.env.DB().Uploads(w.env.Table("UploadsTable")),
		IDs: w.env.DB().IDs(w.env.Table("CountersTable"), 10), Numbers: w.env.DB().Numbers(w.env.Table("NumbersTable")), Now: time.Now}
}

// TestUploadNeverPointsAtAMissingFile: whatever fails, an order points only
// at a stored file, and a file no order points at is removed.
func TestUploadNeverPointsAtAMissingFile(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 2)
	mine := w.mine
	document := func(doc string) *stampduty.File {
		s, err := w.orders.ByDocument(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		return s.StampDuty.UploadedDocument
	}

	t.Run("ErrS3DownStoresNothing", func(t *testing.T) {
		rf := w.files()
		rf.putErr = stampduty.Unavailable(errors.New("s3 down"))
		_, err := w.fulfiller(w.orders, rf).UploadDocument(ctx, "owner", mine[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf})
		if stampduty.ErrorCode(err) != stampduty.EUNAVAILABLE {
			t.Fatalf("UploadDocument = %v, want EUNAVAILABLE", err)
		}
		if d := document(mine[0].DocumentID); d != nil {
			t.Errorf("the order points at %+v", d)
		}
	})
	t.Run("ErrDynamoDBDownRemovesTheUpload", func(t *testing.T) {
		rf := w.files()
		f := w.fulfiller(failingReplace{w.orders, stampduty.Unavailable(errors.New("dynamodb down"))}, rf)
		_, err := f.UploadDocument(ctx, "owner", mine[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf})
		if stampduty.ErrorCode(err) != stampduty.EUNAVAILABLE {
			t.Fatalf("UploadDocument = %v, want EUNAVAILABLE", err)
		}
		if len(rf.puts) != 1 || len(rf.deletes) != 1 || rf.deletes[0] != rf.puts[0] {
			t.Fatalf("puts %v, deletes %v: want the one upload removed", rf.puts, rf.deletes)
		}
		u, _ := rf.URL(ctx, rf.puts[0], "a.pdf", stampduty.MimePDF)
		if resp, err := http.Get(u); err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("the removed upload: %v %v, want 404", resp.StatusCode, err)
		}
		if d := document(mine[0].DocumentID); d != nil {
			t.Errorf("the order points at %+v", d)
		}
	})
	t.Run("ErrRefusedBeforeAnyUpload", func(t *testing.T) {
		rf := w.files()
		f := w.fulfiller(w.orders, rf)
		if _, err := f.UploadDocument(ctx, "someone-else", mine[1].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Errorf("another caller's order: %v, want ENOTFOUND", err)
		}
		if _, err := f.AttachCertificate(ctx, mine[1].DocumentID, mine[1].Fulfillments[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
			t.Errorf("a certificate while Pending: %v, want ECONFLICT", err)
		}
		if len(rf.puts) != 0 {
			t.Errorf("refused uploads reached S3: %v", rf.puts)
		}
	})
}

// TestAdvanceAfterALostRace: a write that loses to another change is
// answered from what is stored now: done when that is what was asked, a
// conflict otherwise, never a second change.
func TestAdvanceAfterALostRace(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 1)
	o, table := w.mine[0], w.orders
	f := w.fulfiller(table, w.files())
	ff := o.Fulfillments[0].DocumentID

	// A read taken before the other change, as a request that lost the race has.
	stale, err := table.ByDocument(ctx, o.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Advance(ctx, o.DocumentID, ff, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-A"}, "op-1"); err != nil {
		t.Fatal(err)
	}
	raced := func(c stampduty.Change) error {
		next, changed, err := stale.Fulfillments[0].Apply(c, stampduty.FormatTime(time.Now()), "op-2")
		if err != nil || !changed {
			t.Fatalf("Apply = %v, %v", changed, err)
		}
		o := stale.Order
		o.Fulfillments = []stampduty.Fulfillment{next}
		return table.Replace(ctx, stale, o)
	}
	if err := raced(stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-B"}); !errors.Is(err, orders.ErrChanged) {
		t.Fatalf("the stale write = %v, want ErrChanged", err)
	}
	// Through the workflow: the same values are done, other values a conflict.
	if _, err := f.Advance(ctx, o.DocumentID, ff, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-A"}, "op-2"); err != nil {
		t.Errorf("asking for what is stored: %v, want done", err)
	}
	if _, err := f.Advance(ctx, o.DocumentID, ff, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-B"}, "op-2"); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
		t.Errorf("another reference: %v, want ECONFLICT", err)
	}
	now, _ := table.ByDocument(ctx, o.DocumentID)
	if h := now.Fulfillments[0].History; len(h) != 2 || h[1].By != "op-1" || now.Fulfillments[0].UniqueDocRef != "REF-A" {
		t.Errorf("stored: %+v", now.Fulfillments[0])
	}
}

// landsThenFails is an orders store whose writes are applied and whose
// answer is then lost, as when DynamoDB's answer never arrives.
type landsThenFails struct{ orders.Fulfillments }

func (l landsThenFails) Replace(ctx context.Context, s orders.Stored, o stampduty.Order, events ...stampduty.Pending) error {
	if err := l.Fulfillments.Replace(ctx, s, o, events...); err != nil {
		return err
	}
	return stampduty.Unavailable(errors.New("the answer was lost"))
}

// TestUploadWhoseAnswerIsLost: a write that landed although its answer was
// lost is a success, and its file is kept.
func TestUploadWhoseAnswerIsLost(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 1)
	mine, table, rf := w.mine, w.orders, w.files()
	f := w.fulfiller(landsThenFails{table}, rf)
	file, err := f.UploadDocument(ctx, "owner", mine[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf})
	if err != nil {
		t.Fatalf("UploadDocument = %v, want success: the write landed", err)
	}
	if len(rf.deletes) != 0 {
		t.Errorf("deleted %v: the order points at it", rf.deletes)
	}
	s, _ := table.ByDocument(ctx, mine[0].DocumentID)
	if d := s.StampDuty.UploadedDocument; d == nil || d.DocumentID != file.DocumentID {
		t.Fatalf("the order's document = %+v", d)
	}
	if resp, err := http.Get(file.URL); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the document: %v %v, want 200", resp.StatusCode, err)
	}
}
