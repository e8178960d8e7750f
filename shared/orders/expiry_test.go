package orders_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/files"
	"stampduty/shared/orders"
	"stampduty/shared/specimen"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/samtemplate"
)

// bothModes are the two kinds of order the expiry tests run for: a test
// order (its owner a test principal) and a live one.
var bothModes = []struct {
	name, owner string
	test        bool
}{
	{"TestOrder", stampduty.TestOwnerOf("owner"), true},
	{"LiveOrder", "owner", false},
}

// expiringPrefixes returns the prefixes under which template.yaml's
// lifecycle rules expire a file as test-mode.md asks ("deleted 30 days
// after creation"): an enabled rule that expires current versions after
// 30 days and noncurrent ones after a day, and an enabled rule removing
// the delete markers left under the same prefix. Each prefix is mapped to
// whether it is complete so.
func expiringPrefixes(t *testing.T, rules []samtemplate.LifecycleRule) map[string]bool {
	t.Helper()
	days := int(stampduty.TestDataLifetime / (24 * time.Hour))
	expire, markers := map[string]bool{}, map[string]bool{}
	for _, r := range rules {
		if r.Status != "Enabled" {
			continue
		}
		if r.ExpirationInDays == days && r.NoncurrentDays == 1 {
			expire[r.Prefix] = true
		}
		if r.ExpiredObjectDeleteMarker {
			markers[r.Prefix] = true
		}
	}
	out := map[string]bool{}
	for p := range expire {
		out[p] = markers[p]
	}
	return out
}

// TestTestOrderFilesExpire: the files workflow stores a test order's files
// (its caller's document, from a body and from a staged upload, and its
// certificates, likewise) under keys that start with a prefix that
// template.yaml's lifecycle rules expire after 30 days, with their old
// versions and delete markers, and a live order's under none of those
// prefixes; the order points at exactly the key orders.FileKey names.
// The keys are those the bucket (versitygw) holds after the workflow ran.
func TestTestOrderFilesExpire(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 0)
	prefixes := expiringPrefixes(t, w.env.Template.Lifecycle["FilesBucket"])
	for p, complete := range prefixes {
		if !complete {
			t.Errorf("lifecycle prefix %s expires files but leaves their delete markers", p)
		}
	}
	expiring := func(key string) (string, bool) {
		for p := range prefixes {
			if p != orders.StagingPrefix && strings.HasPrefix(key, p) {
				return p, true
			}
		}
		return "", false
	}
	f := w.fulfiller(w.orders, w.files())
	for _, tc := range bothModes {
		t.Run(tc.name, func(t *testing.T) {
			o := functest.AddOrders(t, w.env, tc.owner, 1)[0]
			ff := o.Fulfillments[0].DocumentID
			body := stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}
			declared := stampduty.Declared{Mime: stampduty.MimePDF, Size: int64(len(pdf))}

			// The caller's document, from a body, then replaced by a
			// staged upload.
			if _, err := f.UploadDocument(ctx, tc.owner, o.DocumentID, body); err != nil {
				t.Fatal(err)
			}
			u, err := f.NewDocumentUpload(ctx, tc.owner, o.DocumentID, declared)
			if err != nil {
				t.Fatal(err)
			}
			putStaged(t, u, pdf)
			doc, err := f.AttachDocument(ctx, tc.owner, o.DocumentID, u.ID)
			if err != nil {
				t.Fatal(err)
			}

			// The certificate: a test order's is its SPECIMEN, attached by
			// its steps (an operator's is refused); a live order's paper is
			// moved to Procured in the store, then given its certificate
			// from a body, then from a staged upload.
			s, err := w.orders.ByDocument(ctx, o.DocumentID)
			if err != nil {
				t.Fatal(err)
			}
			if tc.test {
				if _, err := f.AttachCertificate(ctx, o.DocumentID, ff, body); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
					t.Errorf("an operator's certificate on a test order: %v, want a conflict", err)
				}
				stepper := *f
				stepper.Specimen = specimen.ForOrder
				for more := true; more; {
					if more, err = stepper.Step(ctx, tc.owner, o.DocumentID); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				next := s.Order
				at := stampduty.FormatTime(time.Now())
				for _, c := range []stampduty.Change{
					{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"},
					{Status: stampduty.StatusProcured, CertificateNumber: "IN-KA93689528000869Y"},
				} {
					if next.Fulfillments[0], _, err = next.Fulfillments[0].Apply(c, at, "test"); err != nil {
						t.Fatal(err)
					}
				}
				next.UpdatedAt = at
				if err := w.orders.Replace(ctx, s, next); err != nil {
					t.Fatal(err)
				}
				if _, err := f.AttachCertificate(ctx, o.DocumentID, ff, body); err != nil {
					t.Fatal(err)
				}
				cu, err := f.NewCertificateUpload(ctx, o.DocumentID, ff, declared)
				if err != nil {
					t.Fatal(err)
				}
				putStaged(t, cu, pdf)
				if _, err := f.AttachStagedCertificate(ctx, o.DocumentID, ff, cu.ID); err != nil {
					t.Fatal(err)
				}
			}

			// The order points at the keys FileKey names.
			s, err = w.orders.Reread(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			cert := s.Fulfillments[0].CertificateFile
			if cert == nil || s.StampDuty.UploadedDocument == nil {
				t.Fatalf("order holds document %v, certificate %v; want both", s.StampDuty.UploadedDocument, cert)
			}
			if got, want := s.StampDuty.UploadedDocument.Key, orders.FileKey(tc.owner, stampduty.Document, o.DocumentID, doc.DocumentID); got != want {
				t.Errorf("document key %s, want %s", got, want)
			}
			wantCert := orders.FileKey(tc.owner, stampduty.Certificate, o.DocumentID, cert.DocumentID)
			if tc.test {
				wantCert = orders.SpecimenKey(tc.owner, o.DocumentID, ff)
			}
			if got, want := cert.Key, wantCert; got != want {
				t.Errorf("certificate key %s, want %s", got, want)
			}

			// A document upload killed before its order's write leaves its
			// file: the Sweeper removes it once due, under the test
			// prefix as under the live one.
			killed(func() {
				_, _ = w.fulfiller(killedAtReplace{w.orders}, w.files()).UploadDocument(ctx, tc.owner, o.DocumentID, body)
			})
			if done := w.sweep(t, orders.WatchDelay+time.Minute); done.Removed == 0 {
				t.Errorf("Sweep = %+v, want the killed upload's file removed", done)
			}

			// Every object of the order's the bucket holds (the replaced
			// ones purged, the staged ones too) expires if and only if the
			// order is a test order.
			var kinds []string
			for key := range functest.Versions(t, w.env) {
				if !strings.Contains(key, "/"+o.DocumentID+"/") {
					continue
				}
				kinds = append(kinds, key[:strings.Index(key, "/")])
				p, expires := expiring(key)
				switch {
				case tc.test && !expires:
					t.Errorf("test order's file %s is under no prefix the lifecycle rules expire (%v)", key, prefixes)
				case !tc.test && expires:
					t.Errorf("live order's file %s is under %s, which the lifecycle rules expire", key, p)
				}
			}
			if len(kinds) != 2 || kinds[0] == kinds[1] {
				t.Errorf("the bucket holds the order's %v; want its document and its certificate", kinds)
			}
		})
	}
}

