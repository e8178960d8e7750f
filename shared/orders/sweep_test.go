package orders_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/storetest"
)

// objects returns every version and delete marker in w's bucket, by key.
func (w *fulfillmentWorld) objects(t *testing.T) map[string]int {
	t.Helper()
	return functest.Versions(t, w.env)
}

// orphans counts the versions (and delete markers) in the bucket of keys
// no order of w points at, and of keys an order points at, all but one.
func (w *fulfillmentWorld) orphans(t *testing.T) int {
	t.Helper()
	referenced := map[string]bool{}
	for _, o := range w.mine {
		s, err := w.orders.ByDocument(context.Background(), o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = w.orders.Reread(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		for _, f := range s.Files() {
			referenced[f.Key] = true
		}
	}
	n := 0
	for key, versions := range w.objects(t) {
		if referenced[key] {
			versions--
		}
		n += versions
	}
	return n
}

// sweep runs the sweeper as its scheduled function does, at after from now.
func (w *fulfillmentWorld) sweep(t *testing.T, after time.Duration) orders.Swept {
	t.Helper()
	db := w.env.DB()
	sw := &orders.Sweeper{Watches: db.Uploads(w.env.Table("UploadsTable")), Orders: w.orders,
		Files: files.New(w.env.S3(), w.env.Table("FilesBucket")), Now: func() time.Time { return time.Now().Add(after) }}
	done, err := sw.Sweep(context.Background())
	if err != nil {
		t.Fatalf("Sweep = %+v, %v", done, err)
	}
	return done
}

// killedAtReplace is an orders store whose order write never happens: the
// function is killed right before it (runtime.Goexit ends the request's
// goroutine there, running nothing more of it).
type killedAtReplace struct{ orders.Fulfillments }

func (killedAtReplace) Replace(context.Context, orders.Stored, stampduty.Order, ...stampduty.Pending) error {
	runtime.Goexit()
	return nil
}

// killed runs f as a request the function is killed in: it returns when
// f returns or its goroutine is ended.
func killed(f func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f()
	}()
	wg.Wait()
}

// putStaged sends body straight to the bucket through u.
func putStaged(t *testing.T, u orders.Upload, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(u.Method, u.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", u.Headers["Content-Type"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT to S3: %v %v", resp, err)
	}
	resp.Body.Close()
}

// staged makes a pre-signed upload of a PDF to owner's order doc through f
// and sends the PDF to it, as a caller does before attaching it.
func staged(t *testing.T, f *orders.Fulfiller, doc string) orders.Upload {
	t.Helper()
	u, err := f.NewDocumentUpload(context.Background(), "owner", doc, stampduty.Declared{Mime: stampduty.MimePDF, Size: int64(len(pdf))})
	if err != nil {
		t.Fatal(err)
	}
	putStaged(t, u, pdf)
	return u
}

// wantNoOrphans fails t if the bucket holds an object no order of w points
// at; what names the count in the message.
func (w *fulfillmentWorld) wantNoOrphans(t *testing.T, what string) {
	t.Helper()
	if got := w.orphans(t); got != 0 {
		t.Errorf("%s: %d, want 0 (%v)", what, got, w.objects(t))
	}
}

// wantOrphans stops t unless the bucket holds n orphans after the step
// named (the kill, the replace): the fault the sweeper is to clear up
// happened. why ends the message.
func (w *fulfillmentWorld) wantOrphans(t *testing.T, n int, after, why string) {
	t.Helper()
	if got := w.orphans(t); got != n {
		t.Fatalf("orphans after the %s: %d, want %d%s", after, got, n, why)
	}
}

// sweepDue runs the sweeper once the watches are due and fails t if it
// leaves an orphan.
func (w *fulfillmentWorld) sweepDue(t *testing.T) {
	t.Helper()
	w.sweep(t, orders.WatchDelay+time.Minute)
	w.wantNoOrphans(t, "orphans after sweeping")
}

