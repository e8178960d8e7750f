package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stampduty/shared/webhooks"
)

const secret = "whsec_testtesttesttesttesttesttesttesttesttesttes"

// post sends r one delivery of body, signed with key at t, and returns the
// answer's status.
func post(t *testing.T, r *receiver, key, id, body string, at time.Time) int {
	t.Helper()
	req := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
	req.Header.Set(webhooks.HeaderEventID, id)
	req.Header.Set(webhooks.HeaderSignature, webhooks.Sign(key, at, []byte(body)))
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w.Code
}

func TestReceiver(t *testing.T) {
	now := time.Date(2026, 11, 23, 16, 50, 1, 0, time.UTC)
	created := `{"id":"evt_a","type":"order.created","createdAt":"x","data":{"order":{"documentId":"k3v9"},"previous_status":null,"order_status":null}}`
	moved := `{"id":"evt_b","type":"order.status_changed","createdAt":"x","data":{"order":{"documentId":"k3v9"},"previous_status":"Pending","order_status":"Created"}}`

	t.Run("FailsTheFirstDeliveriesAsAskedThenTakesTheRetryWithItsId", func(t *testing.T) {
		var out bytes.Buffer
		dir := t.TempDir()
		r := &receiver{secret: secret, fail: 1, out: &out, now: func() time.Time { return now }, logFile: filepath.Join(dir, "log"), save: dir}
		if got := post(t, r, secret, "evt_a", created, now); got != 500 {
			t.Errorf("first delivery answered %d, want 500", got)
		}
		if got := post(t, r, secret, "evt_a", created, now); got != 204 {
			t.Errorf("the retry answered %d, want 204", got)
		}
		if got := post(t, r, secret, "evt_b", moved, now); got != 204 {
			t.Errorf("the next event answered %d, want 204", got)
		}
		want := "delivery=1 at=2026-11-23T16:50:01.000Z id=evt_a type=order.created order=k3v9 previous=- status=- seen=1 signature=ok answer=500\n" +
			"delivery=2 at=2026-11-23T16:50:01.000Z id=evt_a type=order.created order=k3v9 previous=- status=- seen=2 signature=ok answer=204\n" +
			"delivery=3 at=2026-11-23T16:50:01.000Z id=evt_b type=order.status_changed order=k3v9 previous=Pending status=Created seen=1 signature=ok answer=204\n"
		if out.String() != want {
			t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "log")); string(b) != want {
			t.Errorf("logged\n%s\nwant\n%s", b, want)
		}
		body, _ := os.ReadFile(filepath.Join(dir, "3.json"))
		sig, _ := os.ReadFile(filepath.Join(dir, "3.sig"))
		if string(body) != moved || webhooks.Verify(string(sig), secret, body, now, 0) != nil {
			t.Errorf("saved delivery 3 is %s with signature %s, want the body sent and its signature", body, sig)
		}
	})

	t.Run("RefusesABadSignatureOrAStaleOne", func(t *testing.T) {
		var out bytes.Buffer
		r := &receiver{secret: secret, out: &out, now: func() time.Time { return now }}
		if got := post(t, r, secret+"x", "evt_a", created, now); got != 400 {
			t.Errorf("another secret's signature answered %d, want 400", got)
		}
		if got := post(t, r, secret, "evt_a", created, now.Add(-6*time.Minute)); got != 400 {
			t.Errorf("a signature 6 minutes old answered %d, want 400", got)
		}
		if got := post(t, r, secret, "evt_other", created, now); got != 400 {
			t.Errorf("an event id header unlike the body's answered %d, want 400", got)
		}
		if strings.Count(out.String(), "signature=bad answer=400") != 3 {
			t.Errorf("printed\n%s\nwant three lines with signature=bad answer=400", out.String())
		}
	})
}
