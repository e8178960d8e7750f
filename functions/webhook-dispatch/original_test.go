package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/webhooks"
)

// originalCheck is the check a receiver written for the original API makes
// of a callback: the lowercase hex HMAC-SHA256 of the raw body under the
// secret, compared with x-signature. It is written here from the original
// API's description, not with package webhooks, so that it is an
// independent receiver's check.
func originalCheck(secret string, body []byte, signature string) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(signature))
}

// jsonKeys returns the keys of the JSON object b in the order they are
// written, and fails t unless b is an object of strings only.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("body %s is not an object: %v", b, err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		keys = append(keys, k.(string))
		if v, err := dec.Token(); err != nil {
			t.Fatalf("body %s: %v", b, err)
		} else if _, ok := v.(string); !ok {
			t.Fatalf("body %s: %s is %v, not a string", b, k, v)
		}
	}
	return keys
}

// TestOriginalFormat: a webhook of the "original" format gets the original
// API's certificate callback, which a receiver written for that API
// accepts unchanged — {"url", "name", "orderId", "orderFulfillmentId"},
// the url downloading the certificate, x-signature the hex HMAC of the raw
// body under the secret as registered, no Stampduty-Signature — with the
// Stampduty-Event-Id, retries, delivery log, redelivery and 410 handling of
// any webhook, over the real store, files and delivery client.
func TestOriginalFormat(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	register := func(path, format string) webhooks.Registered {
		t.Helper()
		h, err := w.reg.Register(ctx, localdb.DevOwner, webhooks.Registration{URL: w.rc.URL + path,
			Events: []string{stampduty.EventOrderCertificateAttached}, Format: format})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	orig := register("/original", webhooks.FormatOriginal)
	gone := register("/gone", webhooks.FormatOriginal) // the receiver's /gone answers 410
	event := register("/event", "")

	// The receiver is down for the first attempt, then checks as the
	// original API's receivers do: 401 on a bad signature, else 200.
	var (
		mu      sync.Mutex
		answers []int
	)
	w.rc.On("/original", func(rw http.ResponseWriter, req *http.Request, n int) {
		code := http.StatusOK
		if n == 1 {
			code = http.StatusServiceUnavailable
		} else if !originalCheck(orig.Secret, w.rc.At("/original")[n-1].Body, req.Header.Get("x-signature")) {
			code = http.StatusUnauthorized
		}
		mu.Lock()
		answers = append(answers, code)
		mu.Unlock()
		rw.WriteHeader(code)
	})

	pdf := []byte("%PDF-1.7\noriginal-format certificate\n%%EOF\n")
	o := createOrder(t, w.env, localdb.DevOwner)
	ff := o.Fulfillments[0].DocumentID
	for _, c := range []stampduty.Change{{Status: stampduty.StatusCreated, UniqueDocRef: "IN-KA-1"},
		{Status: stampduty.StatusProcured, CertificateNumber: "IN-KA93689528000869Y"}} {
		if _, err := w.f.Advance(ctx, o.DocumentID, ff, c, functest.Operator); err != nil {
			t.Fatal(err)
		}
	}
	attached, err := w.f.AttachCertificate(ctx, o.DocumentID, ff, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf})
	if err != nil {
		t.Fatal(err)
	}
	name := attached.Fulfillments[0].CertificateFile.Name
	d := w.dispatcher(0)

	// checkOriginal checks the n-th request (from 1) /original got.
	var eventID string
	checkOriginal := func(t *testing.T, n int) {
		t.Helper()
		got := w.rc.At("/original")
		if len(got) < n {
			t.Fatalf("/original got %d requests, want %d", len(got), n)
		}
		r := got[n-1]
		if !originalCheck(orig.Secret, r.Body, r.Header.Get("x-signature")) {
			t.Errorf("x-signature %q does not check against the body under the secret", r.Header.Get("x-signature"))
		}
		for name, want := range map[string]string{"Content-Type": "application/json", webhooks.HeaderEventID: eventID, webhooks.HeaderSignature: ""} {
			if got := r.Header.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		if got, want := jsonKeys(t, r.Body), []string{"url", "name", "orderId", "orderFulfillmentId"}; !slices.Equal(got, want) {
			t.Fatalf("body keys %v, want %v: %s", got, want, r.Body)
		}
		var b struct{ URL, Name, OrderID, OrderFulfillmentID string }
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		if b.Name != name || b.OrderID != o.DocumentID || b.OrderFulfillmentID != ff {
			t.Errorf("body %s, want name %s, orderId %s, orderFulfillmentId %s", r.Body, name, o.DocumentID, ff)
		}
		if dl := functest.Download(t, b.URL); dl.Status != http.StatusOK || dl.Body != string(pdf) {
			t.Errorf("the url answers %d with %d bytes, want the certificate's %d", dl.Status, len(dl.Body), len(pdf))
		}
	}

	w.pass(ctx, d, 0)
	t.Run("TheDefaultFormatGetsTheEvent", func(t *testing.T) {
		got := w.rc.At("/event")
		if len(got) != 1 {
			t.Fatalf("/event got %d requests, want 1", len(got))
		}
		var ev webhooks.Event
		if err := json.Unmarshal(got[0].Body, &ev); err != nil || ev.Type != stampduty.EventOrderCertificateAttached {
			t.Fatalf("/event got %s (%v)", got[0].Body, err)
		}
		if err := webhooks.Verify(got[0].Signature, event.Secret, got[0].Body, time.Now(), time.Minute); err != nil {
			t.Errorf("the default format's signature: %v", err)
		}
		eventID = ev.ID
	})
	t.Run("FirstAttemptFailsAndIsLogged", func(t *testing.T) {
		checkOriginal(t, 1)
		atts := w.attempts(localdb.DevOwner, orig.DocumentID)
		if len(atts) != 1 || atts[0].Status != http.StatusServiceUnavailable || atts[0].EventID != eventID ||
			atts[0].NextAttemptAt == nil || *atts[0].NextAttemptAt != stampduty.FormatTime(w.start.Add(30*time.Second)) {
			t.Errorf("deliveries %+v, want the 503 with its retry 30 s later", atts)
		}
	})
	t.Run("GoneDisables", func(t *testing.T) {
		hooks, err := w.reg.List(ctx, localdb.DevOwner)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(hooks, func(h webhooks.Webhook) bool { return h.DocumentID == gone.DocumentID })
		if i < 0 || hooks[i].Enabled || hooks[i].Format != webhooks.FormatOriginal {
			t.Errorf("the original webhook that answered 410: %+v, want it disabled", hooks)
		}
	})

	w.pass(ctx, d, 30*time.Second)
	t.Run("RetriedOnScheduleAndAccepted", func(t *testing.T) {
		checkOriginal(t, 2)
		atts := w.attempts(localdb.DevOwner, orig.DocumentID)
		if len(atts) != 2 || atts[1].Status != http.StatusOK || atts[1].Attempt != 2 || atts[1].NextAttemptAt != nil { // oldest first
			t.Errorf("deliveries %+v, want the retry accepted", atts)
		}
	})

	t.Run("Redelivered", func(t *testing.T) {
		red, err := w.reg.Redeliver(ctx, localdb.DevOwner, eventID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(red.Webhooks, orig.DocumentID) || slices.Contains(red.Webhooks, gone.DocumentID) {
			t.Errorf("redelivered to %v, want the original webhook and not the disabled one", red.Webhooks)
		}
		w.pass(ctx, d, time.Minute)
		checkOriginal(t, 3)
		if atts := w.attempts(localdb.DevOwner, orig.DocumentID); len(atts) != 3 || atts[2].Attempt != 3 || atts[2].Status != http.StatusOK {
			t.Errorf("deliveries %+v, want the redelivery logged as attempt 3", atts)
		}
		if got := w.rc.At("/gone"); len(got) != 1 {
			t.Errorf("/gone got %d requests, want the one that disabled it", len(got))
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if want := []int{http.StatusServiceUnavailable, http.StatusOK, http.StatusOK}; !slices.Equal(answers, want) {
		t.Errorf("the receiver answered %v, want %v", answers, want)
	}
}
