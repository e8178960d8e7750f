package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"stampduty/shared/metrics"
	"stampduty/shared/testkit"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// checkHostile sends the local stack, through its API Gateway, what issue
// 17's attacker sent: issue 17's exact curl path (a forged log line between
// %0a's) and %00 %01 %0d %7f in paths of every kind of route, with and
// without the dev token, signed on the operator routes. Each is answered
// 404 NotFoundError in the envelope, and the stack's output gains no line
// the attacker chose: every function line is one of the service's JSON
// lines. A 5 MiB PDF PUT as a document is answered as API Gateway answers
// an event over Lambda's 6 MB, and no function runs for it.
func checkHostile(t *testing.T, s *stack, out *functest.SyncBuffer) {
	from := len(out.String())
	notFound := `{"data":null,"error":{"status":404,"name":"NotFoundError","message":"Not Found","details":{}}}`
	send := func(method, path string, token, sign bool, body []byte, contentType string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if token {
			req.Header.Set("Authorization", "Bearer "+localdb.DevToken)
		}
		if sign {
			testkit.SignForAPI(t, req, body, s.IAM.Credentials, s.IAM.Region, time.Now())
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// The issue's curl, as sent.
	issue := "/api/live-orders/x%0a%7B%22level%22%3A%22INFO%22%2C%22msg%22%3A%22FORGED%22%7D%0a"
	for _, token := range []bool{false, true} {
		if status, body := send("GET", issue, token, false, nil, ""); status != 404 || body != notFound {
			t.Errorf("GET %s (token %v): %d %s, want 404 %s", issue, token, status, body, notFound)
		}
	}
	for _, c := range []string{"%00", "%01", "%0d", "%7f", "%0a"} {
		for _, r := range []struct {
			method, path string
			sign         bool
		}{
			{"GET", "/api/live-orders/x" + c, false},
			{"PUT", "/api/live-orders/x" + c + "/document", false},
			{"DELETE", "/api/webhooks/x" + c, false},
			{"POST", "/api/webhook-events/evt_" + c + "/redeliver", false},
			{"GET", "/api/ops/live-orders/x" + c, true},
			{"PATCH", "/api/ops/live-orders/x" + c + "/fulfillments/y", true},
			{"GET", "/api/x" + c, false}, // $default: the not-found function
		} {
			for _, token := range []bool{false, true} {
				if status, body := send(r.method, r.path, token, r.sign, nil, ""); status != 404 || body != notFound {
					t.Errorf("%s %s (token %v, signed %v): %d %s, want 404 %s", r.method, r.path, token, r.sign, status, body, notFound)
				}
			}
		}
	}

	// A 5 MiB PDF: a 7.0 MB event, over Lambda's 6,291,456 bytes.
	uploads := strings.Count(out.String(), "[UploadDocumentFunction] ")
	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{'A'}, 5<<20-9)...)
	status, body := send("PUT", "/api/live-orders/abc/document", true, false, pdf, "application/pdf")
	if status != 413 || body != `{"message":"Request Too Long"}` {
		t.Errorf("a 5 MiB document: %d %s, want 413 {\"message\":\"Request Too Long\"}", status, body)
	}
	if got := strings.Count(out.String(), "[UploadDocumentFunction] "); got != uploads {
		t.Errorf("a 5 MiB document reached the function: %d log lines more", got-uploads)
	}

	time.Sleep(200 * time.Millisecond) // the functions' last lines
	for line := range strings.Lines(out.String()[from:]) {
		line = strings.TrimSuffix(line, "\n")
		if strings.TrimSpace(line) == functest.Forged || strings.HasSuffix(line, "] "+functest.Forged) {
			t.Errorf("the output has the attacker's line %q", line)
		}
		if name, rest, ok := strings.Cut(line, "Function] "); ok && strings.HasPrefix(name, "[") {
			var entry map[string]any
			if _, emf, _ := metrics.Read([]byte(rest)); emf {
				continue // a metric record: metricLines reads those
			}
			if err := json.Unmarshal([]byte(rest), &entry); err != nil || entry["msg"] == nil {
				t.Errorf("a function wrote a line that is not one of its JSON lines: %q", line)
			}
		}
	}
}
