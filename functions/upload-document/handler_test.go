package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
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

func download(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
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
		resp := put(mine[0].DocumentID, "name=lease.pdf", "application/pdf", pdf)
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		var body fileBody
		json.Unmarshal([]byte(resp.Body), &body)
		first = body.Data
		sum := sha256.Sum256(pdf)
		if first.Name != "lease.pdf" || first.Mime != rules.MimePDF || first.Size != int64(len(pdf)) || first.SHA256 != hex.EncodeToString(sum[:]) ||
			first.ID <= 0 || len(first.DocumentID) != 24 || first.CreatedAt == "" {
			t.Errorf("file = %+v", first)
		}
		if status, b := download(t, first.URL); status != http.StatusOK || !bytes.Equal(b, pdf) {
			t.Errorf("download = %d, %d bytes", status, len(b))
		}
		if f := stored(mine[0].DocumentID); f == nil || f.DocumentID != first.DocumentID {
			t.Errorf("the order's uploaded_document = %+v", f)
		}
	})
	t.Run("ReplacesTheEarlierOne", func(t *testing.T) {
		resp := put(mine[0].DocumentID, "", "image/png", png)
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		var body fileBody
		json.Unmarshal([]byte(resp.Body), &body)
		if body.Data.Name != "document.png" || body.Data.DocumentID == first.DocumentID {
			t.Errorf("file = %+v", body.Data)
		}
		if f := stored(mine[0].DocumentID); f == nil || f.DocumentID != body.Data.DocumentID {
			t.Errorf("the order points at %+v", f)
		}
		if status, _ := download(t, first.URL); status != http.StatusNotFound {
			t.Errorf("the replaced file: GET %d, want 404", status)
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
		if got := s.Invoke(functest.Event(t, "upload-document")).Status; got != http.StatusNotFound {
			t.Errorf("events/upload-document.json: status %d, want 404", got)
		}
	})
	s.CheckRoutes()
	s.CheckTemplate(s.Proxy.All())
}
