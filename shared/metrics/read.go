package metrics

import (
	"encoding/json"
	"fmt"
)

// Point is one metric's values as an EMF record carries them.
type Point struct {
	Namespace  string
	Name       Name
	Unit       Unit
	Dimensions map[string]string
	Values     []float64
}

// Read returns the points of one log line when it is an EMF record, and
// false when it is any other line. It is the inverse of Flush, for those
// who read the log as CloudWatch does: the tests, and the local stack's
// summary.
func Read(line []byte) ([]Point, bool, error) {
	var rec map[string]json.RawMessage
	if json.Unmarshal(line, &rec) != nil {
		return nil, false, nil
	}
	raw, ok := rec["_aws"]
	if !ok {
		return nil, false, nil
	}
	var meta struct {
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct {
				Name string
				Unit Unit
			}
		}
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, true, fmt.Errorf("metrics: reading an EMF record's _aws: %w", err)
	}
	var points []Point
	for _, dir := range meta.CloudWatchMetrics {
		dims := map[string]string{}
		for _, set := range dir.Dimensions {
			for _, d := range set {
				var v string
				if err := json.Unmarshal(rec[d], &v); err != nil {
					return nil, true, fmt.Errorf("metrics: dimension %s of an EMF record: %w", d, err)
				}
				dims[d] = v
			}
		}
		for _, m := range dir.Metrics {
			p := Point{Namespace: dir.Namespace, Name: Name(m.Name), Unit: m.Unit, Dimensions: dims}
			var one float64
			if err := json.Unmarshal(rec[m.Name], &one); err == nil {
				p.Values = []float64{one}
			} else if err := json.Unmarshal(rec[m.Name], &p.Values); err != nil {
				return nil, true, fmt.Errorf("metrics: the value of %s in an EMF record: %w", m.Name, err)
			}
			points = append(points, p)
		}
	}
	return points, true, nil
}
