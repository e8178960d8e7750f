// Package metrics is the service's metrics: their names in one place
// (names.go) and a Set that gathers one invocation's values and writes
// them to the log in CloudWatch's embedded metric format (EMF): one JSON
// line per group of dimension values, which CloudWatch Logs turns into
// metrics with no API call and no added latency. It imports no AWS
// package: the format is JSON, and the log is the function's standard
// output.
package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// maxValues is how many values one metric may carry in one EMF record.
const maxValues = 100

// Set gathers metrics until Flush writes them. Counts are summed; other
// units keep each value (CloudWatch computes their percentiles). A Set is
// safe for concurrent use.
type Set struct {
	fixed map[string]string

	mu     sync.Mutex
	groups map[string]*group
	order  []string
}

// group is the values of one set of dimension values.
type group struct {
	dims    []string
	values  map[string]string
	metrics map[Name][]float64
	names   []Name
}

// NewSet returns an empty Set whose metrics take the dimension values
// fixed (FunctionName: the function's name) wherever they are declared
// with those dimensions.
func NewSet(fixed map[string]string) *Set {
	return &Set{fixed: fixed, groups: map[string]*group{}}
}

// Add records value for the metric name, with values for its declared
// dimensions other than the fixed ones, in the order declared (an absent
// value is ""). A metric not declared in Defs is still written, with no
// dimension and no unit, so that the test that reads the log finds it.
func (s *Set) Add(name Name, value float64, dims ...string) {
	def, ok := Lookup(name)
	if !ok {
		def = Def{Name: name}
	}
	values := make(map[string]string, len(def.Dimensions))
	var key strings.Builder
	key.WriteString(strings.Join(def.Dimensions, ","))
	for _, d := range def.Dimensions {
		v, fixed := s.fixed[d]
		if !fixed {
			if len(dims) > 0 {
				v, dims = dims[0], dims[1:]
			}
		}
		values[d] = v
		key.WriteString("\x00" + v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[key.String()]
	if !ok {
		g = &group{dims: def.Dimensions, values: values, metrics: map[Name][]float64{}}
		s.groups[key.String()] = g
		s.order = append(s.order, key.String())
	}
	if _, seen := g.metrics[name]; !seen {
		g.names = append(g.names, name)
	}
	if def.Unit == Count && len(g.metrics[name]) == 1 {
		g.metrics[name][0] += value
		return
	}
	g.metrics[name] = append(g.metrics[name], value)
}

// Flush writes what the Set holds to w as EMF records in namespace, one
// line each, stamped now, and empties the Set. An empty namespace writes
// nothing (metrics are off).
func (s *Set) Flush(w io.Writer, namespace string, now time.Time) error {
	s.mu.Lock()
	groups, order := s.groups, s.order
	s.groups, s.order = map[string]*group{}, nil
	s.mu.Unlock()
	if namespace == "" {
		return nil
	}
	for _, k := range order {
		g := groups[k]
		for first := true; first || g.more(); first = false {
			line, err := g.record(namespace, now)
			if err != nil {
				return err
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return fmt.Errorf("metrics: writing a record: %w", err)
			}
		}
	}
	return nil
}

// more reports whether values remain after a record took its share.
func (g *group) more() bool {
	for _, v := range g.metrics {
		if len(v) > 0 {
			return true
		}
	}
	return false
}

// record makes one EMF record of the group, taking up to maxValues values
// of each metric.
func (g *group) record(namespace string, now time.Time) ([]byte, error) {
	dims := make([]Dimension, len(g.dims))
	for i, d := range g.dims {
		dims[i] = Dimension{d, g.values[d]}
	}
	var values []Value
	for _, n := range g.names {
		vs := g.metrics[n]
		if len(vs) == 0 {
			continue
		}
		take := min(len(vs), maxValues)
		def, _ := Lookup(n)
		values = append(values, Value{Name: n, Unit: def.Unit, Values: vs[:take]})
		g.metrics[n] = vs[take:]
	}
	return Record(namespace, dims, values, now)
}

// Dimension is a dimension's name and value in a Record.
type Dimension struct{ Name, Value string }

// Value is a metric's values in a Record (at most 100; one is written as a
// number).
type Value struct {
	Name   Name
	Unit   Unit
	Values []float64
}

// Record encodes one EMF record, without its newline: values of metrics
// in namespace, with dims as its one dimension set, stamped at. It is the
// format's one writer: the Set's, and the local stack's twins of the
// metrics AWS publishes itself (AWS/Lambda, AWS/ApiGateway), whose names
// are not the service's.
func Record(namespace string, dims []Dimension, values []Value, at time.Time) ([]byte, error) {
	type metric struct {
		Name string `json:"Name"`
		Unit Unit   `json:"Unit,omitempty"`
	}
	type directive struct {
		Namespace  string     `json:"Namespace"`
		Dimensions [][]string `json:"Dimensions"`
		Metrics    []metric   `json:"Metrics"`
	}
	rec := map[string]any{}
	dir := directive{Namespace: namespace, Dimensions: [][]string{{}}}
	for _, d := range dims {
		rec[d.Name] = d.Value
		dir.Dimensions[0] = append(dir.Dimensions[0], d.Name)
	}
	for _, v := range values {
		dir.Metrics = append(dir.Metrics, metric{Name: string(v.Name), Unit: v.Unit})
		if len(v.Values) == 1 {
			rec[string(v.Name)] = v.Values[0]
		} else {
			rec[string(v.Name)] = v.Values
		}
	}
	rec["_aws"] = map[string]any{
		"Timestamp":         at.UnixMilli(),
		"CloudWatchMetrics": []directive{dir},
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("metrics: encoding a record: %w", err)
	}
	return line, nil
}

type setKey struct{}

// With returns ctx carrying s, for Add.
func With(ctx context.Context, s *Set) context.Context {
	return context.WithValue(ctx, setKey{}, s)
}

// From returns the Set ctx carries, or nil.
func From(ctx context.Context) *Set {
	s, _ := ctx.Value(setKey{}).(*Set)
	return s
}

// Add records value for the metric name in the Set ctx carries (see
// Set.Add); without one it does nothing, so a workflow records its
// metrics whoever calls it.
func Add(ctx context.Context, name Name, value float64, dims ...string) {
	if s := From(ctx); s != nil {
		s.Add(name, value, dims...)
	}
}