// TestNoOrphanedFiles: whatever happens to a request that stores a file —
// S3 stalled, the function killed between the object and the order — every
// object in the bucket is pointed at by an order once the sweeper has run,
// and replaced files are gone with every version (TestStagedUploads: the
// sweeper never removes a file an order points at). Orphans are counted by
// listing the bucket.
func TestNoOrphanedFiles(t *testing.T) {
	ctx := context.Background()
	upload := stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}

	t.Run("S3StalledDuringAPut", func(t *testing.T) {
		w := newFulfillmentWorld(t, 1)
		proxy := newS3Proxy(t, w.env.S3Endpoint)
		rf := &recordingFiles{Store: files.New(locals3.Client(proxy.URL, localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region), w.env.Table("FilesBucket"))}
		f := w.fulfiller(w.orders, rf)
		proxy.Stall(4 * time.Second)
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second) // the request's budget runs out first
		_, err := f.UploadDocument(rctx, "owner", w.mine[0].DocumentID, upload)
		cancel()
		if err == nil {
			t.Fatal("UploadDocument succeeded with S3 stalled")
		}
		proxy.Stall(0)
		proxy.Wait() // S3 resumes: the stalled PUT is stored now
		before := w.orphans(t)
		t.Logf("orphans after the stall: %d (before sweeping)", before)
		if before == 0 {
			t.Fatal("the stall left no orphan: the fault was not reproduced")
		}
		if done := w.sweep(t, 30*time.Minute); done.Settled != 0 {
			t.Errorf("a sweep before the watch is due settled %d", done.Settled)
		}
		w.sweepDue(t)
	})
	t.Run("KilledBetweenTheObjectAndTheOrder", func(t *testing.T) {
		w := newFulfillmentWorld(t, 1)
		f := w.fulfiller(killedAtReplace{w.orders}, w.files())
		killed(func() { f.UploadDocument(ctx, "owner", w.mine[0].DocumentID, upload) })
		w.wantOrphans(t, 1, "kill", ": the fault was not reproduced")
		w.sweepDue(t)
	})
	t.Run("KilledAttachingAStagedUpload", func(t *testing.T) {
		w := newFulfillmentWorld(t, 1)
		f := w.fulfiller(w.orders, w.files())
		u := staged(t, f, w.mine[0].DocumentID)
		k := w.fulfiller(killedAtReplace{w.orders}, w.files())
		killed(func() { k.AttachDocument(ctx, "owner", w.mine[0].DocumentID, u.ID) })
		w.wantOrphans(t, 2, "kill", " (the staged file and its copy)")
		w.sweepDue(t)
	})
	t.Run("ReplacedFileGoneWithEveryVersion", func(t *testing.T) {
		w := newFulfillmentWorld(t, 1)
		rf := w.files()
		rf.purgeErr = stampduty.Unavailable(nil) // the request cannot remove the replaced file
		f := w.fulfiller(w.orders, rf)
		first, err := f.UploadDocument(ctx, "owner", w.mine[0].DocumentID, upload)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.UploadDocument(ctx, "owner", w.mine[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePNG, Body: pngFile}); err != nil {
			t.Fatal(err)
		}
		w.wantOrphans(t, 1, "replace", " (the replaced file)")
		w.sweepDue(t)
		if got := w.objects(t)[orders.DocumentPrefix+w.mine[0].DocumentID+"/"+first.DocumentID]; got != 0 {
			t.Errorf("the replaced file has %d versions left, want 0", got)
		}
	})
	t.Run("ReplacedFileGoneAtOnce", func(t *testing.T) {
		w := newFulfillmentWorld(t, 1)
		f := w.fulfiller(w.orders, w.files())
		for _, u := range []stampduty.Upload{upload, {ContentType: stampduty.MimePNG, Body: pngFile}} {
			if _, err := f.UploadDocument(ctx, "owner", w.mine[0].DocumentID, u); err != nil {
				t.Fatal(err)
			}
		}
		w.wantNoOrphans(t, "orphans right after a replace")
	})
}

