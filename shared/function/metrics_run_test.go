package function_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/metrics"
	"stampduty/shared/testkit/syncbuf"
)

// TestMeasuredRunWritesWhileItRuns: a scheduled run's metrics are written
// at each multiple of Meter.Every while it runs, not only at its end, so
// that a run Lambda kills at its timeout keeps what it counted before,
// and each write is stamped just before its multiple, in the minute its
// values were counted; the end writes the rest, and nothing is written
// twice.
func TestMeasuredRunWritesWhileItRuns(t *testing.T) {
	const every = 100 * time.Millisecond
	out := &syncbuf.Buffer{}
	m := function.Meter{Namespace: "StampDuty/test", Function: "webhook-dispatch", Out: out, Every: every}
	var duringRun string
	run := function.MeasuredRun(m, func(ctx context.Context, _ json.RawMessage) error {
		metrics.Add(ctx, metrics.EventsRelayed, 1)
		for deadline := time.Now().Add(time.Second); out.String() == "" && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		duringRun = out.String()
		metrics.Add(ctx, metrics.EventsRelayed, 2)
		return nil
	})
	if err := run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if duringRun == "" {
		t.Fatalf("nothing was written while the run ran (%v apart): a killed run would lose it all", every)
	}
	var sum float64
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, line := range lines {
		var rec struct {
			AWS struct{ Timestamp int64 } `json:"_aws"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if periodic := i < len(lines)-1; periodic && (rec.AWS.Timestamp+1)%every.Milliseconds() != 0 {
			t.Errorf("a periodic write stamped %d, want 1 ms before a multiple of %v", rec.AWS.Timestamp, every)
		}
		ps, _, err := metrics.Read([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			for _, v := range p.Values {
				sum += v
			}
		}
	}
	if len(lines) < 2 || sum != 3 {
		t.Errorf("%d lines adding up to %v; want the first value while the run ran, the rest at its end, 3 in all:\n%s", len(lines), sum, out.String())
	}
}
