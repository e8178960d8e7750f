package main

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

func TestMain(m *testing.M) { functest.Main(m) }

var pdf = functest.PDF(0)

// TestSweep: a run removes, with every version, a due watch's object that
// no order points at and drops the watch; it keeps the object an order
// points at, and a watch not yet due; it uses exactly what template.yaml
// grants it.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	s, run := functest.NewScheduled(t, "FileSweeperFunction", wire)
	mine := functest.AddOrders(t, s.Env, localdb.DevOwner, 1)
	db := s.Env.DB()
	ords, uploads := db.Orders(s.Env.Table("OrdersTable")), db.Uploads(s.Env.Table("UploadsTable"))
	bucket := files.New(s.Env.S3(), s.Env.Table("FilesBucket"))
	stored, err := ords.ByDocument(ctx, mine[0].DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	// The order's document, attached.
	kept, err := functest.Fulfiller(s.Env).UploadDocument(ctx, localdb.DevOwner, mine[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf})
	if err != nil {
		t.Fatal(err)
	}
	keptKey := orders.DocumentPrefix + mine[0].DocumentID + "/" + kept.DocumentID
	prefix := orders.DocumentPrefix + mine[0].DocumentID + "/"
	orphan, later := prefix+"orphan000000000000000000", prefix+"later0000000000000000000"
	for _, k := range []string{orphan, orphan, later} {
		if err := bucket.Put(ctx, k, stampduty.MimePDF, pdf, sha256.Sum256(pdf)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	for _, w := range []orders.Watch{
		{ID: orphan, Owner: stored.Owner, Seq: stored.Seq, Keys: []string{orphan, keptKey}, Due: now.Add(-time.Minute)},
		{ID: later, Owner: stored.Owner, Seq: stored.Seq, Keys: []string{later}, Due: now.Add(time.Hour)},
	} {
		if err := uploads.Watch(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	versions := functest.Versions(t, s.Env)
	if versions[orphan] != 0 || versions[keptKey] != 1 || versions[later] != 1 {
		t.Errorf("versions after the run: %v; want the orphan gone, the attached file and the watch not due kept", versions)
	}
	if _, err := uploads.Get(ctx, orphan); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
		t.Errorf("the settled watch: %v, want it dropped", err)
	}
	if _, err := uploads.Get(ctx, later); err != nil {
		t.Errorf("the watch not due: %v", err)
	}
	s.CheckTemplate(s.Proxy.All())
}