// TestStagedUploads: the sweeper removes what was sent to a pre-signed
// upload that was never attached, or sent again after the attach, never an
// attached file; one attach of an upload wins.
func TestStagedUploads(t *testing.T) {
	ctx := context.Background()
	t.Run("AttachedFilesNeverRemoved", func(t *testing.T) {
		w := newFulfillmentWorld(t, 2)
		f := w.fulfiller(w.orders, w.files())
		upload := stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}
		if _, err := f.UploadDocument(ctx, "owner", w.mine[0].DocumentID, upload); err != nil {
			t.Fatal(err)
		}
		u := staged(t, f, w.mine[1].DocumentID)
		file, err := f.AttachDocument(ctx, "owner", w.mine[1].DocumentID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The staged upload's URL still works: what is sent to it after the
		// attach is removed by the sweeper, not the attached file.
		putStaged(t, u, pdf)
		for _, after := range []time.Duration{0, orders.WatchDelay + time.Minute, 48 * time.Hour} {
			w.sweep(t, after)
		}
		w.wantNoOrphans(t, "orphans")
		for i, o := range w.mine {
			s, _ := w.orders.ByDocument(ctx, o.DocumentID)
			d := s.StampDuty.UploadedDocument
			if d == nil || w.objects(t)[d.Key] != 1 {
				t.Errorf("order %d: its document %+v is not stored", i, d)
			}
		}
		if got := functest200(t, file.URL); got != http.StatusOK {
			t.Errorf("the attached file: GET %d", got)
		}
	})
	t.Run("StagedUploadNeverAttached", func(t *testing.T) {
		w := newFulfillmentWorld(t, 1)
		f := w.fulfiller(w.orders, w.files())
		u := staged(t, f, w.mine[0].DocumentID)
		w.sweep(t, orders.UploadLifetime-time.Minute)
		if got := w.objects(t)[orders.StagingPrefix+u.ID]; got != 1 {
			t.Errorf("an upload still attachable was removed (%d versions)", got)
		}
		w.sweep(t, orders.UploadLifetime+time.Minute)
		w.wantNoOrphans(t, "orphans")
		if _, err := f.AttachDocument(ctx, "owner", w.mine[0].DocumentID, u.ID); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Errorf("attaching a swept upload: %v, want ENOTFOUND", err)
		}
	})
	t.Run("OneAttachOfAnUploadWins", func(t *testing.T) {
		w := newFulfillmentWorld(t, 1)
		f := w.fulfiller(w.orders, w.files())
		u := staged(t, f, w.mine[0].DocumentID)
		const n = 6
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.AttachDocument(ctx, "owner", w.mine[0].DocumentID, u.ID)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case stampduty.ErrorCode(err) != stampduty.ENOTFOUND:
				t.Errorf("a losing attach: %v, want ENOTFOUND", err)
			}
		}
		if won != 1 {
			t.Errorf("%d attaches of one upload succeeded, want exactly 1", won)
		}
		w.sweep(t, orders.WatchDelay+time.Minute)
		w.wantNoOrphans(t, "orphans")
	})
}

// pngFile is a minimal PNG.
var pngFile = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")