// TestSweeperClearsAnExpiredTestOrder: a file left by an upload killed
// before its order's write is removed by the Sweeper once due even when
// the order is gone meanwhile (a test order its TTL removed points at
// nothing), and the watch is settled instead of failing every run; a live
// order is never deleted, so one gone stays an error and its file stays.
func TestSweeperClearsAnExpiredTestOrder(t *testing.T) {
	ctx := context.Background()
	for _, tc := range bothModes {
		t.Run(tc.name, func(t *testing.T) {
			w := newFulfillmentWorld(t, 0)
			o := functest.AddOrders(t, w.env, tc.owner, 1)[0]
			killed(func() {
				_, _ = w.fulfiller(killedAtReplace{w.orders}, w.files()).UploadDocument(ctx, tc.owner, o.DocumentID,
					stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf})
			})
			if n := len(w.objects(t)); n != 1 {
				t.Fatalf("%d objects after the killed upload, want its file", n)
			}
			s, err := w.orders.ByDocument(ctx, o.DocumentID)
			if err != nil {
				t.Fatal(err)
			}
			// What the TTL does to a test order.
			seq := fmt.Sprint(s.Seq)
			if _, err := w.env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(w.env.Table("OrdersTable")),
				Key: map[string]dbtypes.AttributeValue{"owner": &dbtypes.AttributeValueMemberS{Value: tc.owner},
					"seq": &dbtypes.AttributeValueMemberN{Value: seq}}}); err != nil {
				t.Fatal(err)
			}
			sw := &orders.Sweeper{Watches: w.env.DB().Uploads(w.env.Table("UploadsTable")), Orders: w.orders,
				Files: files.New(w.env.S3(), w.env.Table("FilesBucket")), Now: func() time.Time { return time.Now().Add(orders.WatchDelay + time.Minute) }}
			done, err := sw.Sweep(ctx)
			switch {
			case tc.test && (err != nil || done.Settled != 1 || len(w.objects(t)) != 0):
				t.Errorf("Sweep = %+v, %v, %d objects left; want the watch settled and the file removed", done, err, len(w.objects(t)))
			case !tc.test && (err == nil || done.Failed != 1 || len(w.objects(t)) != 1):
				t.Errorf("Sweep = %+v, %v, %d objects left; want the watch failed and the file kept", done, err, len(w.objects(t)))
			}
		})
	}
}
