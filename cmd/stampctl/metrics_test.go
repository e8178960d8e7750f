package main

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"stampduty/cmd/internal/localmetrics"
	"stampduty/shared/metrics"
)

// TestMetrics runs stampctl metrics against a local stack's summary fed
// with what two functions wrote.
func TestMetrics(t *testing.T) {
	rec := localmetrics.New(nil)
	for _, fn := range []string{"CreateOrderFunction", "CreateOrderFunction", "ListOrdersFunction"} {
		s := metrics.NewSet(map[string]string{metrics.FunctionName: fn})
		s.Add(metrics.Requests, 1)
		s.Add(metrics.Latency, 12.5)
		if fn == "CreateOrderFunction" {
			s.Add(metrics.OrdersCreated, 1, "MH")
		}
		var buf bytes.Buffer
		if err := s.Flush(&buf, "StampDuty/stampduty-local", time.Now()); err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(buf.String()) {
			rec.Tee(&bytes.Buffer{}).Write([]byte("[" + fn + "] " + line))
		}
	}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	api := map[string]string{"STAMPDUTY_API_URL": srv.URL}

	t.Run("the group's word alone prints the summary, counts summed", func(t *testing.T) {
		r := (*harness)(nil).run(t, "", api, "metrics")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, want := range []string{
			"METRIC ", "Requests  FunctionName=CreateOrderFunction  2 ", "OrdersCreated  State=MH  2 ",
			"Latency  FunctionName=ListOrdersFunction  -  1  12.5 ms  12.5 ms  12.5 ms  12.5 ms  StampDuty/stampduty-local",
		} {
			if !strings.Contains(squeeze(r.stdout), want) {
				t.Errorf("output lacks %q:\n%s", want, r.stdout)
			}
		}
	})
	t.Run("--json prints the rows", func(t *testing.T) {
		r := (*harness)(nil).run(t, "", api, "metrics", "summary", "--json", "--minutes", "10")
		if r.code != 0 || !strings.Contains(r.stdout, `"metric": "OrdersCreated"`) {
			t.Errorf("exit %d, stdout %s", r.code, r.stdout)
		}
	})
	t.Run("a span outside 1 to 60 minutes is bad usage", func(t *testing.T) {
		if r := (*harness)(nil).run(t, "", api, "metrics", "--minutes", "61"); r.code != 2 {
			t.Errorf("exit %d; want 2", r.code)
		}
	})
	t.Run("an API that is not on this machine is not read", func(t *testing.T) {
		r := (*harness)(nil).run(t, "", map[string]string{"STAMPDUTY_API_URL": "https://api.example.com"}, "metrics")
		if r.code != 1 || !strings.Contains(r.stderr, "--stack NAME") {
			t.Errorf("exit %d, stderr %s; want 1 and the way to the dashboard", r.code, r.stderr)
		}
	})
	t.Run("nothing written says so", func(t *testing.T) {
		empty := httptest.NewServer(localmetrics.New(nil))
		t.Cleanup(empty.Close)
		r := (*harness)(nil).run(t, "", map[string]string{"STAMPDUTY_API_URL": empty.URL}, "metrics")
		if r.code != 0 || !strings.Contains(r.stdout, "no metric in the last 5 minutes") {
			t.Errorf("exit %d, stdout %s", r.code, r.stdout)
		}
	})
}

// squeeze turns each run of spaces into two, as the table's columns are
// separated at least so.
func squeeze(s string) string {
	for strings.Contains(s, "   ") {
		s = strings.ReplaceAll(s, "   ", "  ")
	}
	return s
}
