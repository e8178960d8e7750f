// Package localmetrics is the local stack's CloudWatch for the functions'
// metrics: it reads the embedded-metric-format lines the functions write to
// their logs (as CloudWatch Logs does on AWS), keeps the last hour of
// points, and summarises them over the last minutes by metric and
// dimensions, with the statistics the dashboard shows (sum; samples, p50,
// p90, p99 and maximum of timings). `make local` serves the summary at
// Path and `stampctl metrics` prints it.
package localmetrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"stampduty/shared/metrics"
)

// Path is where the local stack serves the summary: GET
// Path?minutes=N (5 when absent).
const Path = "/_local/metrics"

// keep is how long points are kept.
const keep = time.Hour

// Recorder keeps the metrics of the log lines written to it.
type Recorder struct {
	now func() time.Time

	mu     sync.Mutex
	points []point
	buf    []byte
}

type point struct {
	at time.Time
	metrics.Point
}

// New returns an empty Recorder on the clock now (time.Now when nil).
func New(now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	return &Recorder{now: now}
}

// Tee returns a writer that copies every write to out and reads each
// whole line for EMF records: the function's lines as the local Lambda
// runtime prefixes them ("[CreateOrderFunction] {...}"), or bare.
func (r *Recorder) Tee(out io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		r.read(p)
		return out.Write(p)
	})
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// read adds the records of p's whole lines, keeping a partial line for
// the next write.
func (r *Recorder) read(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	now := r.now()
	for {
		line, rest, ok := bytes.Cut(r.buf, []byte{'\n'})
		if !ok {
			break
		}
		r.buf = rest
		if i := bytes.IndexByte(line, '{'); i >= 0 {
			line = line[i:]
		}
		ps, ok, err := metrics.Read(line)
		if !ok || err != nil {
			continue
		}
		for _, p := range ps {
			r.points = append(r.points, point{at: now, Point: p})
		}
	}
	r.buf = slices.Clip(r.buf)
	cut := now.Add(-keep)
	if i := slices.IndexFunc(r.points, func(p point) bool { return !p.at.Before(cut) }); i > 0 {
		r.points = slices.Delete(r.points, 0, i)
	}
}

// Row is one metric's summary over a span, for one set of dimension
// values.
type Row struct {
	Namespace  string            `json:"namespace"`
	Metric     string            `json:"metric"`
	Unit       string            `json:"unit,omitempty"`
	Dimensions map[string]string `json:"dimensions"`
	// Samples is how many values were written (for a count, how many
	// records: a function sums its counts per invocation).
	Samples int     `json:"samples"`
	Sum     float64 `json:"sum"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// Summary is the metrics of the span's points, by namespace, metric and
// dimensions, sorted so.
func (r *Recorder) Summary(span time.Duration) []Row {
	r.mu.Lock()
	since := r.now().Add(-span)
	byKey := map[string]*Row{}
	values := map[string][]float64{}
	for _, p := range r.points {
		if p.at.Before(since) {
			continue
		}
		k := key(p.Point)
		if _, ok := byKey[k]; !ok {
			byKey[k] = &Row{Namespace: p.Namespace, Metric: string(p.Name), Unit: string(p.Unit), Dimensions: p.Dimensions}
		}
		values[k] = append(values[k], p.Values...)
	}
	r.mu.Unlock()
	rows := make([]Row, 0, len(byKey))
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		row, vs := byKey[k], values[k]
		slices.Sort(vs)
		row.Samples = len(vs)
		for _, v := range vs {
			row.Sum += v
		}
		row.P50, row.P90, row.P99, row.Max = rank(vs, 50), rank(vs, 90), rank(vs, 99), vs[len(vs)-1]
		rows = append(rows, *row)
	}
	return rows
}

// key orders and groups points: namespace, metric, then the dimensions.
func key(p metrics.Point) string {
	var b strings.Builder
	b.WriteString(p.Namespace + "\x00" + string(p.Name))
	for _, d := range slices.Sorted(maps.Keys(p.Dimensions)) {
		b.WriteString("\x00" + d + "=" + p.Dimensions[d])
	}
	return b.String()
}

// rank is the nearest-rank percentile pc of the sorted values vs.
func rank(vs []float64, pc float64) float64 {
	i := int(math.Ceil(pc/100*float64(len(vs)))) - 1
	return vs[max(i, 0)]
}

// ServeHTTP answers GET Path?minutes=N with the Summary of the last N
// minutes (1 to 60; 5 when absent) as JSON: {"minutes": N, "data": [Row]}.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	minutes := 5
	if s := req.URL.Query().Get("minutes"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 60 {
			http.Error(w, "minutes must be a whole number from 1 to 60", http.StatusBadRequest)
			return
		}
		minutes = n
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		Minutes int   `json:"minutes"`
		Data    []Row `json:"data"`
	}{minutes, r.Summary(time.Duration(minutes) * time.Minute)})
}

// Dims writes a row's dimensions as Name=value pairs, sorted, or "-".
func (row Row) Dims() string {
	if len(row.Dimensions) == 0 {
		return "-"
	}
	var parts []string
	for _, d := range slices.Sorted(maps.Keys(row.Dimensions)) {
		parts = append(parts, fmt.Sprintf("%s=%s", d, row.Dimensions[d]))
	}
	return strings.Join(parts, ",")
}
