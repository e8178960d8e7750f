package localmetrics

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"stampduty/shared/metrics"
)

// emf is what a function writes for its set s, as the local runtime
// prefixes it.
func emf(t *testing.T, fn string, add func(s *metrics.Set)) string {
	t.Helper()
	s := metrics.NewSet(map[string]string{metrics.FunctionName: fn})
	add(s)
	var buf bytes.Buffer
	if err := s.Flush(&buf, "StampDuty/stampduty-local", time.Now()); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for line := range strings.Lines(buf.String()) {
		out.WriteString("[" + fn + "] " + line)
	}
	return out.String()
}

func TestRecorder(t *testing.T) {
	now := time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC)
	r := New(func() time.Time { return now })
	var shown bytes.Buffer
	w := r.Tee(&shown)

	old := emf(t, "CreateOrderFunction", func(s *metrics.Set) { s.Add(metrics.OrdersCreated, 5, "MH") })
	io.WriteString(w, old)
	now = now.Add(10 * time.Minute)
	for _, ms := range []float64{10, 20, 30, 40, 100} {
		io.WriteString(w, emf(t, "CreateOrderFunction", func(s *metrics.Set) {
			s.Add(metrics.Latency, ms)
			s.Add(metrics.OrdersCreated, 1, "MH")
		}))
	}
	// A record cut in two writes, and lines that are no record.
	line := emf(t, "StampDutyQuotesFunction", func(s *metrics.Set) { s.Add(metrics.Quotes, 2) })
	io.WriteString(w, line[:20])
	io.WriteString(w, line[20:]+"[StampDutyQuotesFunction] {\"level\":\"INFO\",\"msg\":\"request\"}\nlocal: started\n")

	if !strings.Contains(shown.String(), "local: started") || !strings.Contains(shown.String(), `"OrdersCreated"`) {
		t.Errorf("the tee did not pass every line through: %q", shown.String())
	}
	rows := r.Summary(5 * time.Minute)
	got := map[string]Row{}
	for _, row := range rows {
		got[row.Metric+" "+row.Dims()] = row
	}
	if got, want := len(rows), 3; got != want {
		t.Fatalf("%d rows; want %d: %+v", got, want, rows)
	}
	t.Run("counts are summed over the span, older points left out", func(t *testing.T) {
		if got, want := got["OrdersCreated State=MH"].Sum, 5.0; got != want {
			t.Errorf("OrdersCreated = %v; want %v (the 5 of 10 minutes ago left out)", got, want)
		}
		if got, want := got["Quotes -"].Sum, 2.0; got != want {
			t.Errorf("Quotes = %v; want %v from a record written in two parts", got, want)
		}
	})
	t.Run("timings have their percentiles and maximum", func(t *testing.T) {
		l := got["Latency FunctionName=CreateOrderFunction"]
		if l.Samples != 5 || l.P50 != 30 || l.P90 != 100 || l.Max != 100 || l.Unit != "Milliseconds" {
			t.Errorf("Latency = %+v; want 5 samples, p50 30, p90 100, max 100, in Milliseconds", l)
		}
	})
	t.Run("the span reaches back as asked", func(t *testing.T) {
		for _, row := range r.Summary(15 * time.Minute) {
			if row.Metric == "OrdersCreated" && row.Sum != 10 {
				t.Errorf("OrdersCreated over 15 minutes = %v; want 10", row.Sum)
			}
		}
	})
	t.Run("served as JSON, minutes checked", func(t *testing.T) {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path+"?minutes=15", nil))
		var body struct {
			Minutes int
			Data    []Row
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Minutes != 15 || len(body.Data) != 3 {
			t.Errorf("answer %d %s (%v); want 15 minutes and 3 rows", rec.Code, rec.Body, err)
		}
		for _, q := range []string{"0", "61", "x"} {
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path+"?minutes="+q, nil))
			if rec.Code != http.StatusBadRequest {
				t.Errorf("minutes=%s: %d; want 400", q, rec.Code)
			}
		}
	})
}
