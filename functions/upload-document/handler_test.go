package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"stampduty/shared/function/fulfillment"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/locals3"
)

func TestMain(m *testing.M) { functest.Main(m) }

var (
	pdf = functest.PDF(0)
	png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
)

type fileBody struct {
	Data stampduty.File `json:"data"`
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
	stored := func(doc string) *stampduty.File {
		o, err := ords.ByDocument(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		return o.StampDuty.UploadedDocument
	}

	var first stampduty.File
	t.Run("PDF", func(t *testing.T) {
		first = functest.OK[fileBody](t, put(mine[0].DocumentID, "name=lease.pdf", "application/pdf", pdf)).Data
		sum := sha256.Sum256(pdf)
		if first.Name != "lease.pdf" || first.Mime != stampduty.MimePDF || first.Size != int64(len(pdf)) || first.SHA256 != hex.EncodeToString(sum[:]) ||
			first.ID <= 0 || len(first.DocumentID) != 24 || first.CreatedAt == "" {
			t.Errorf("file = %+v", first)
		}
		if got := s.Download(t, first.URL); got.Status != http.StatusOK || got.Body != string(pdf) {
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
		if got := s.Download(t, first.URL).Status; got != http.StatusNotFound {
			t.Errorf("the replaced file: GET %d, want 404", got)
		}
	})
	t.Run("ErrRefusedChangesNothing", func(t *testing.T) {
		before := stored(mine[0].DocumentID)
		big := append(functest.PDF(0), bytes.Repeat([]byte{' '}, 5<<20)...)
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
		ff, _, err := next.Fulfillments[0].Apply(stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"}, stampduty.FormatTime(time.Now()), functest.Operator)
		if err != nil {
			t.Fatal(err)
		}
		next.Fulfillments = []stampduty.Fulfillment{ff}
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
	t.Run("PresignedUpload", func(t *testing.T) {
		testPresigned(t, s, mine[0].DocumentID, theirs[0].DocumentID)
	})
	t.Run("EventFile", func(t *testing.T) {
		// events/upload-document.json names an order no one has: 404.
		s.CheckEvents(t, map[string]int{"upload-document": http.StatusNotFound})
	})
	s.CheckRoutes()
	s.CheckTemplate(s.Proxy.All())
}

// send sends body to the pre-signed upload u as a client would: its method,
// its headers, except those overridden. S3 refusing the request answers
// 403, or (for a large body it refuses before reading) resets the
// connection: both are 403 here (locals3.Send).
func send(t *testing.T, u fulfillment.UploadResponse, body []byte, override map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(u.Data.Method, u.Data.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range u.Data.Headers {
		if k != "Content-Length" { // net/http sets it from the body
			req.Header.Set(k, v)
		}
	}
	for k, v := range override {
		req.Header.Set(k, v)
	}
	return locals3.Send(t, req)
}

// testPresigned drives the pre-signed path of a caller's document: a 20 MiB
// document sent straight to the bucket and attached, and every refusal.
func testPresigned(t *testing.T, s *functest.Stack, mine, theirs string) {
	newUpload := func(doc, body string) functest.Response {
		return s.Invoke(functest.Request("POST", "/api/live-orders/"+doc+"/document/upload", "", functest.DevHeaders, body))
	}
	attach := func(doc, body string) functest.Response {
		return s.Invoke(functest.Request("PUT", "/api/live-orders/"+doc+"/document", "", functest.DevHeaders, body))
	}
	const max = 20 << 20
	file := functest.PDF(max)
	var u fulfillment.UploadResponse
	t.Run("TwentyMiBStraightToS3", func(t *testing.T) {
		u = functest.OK[fulfillment.UploadResponse](t, newUpload(mine, fmt.Sprintf(`{"name":"scan.pdf","mime":"application/pdf","size":%d}`, max)))
		if u.Data.Method != http.MethodPut || u.Data.Upload == "" || u.Data.Headers["Content-Type"] != stampduty.MimePDF ||
			u.Data.Headers["Content-Length"] != fmt.Sprint(max) || len(u.Data.Fields) != 0 {
			t.Fatalf("upload = %+v", u.Data)
		}
		if exp, err := time.Parse(stampduty.TimeLayout, u.Data.ExpiresAt); err != nil || time.Until(exp) > 15*time.Minute || time.Until(exp) < 14*time.Minute {
			t.Errorf("expiresAt %s, want 15 minutes from now", u.Data.ExpiresAt)
		}
		if got := attach(mine, `{"upload":"`+u.Data.Upload+`"}`); got.Status != http.StatusConflict {
			t.Errorf("attach before sending: %d, want 409: %s", got.Status, got.Body)
		}
		// S3 itself refuses another size or type.
		if got := send(t, u, file[:max-1], nil); got != http.StatusForbidden {
			t.Errorf("one byte short: S3 answered %d, want 403", got)
		}
		if got := send(t, u, file, map[string]string{"Content-Type": stampduty.MimePNG}); got != http.StatusForbidden {
			t.Errorf("another type: S3 answered %d, want 403", got)
		}
		if got := send(t, u, file, nil); got != http.StatusOK {
			t.Fatalf("the declared file: S3 answered %d", got)
		}
		// Another caller cannot attach it, to its order or to this one.
		token := "sdt_" + strings.Repeat("O", 43)
		other := map[string]string{"authorization": "Bearer " + token, "content-type": "application/json"}
		functest.AddToken(t, s.Env, token, "someone-else")
		for name, resp := range map[string]functest.Response{
			"AnotherCaller":       s.Invoke(functest.Request("PUT", "/api/live-orders/"+mine+"/document", "", other, `{"upload":"`+u.Data.Upload+`"}`)),
			"AnotherCallersOrder": s.Invoke(functest.Request("PUT", "/api/live-orders/"+theirs+"/document", "", other, `{"upload":"`+u.Data.Upload+`"}`)),
			"UnknownUpload":       attach(mine, `{"upload":"nosuchupload000000000000"}`),
		} {
			if resp.Status != http.StatusNotFound {
				t.Errorf("%s: status %d, want 404: %s", name, resp.Status, resp.Body)
			}
		}
		got := functest.OK[fileBody](t, attach(mine, `{"upload":"`+u.Data.Upload+`"}`)).Data
		sum := sha256.Sum256(file)
		if got.Name != "scan.pdf" || got.Size != max || got.SHA256 != hex.EncodeToString(sum[:]) || got.Mime != stampduty.MimePDF {
			t.Errorf("file = %+v", got)
		}
		if d := s.Download(t, got.URL); d.Status != http.StatusOK || len(d.Body) != max {
			t.Errorf("download: %d, %d bytes", d.Status, len(d.Body))
		}
	})
	t.Run("ErrUsedTwice", func(t *testing.T) {
		if got := attach(mine, `{"upload":"`+u.Data.Upload+`"}`); got.Status != http.StatusNotFound {
			t.Errorf("a used upload: status %d, want 404", got.Status)
		}
	})
	t.Run("ErrNotTheDeclaredType", func(t *testing.T) {
		png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
		v := functest.OK[fulfillment.UploadResponse](t, newUpload(mine, fmt.Sprintf(`{"mime":"application/pdf","size":%d}`, len(png))))
		if got := send(t, v, png, nil); got != http.StatusOK {
			t.Fatalf("S3 answered %d", got)
		}
		if got := attach(mine, `{"upload":"`+v.Data.Upload+`"}`); got.Status != http.StatusUnsupportedMediaType {
			t.Errorf("a PNG declared as PDF: status %d, want 415: %s", got.Status, got.Body)
		}
	})
	t.Run("ErrRefused", func(t *testing.T) {
		for name, tc := range map[string]struct {
			doc, body string
			status    int
		}{
			"TooLarge":     {mine, fmt.Sprintf(`{"mime":"application/pdf","size":%d}`, max+1), http.StatusRequestEntityTooLarge},
			"Text":         {mine, `{"mime":"text/plain","size":10}`, http.StatusUnsupportedMediaType},
			"NoSize":       {mine, `{"mime":"application/pdf"}`, http.StatusBadRequest},
			"ZeroSize":     {mine, `{"mime":"application/pdf","size":0}`, http.StatusBadRequest},
			"FractionSize": {mine, `{"mime":"application/pdf","size":1.5}`, http.StatusBadRequest},
			"BadName":      {mine, `{"name":"a/b.pdf","mime":"application/pdf","size":10}`, http.StatusBadRequest},
			"UnknownField": {mine, `{"mime":"application/pdf","size":10,"key":"x"}`, http.StatusBadRequest},
			"AnotherOrder": {theirs, `{"mime":"application/pdf","size":10}`, http.StatusNotFound},
			"AttachNoId":   {mine, `{}`, http.StatusBadRequest},
		} {
			t.Run(name, func(t *testing.T) {
				var resp functest.Response
				if name == "AttachNoId" {
					resp = attach(tc.doc, tc.body)
				} else {
					resp = newUpload(tc.doc, tc.body)
				}
				if resp.Status != tc.status {
					t.Errorf("status %d, want %d: %s", resp.Status, tc.status, resp.Body)
				}
				resp.Error(t)
			})
		}
	})
}