// functest200 GETs u and returns the status.
func functest200(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestUploadCosts measures, at the wire, the DynamoDB calls and units of
// each step of an upload, and bounds what the watches add: a body upload
// two writes to the uploads table (its watch, then dropping it), a
// pre-signed upload one write to make it, one read and one write to attach
// it; a sweeper run two Queries of each shard and three calls per watch.
func TestUploadCosts(t *testing.T) {
	ctx := context.Background()
	w := newFulfillmentWorld(t, 1)
	db, proxy := w.env.ProxiedDB()
	proxy.SetMode(storetest.Account)
	bucket := files.New(w.env.S3(), w.env.Table("FilesBucket"))
	f := &orders.Fulfiller{Orders: db.Orders(w.env.Table("OrdersTable")), Files: bucket, Direct: bucket,
		Watches: db.Uploads(w.env.Table("UploadsTable")), IDs: db.IDs(w.env.Table("CountersTable"), 10), Now: time.Now}
	doc := w.mine[0].DocumentID
	measure := func(step string, maxUploadsCalls int, do func() error) {
		t.Helper()
		proxy.Take()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		calls := proxy.Take()
		var all, uploads storetest.Capacity
		n := 0
		for _, c := range calls {
			all = all.Add(c.Billed)
			if c.Table == w.env.Table("UploadsTable") {
				uploads = uploads.Add(c.Billed)
				n++
			}
		}
		t.Logf("%s: %s; %.1f RCU %.1f WCU in all, of which the uploads table %d calls %.1f RCU %.1f WCU",
			step, w.env.Operations(calls), all.Read, all.Write, n, uploads.Read, uploads.Write)
		if n > maxUploadsCalls {
			t.Errorf("%s: %d calls to the uploads table, want at most %d", step, n, maxUploadsCalls)
		}
		if err := proxy.Err(); err != nil {
			t.Error(err)
		}
	}
	measure("body upload", 2, func() error {
		_, err := f.UploadDocument(ctx, "owner", doc, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf})
		return err
	})
	measure("body upload replacing a file", 2, func() error {
		_, err := f.UploadDocument(ctx, "owner", doc, stampduty.Upload{ContentType: stampduty.MimePNG, Body: pngFile})
		return err
	})
	var u orders.Upload
	measure("pre-signed upload made", 1, func() (err error) {
		u, err = f.NewDocumentUpload(ctx, "owner", doc, stampduty.Declared{Mime: stampduty.MimePDF, Size: int64(len(pdf))})
		return err
	})
	putStaged(t, u, pdf)
	measure("pre-signed upload attached", 2, func() error {
		_, err := f.AttachDocument(ctx, "owner", doc, u.ID)
		return err
	})
	sw := &orders.Sweeper{Watches: f.Watches, Orders: f.Orders, Files: bucket, Now: func() time.Time { return time.Now().Add(2 * time.Hour) }}
	// A pass reads each shard of the due index; the run stops after a pass
	// that settles nothing.
	measure("sweeper run settling the attached upload's watch", 2*store.DueShards+3, func() error {
		done, err := sw.Sweep(ctx)
		if err == nil && done.Settled != 1 {
			err = fmt.Errorf("settled %d, want 1", done.Settled)
		}
		return err
	})
}

// dueOnly is a Watches whose Due answers with err and no watch; a sweep
// calls nothing else when nothing is due.
type dueOnly struct {
	orders.Watches
	err error
}

func (d dueOnly) Due(context.Context, time.Time, int) ([]orders.Watch, error) { return nil, d.err }

// TestSweeperRunLogsOneLine: a scheduled run logs one JSON line of what it
// did, level ERROR with the run failing when the sweep fails.
func TestSweeperRunLogsOneLine(t *testing.T) {
	for _, tc := range []struct {
		name, level string
		err         error
	}{
		{"Done", "INFO", nil},
		{"Failed", "ERROR", errors.New("the table is gone")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			sw := &orders.Sweeper{Watches: dueOnly{err: tc.err}, Now: time.Now, Log: &log}
			if err := sw.Run(context.Background()); !errors.Is(err, tc.err) {
				t.Fatalf("Run() = %v, want %v", err, tc.err)
			}
			var line struct {
				Level, Msg               string
				Settled, Removed, Failed *int
			}
			if err := json.Unmarshal(log.Bytes(), &line); err != nil {
				t.Fatalf("the log %q: %v", log.String(), err)
			}
			if line.Level != tc.level || line.Msg != "sweep" || line.Settled == nil || line.Removed == nil || line.Failed == nil {
				t.Errorf("the log line = %s, want level %s, msg sweep, settled, removed and failed", log.String(), tc.level)
			}
		})
	}
}
