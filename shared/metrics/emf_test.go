package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFlush(t *testing.T) {
	now := time.UnixMilli(1_790_000_000_000)
	fixed := map[string]string{FunctionName: "create-order"}

	t.Run("counts of one dimension value are summed into one record", func(t *testing.T) {
		s := NewSet(fixed)
		s.Add(OrdersCreated, 1, "MH")
		s.Add(OrdersCreated, 2, "MH")
		s.Add(OrdersCreated, 1, "KA")
		points := flush(t, s, now)
		if got, want := len(points), 2; got != want {
			t.Fatalf("%d points; want %d: %+v", got, want, points)
		}
		if got, want := points[0].Values, []float64{3}; !slices.Equal(got, want) {
			t.Errorf("MH values = %v; want %v", got, want)
		}
		if got, want := points[0].Dimensions, map[string]string{State: "MH"}; !maps.Equal(got, want) {
			t.Errorf("dimensions = %v; want %v", got, want)
		}
	})

	t.Run("a fixed dimension is filled from the Set", func(t *testing.T) {
		s := NewSet(fixed)
		s.Add(Latency, 12.5)
		s.Add(Latency, 40)
		points := flush(t, s, now)
		if got, want := points[0].Dimensions[FunctionName], "create-order"; got != want {
			t.Errorf("FunctionName = %q; want %q", got, want)
		}
		if got, want := points[0].Values, []float64{12.5, 40}; !slices.Equal(got, want) {
			t.Errorf("latencies = %v; want each value kept: %v", got, want)
		}
		if got, want := points[0].Unit, Milliseconds; got != want {
			t.Errorf("unit = %q; want %q", got, want)
		}
	})

	t.Run("more than 100 values of a metric take more than one record", func(t *testing.T) {
		s := NewSet(fixed)
		for i := range 150 {
			s.Add(Latency, float64(i))
		}
		var buf bytes.Buffer
		if err := s.Flush(&buf, "StampDuty/test", now); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if got, want := len(lines), 2; got != want {
			t.Fatalf("%d lines; want %d", got, want)
		}
		var n int
		for _, l := range lines {
			ps, _, err := Read([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			if len(ps[0].Values) > maxValues {
				t.Errorf("a record carries %d values; EMF takes at most %d", len(ps[0].Values), maxValues)
			}
			n += len(ps[0].Values)
		}
		if got, want := n, 150; got != want {
			t.Errorf("%d values in all; want %d", got, want)
		}
	})

	t.Run("a record is CloudWatch's embedded metric format", func(t *testing.T) {
		s := NewSet(fixed)
		s.Add(Quotes, 1)
		var buf bytes.Buffer
		if err := s.Flush(&buf, "StampDuty/test", now); err != nil {
			t.Fatal(err)
		}
		var rec struct {
			AWS struct {
				Timestamp         int64
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name, Unit string }
				}
			} `json:"_aws"`
			Quotes float64
		}
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if got, want := rec.AWS.Timestamp, now.UnixMilli(); got != want {
			t.Errorf("Timestamp = %d; want %d", got, want)
		}
		d := rec.AWS.CloudWatchMetrics[0]
		if d.Namespace != "StampDuty/test" || d.Dimensions == nil || len(d.Dimensions) != 1 || len(d.Dimensions[0]) != 0 ||
			len(d.Metrics) != 1 || d.Metrics[0].Name != "Quotes" || d.Metrics[0].Unit != "Count" || rec.Quotes != 1 {
			t.Errorf("record = %s", buf.String())
		}
	})

	t.Run("no namespace writes nothing, and a flush empties the Set", func(t *testing.T) {
		s := NewSet(fixed)
		s.Add(Quotes, 1)
		var buf bytes.Buffer
		if err := s.Flush(&buf, "", now); err != nil || buf.Len() != 0 {
			t.Errorf("Flush with no namespace wrote %q, %v", buf.String(), err)
		}
		s.Add(Quotes, 1)
		_ = s.Flush(&buf, "ns", now)
		buf.Reset()
		_ = s.Flush(&buf, "ns", now)
		if buf.Len() != 0 {
			t.Errorf("a second flush wrote %q; want nothing", buf.String())
		}
	})

	t.Run("Add without a Set in the context does nothing", func(t *testing.T) {
		Add(context.Background(), Quotes, 1)
		s := NewSet(fixed)
		Add(With(context.Background(), s), Quotes, 1)
		if got := len(flush(t, s, now)); got != 1 {
			t.Errorf("%d points; want 1", got)
		}
	})
}

func TestRead(t *testing.T) {
	for _, line := range []string{`{"level":"INFO","msg":"request"}`, `not json`, ``} {
		if _, ok, err := Read([]byte(line)); ok || err != nil {
			t.Errorf("Read(%q) = %v, %v; want not a record", line, ok, err)
		}
	}
}

func TestDefsAreDeclaredOnce(t *testing.T) {
	seen := map[Name]bool{}
	for _, d := range Defs {
		if seen[d.Name] {
			t.Errorf("%s is declared twice", d.Name)
		}
		seen[d.Name] = true
		if d.Unit == "" {
			t.Errorf("%s has no unit", d.Name)
		}
	}
}

func flush(t *testing.T, s *Set, now time.Time) []Point {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Flush(&buf, "StampDuty/test", now); err != nil {
		t.Fatal(err)
	}
	var all []Point
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		ps, ok, err := Read([]byte(l))
		if !ok || err != nil {
			t.Fatalf("line %q: %v, %v", l, ok, err)
		}
		all = append(all, ps...)
	}
	return all
}
