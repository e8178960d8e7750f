package apigw

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"stampduty/cmd/internal/runtimeapi"
)

// Issue 17: the local API Gateway refuses what AWS's HTTP API refuses, with
// AWS's answer, and never invokes the function for it.
func TestLimits(t *testing.T) {
	// wantTooLarge checks AWS's answer to a request line and headers over
	// MaxRequestHeader.
	wantTooLarge := func(t *testing.T, resp *http.Response, body []byte) {
		t.Helper()
		if got, want := resp.StatusCode, http.StatusRequestHeaderFieldsTooLarge; got != want {
			t.Errorf("status = %d, want %d", got, want)
		}
		if got, want := string(body), "HTTP header is larger than 10240 bytes."; got != want {
			t.Errorf("body = %q, want %q", got, want)
		}
	}
	// base is the size of a request to srv's /x (request line and the
	// header values Go's client sends) without the test's additions.
	base := func(srv string) int {
		req, _ := http.NewRequest("GET", srv+"/x", nil)
		return len("GET /x HTTP/1.1") + len(req.URL.Host) + len("Go-http-client/1.1") + len("gzip")
	}

	t.Run("refuses headers over 10,240 bytes", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: fn}}, Options{})
		pad := MaxRequestHeader - base(srv.URL)
		resp, _ := do(t, "GET", srv.URL+"/x", nil, http.Header{"X-Pad": {strings.Repeat("a", pad)}})
		if got, want := resp.StatusCode, http.StatusOK; got != want {
			t.Fatalf("exactly 10,240 bytes: status %d, want %d", got, want)
		}
		fn.event(t)
		resp, body := do(t, "GET", srv.URL+"/x", nil, http.Header{"X-Pad": {strings.Repeat("a", pad+1)}})
		wantTooLarge(t, resp, body)
		// About 1 MB of headers, which the gateway used to pass on.
		resp, body = do(t, "GET", srv.URL+"/x", nil, http.Header{"Cookie": {strings.Repeat("c=1; ", 200_000)}})
		wantTooLarge(t, resp, body)
		fn.notInvoked(t)
	})

	t.Run("counts the query string in the request line, on unknown paths too", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: fn}}, Options{})
		resp, body := do(t, "GET", srv.URL+"/x?"+strings.Repeat("a=1&", 2600), nil, nil)
		wantTooLarge(t, resp, body)
		resp, body = do(t, "GET", srv.URL+"/nowhere?"+strings.Repeat("a=1&", 2600), nil, nil)
		wantTooLarge(t, resp, body)
		fn.notInvoked(t)
	})

	t.Run("joins a repeated query key in linear time", func(t *testing.T) {
		// 20,000 repeats took the gateway 1.3 s when each join copied the
		// values before it; now about a millisecond.
		raw := strings.Repeat("filters=abcdefgh&", 20_000)
		start := time.Now()
		params := queryParameters(raw)
		d := time.Since(start)
		t.Logf("20,000 repeats of one key joined in %s", d)
		if d > 250*time.Millisecond {
			t.Errorf("20,000 repeats of one key took %s", d)
		}
		if got, want := len(params["filters"]), 20_000*9-1; got != want {
			t.Errorf("joined value of %d bytes, want %d", got, want)
		}
	})

	t.Run("answers an event over Lambda's 6 MB as API Gateway does, without invoking", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "PUT", Path: "/api/live-orders/{documentId}/document", Target: fn}}, Options{})
		// A 5 MiB PDF: 7.0 MB once base64-encoded into the event.
		pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{0xff}, 5<<20-9)...)
		resp, body := do(t, "PUT", srv.URL+"/api/live-orders/abc/document", bytes.NewReader(pdf), http.Header{"Content-Type": {"application/pdf"}})
		wantMessage(t, resp, body, http.StatusRequestEntityTooLarge, "Request Too Long")
		fn.notInvoked(t)
		// A body whose event just fits is delivered.
		small := bytes.Repeat([]byte{0xff}, runtimeapi.MaxPayload*3/4-4096)
		resp, _ = do(t, "PUT", srv.URL+"/api/live-orders/abc/document", bytes.NewReader(small), http.Header{"Content-Type": {"application/pdf"}})
		if got, want := resp.StatusCode, http.StatusOK; got != want {
			t.Errorf("a body of %d bytes: status %d, want %d", len(small), got, want)
		}
		fn.event(t)
	})
}
