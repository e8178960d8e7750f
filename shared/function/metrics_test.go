package function_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"stampduty/shared/function"
	"stampduty/shared/metrics"
)

// points reads every EMF record written to out, by metric name.
func points(t *testing.T, out string) map[metrics.Name][]metrics.Point {
	t.Helper()
	got := map[metrics.Name][]metrics.Point{}
	for line := range strings.Lines(out) {
		ps, ok, err := metrics.Read([]byte(line))
		if !ok || err != nil {
			t.Fatalf("line %q is no EMF record (%v)", line, err)
		}
		for _, p := range ps {
			got[p.Name] = append(got[p.Name], p)
		}
	}
	return got
}

func TestMeasured(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		wantFaults float64
	}{
		{"a 2xx is a request and no fault", http.StatusOK, 0},
		{"a 4xx is a request and no fault", http.StatusNotFound, 0},
		{"a 500 is a request and a fault", http.StatusInternalServerError, 1},
		{"a 503 is a request and a fault", http.StatusServiceUnavailable, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				metrics.Add(r.Context(), metrics.Quotes, 1)
				w.WriteHeader(tc.status)
			})
			var out bytes.Buffer
			m := function.Meter{Namespace: "StampDuty/test", Function: "stamp-duty-quotes", Out: &out}
			resp, err := function.Measured(m, function.Lambda(h, slog.New(slog.NewJSONHandler(io.Discard, nil))))(context.Background(), event("GET", "/api/things/1", ""))
			if err != nil || resp.StatusCode != tc.status {
				t.Fatalf("answer %d, %v; want %d", resp.StatusCode, err, tc.status)
			}
			got := points(t, out.String())
			for name, want := range map[metrics.Name]float64{metrics.Requests: 1, metrics.Faults: tc.wantFaults, metrics.Quotes: 1} {
				if len(got[name]) != 1 || len(got[name][0].Values) != 1 || got[name][0].Values[0] != want {
					t.Errorf("%s = %+v; want one value %v", name, got[name], want)
				}
			}
			if l := got[metrics.Latency]; len(l) != 1 || l[0].Dimensions[metrics.FunctionName] != "stamp-duty-quotes" || l[0].Values[0] <= 0 {
				t.Errorf("Latency = %+v; want one value > 0 for FunctionName stamp-duty-quotes", l)
			}
		})
	}

	t.Run("a scheduled run's metrics are written at its end, error or not", func(t *testing.T) {
		var out bytes.Buffer
		m := function.Meter{Namespace: "StampDuty/test", Function: "webhook-dispatch", Out: &out}
		run := function.MeasuredRun(m, func(ctx context.Context, _ json.RawMessage) error {
			metrics.Add(ctx, metrics.EventsRelayed, 2)
			return errors.New("the table is gone")
		})
		if err := run(context.Background(), nil); err == nil {
			t.Fatal("the run's error was lost")
		}
		if got := points(t, out.String())[metrics.EventsRelayed]; len(got) != 1 || got[0].Values[0] != 2 {
			t.Errorf("EventsRelayed = %+v; want 2", got)
		}
	})
}
