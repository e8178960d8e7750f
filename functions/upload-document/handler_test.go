package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"stampduty/shared/functest"
	"stampduty/shared/rules"
	"stampduty/shared/store/localdb"
	"stampduty/shared/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

var (
	pdf = []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n")
	png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
)

type fileBody struct {
	Data rules.File `json:"data"`
}

func TestUploadDocument(t *testing.T) {
	s := functest.New(t, "UploadDocumentFunction", wire)
	ctx := context.Background()
	mine := functest.AddOrders(t, s.Env, localdb.DevOwner, 2)
	theirs := functest.AddOrders(t, s.Env, "someone-else", 1)
	ords := s.Env.DB().Orders(s.Env.Table("OrdersTable"))
	put := func(doc, query, contentType string, body []byte) functest.Response {
		ev := functest.Request("PUT", "/api/live-orders/"+doc+"/document", query, functest.DevHeaders, "")
		return s.Invoke(functest.WithFile(ev, contentType, body))
	}
	stored := func(doc string) *rules.File {
		o, err := ords.ByDocument(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		return o.StampDuty.UploadedDocument
	}

	var first rules.File
	t.Run("PDF", func(t *testing.T) {
		first = functest.OK[fileBody](t, put(mine[0].DocumentID, "name=lease.pdf", "application/pdf", pdf)).Data
		sum := sha256.Sum256(pdf)
		if first.Name != "lease.pdf" || first.Mime != rules.MimePDF || first.Size != int64(len(pdf)) || first.SHA256 != hex.EncodeToString(sum[:]) ||
			first.ID <= 0 || len(first.DocumentID) != 24 || first.CreatedAt == "" {
			t.Errorf("file = %+v", first)
		}
		if got := functest.Download(t, first.URL); got.Status != http.StatusOK || got.Body != string(pdf) {
			t.Errorf("download = %d, %d bytes", got.Status, len(got.Body))
		}
		if f := stored(mine[0].DocumentID); f == nil || f.DocumentID != first.DocumentID {
			t.Errorf("the order's uploaded_document = %+v", f)
		}
	})
	t.Run("ReplacesTheEarlierOne", func(t *testing.T) {
		second := functest.OK[fileBody](t, put(mine[0].DocumentID, "", "image/png", png)).Data
		if second.Name != "document.png" || second.DocumentID == first.DocumentID {
			t.Errorf("file = %+v", second)
		}
		if f := stored(mine[0].DocumentID); f == nil || f.DocumentID != second.DocumentID {
			t.Errorf("the order points at %+v", f)
		}
		if got := functest.Download(t, first.URL).Status; got != http.StatusNotFound {
			t.Errorf("the replaced file: GET %d, want 404", got)
		}
	})
	t.Run("ErrRefusedChangesNothing", func(t *testing.T) {
		before := stored(mine[0].DocumentID)
		big := append(append([]byte(nil), pdf...), bytes.Repeat([]byte{' '}, 5<<20)...)
		for name, tc := range map[string]struct {
			doc, query, contentType string
			body                    []byte
			status                  int
		}{
			"PNGSentAsPDF":        {mine[0].DocumentID, "", "application/pdf", png, http.StatusUnsupportedMediaType},
			"Text":                {mine[0].DocumentID, "", "text/plain", []byte("hello"), http.StatusUnsupportedMediaType},
			"Empty":               {mine[0].DocumentID, "", "application/pdf", nil, http.StatusBadRequest},
			"FiveMiB":             {mine[0].DocumentID, "", "application/pdf", big, http.StatusRequestEntityTooLarge},
			"BadName":             {mine[0].DocumentID, "name=a/b.pdf", "application/pdf", pdf, http.StatusBadRequest},
			"AnotherCallersOrder": {theirs[0].DocumentID, "", "application/pdf", pdf, http.StatusNotFound},
			"UnknownOrder":        {"nosuchorder0000000000000", "", "application/pdf", pdf, http.StatusNotFound},
		} {
			t.Run(name, func(t *testing.T) {
				resp := put(tc.doc, tc.query, tc.contentType, tc.body)
				if resp.Status != tc.status {
					t.Errorf("status %d, want %d: %s", resp.Status, tc.status, resp.Body)
				}
				resp.Error(t)
			})
		}
		if after := stored(mine[0].DocumentID); after.DocumentID != before.DocumentID {
			t.Errorf("a refused upload changed the order's document")
		}
		if f := stored(theirs[0].DocumentID); f != nil {
			t.Errorf("another caller's order got a document")
		}
	})
	t.Run("ErrOnceFulfillmentStarted", func(t *testing.T) {
		o, err := ords.ByDocument(ctx, mine[1].DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		next := o.Order
		ff, _, err := next.Fulfillments[0].Apply(rules.Change{Status: rules.StatusCreated, UniqueDocRef: "REF-1"}, rules.FormatTime(time.Now()), functest.Operator)
		if err != nil {
			t.Fatal(err)
		}
		next.Fulfillments = []rules.Fulfillment{ff}
		if err := ords.Replace(ctx, o, next); err != nil {
			t.Fatal(err)
		}
		resp := put(mine[1].DocumentID, "", "application/pdf", pdf)
		if resp.Status != http.StatusConflict {
			t.Errorf("status %d, want 409: %s", resp.Status, resp.Body)
		}
		if f := stored(mine[1].DocumentID); f != nil {
			t.Errorf("the order got a document: %+v", f)
		}
	})
	t.Run("EventFile", func(t *testing.T) {
		// events/upload-document.json names an order no one has: 404.
		s.CheckEvents(t, map[string]int{"upload-document": http.StatusNotFound})
	})
	s.CheckRoutes()
	s.CheckTemplate(s.Proxy.All())
}
