package main

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func TestCost(t *testing.T) {
	warm := usEast1.perMillion(3420*time.Microsecond, storetest.Capacity{Read: 1, Write: 1.1})
	if warm.BilledMs != 4 {
		t.Errorf("billed %v ms, want 4", warm.BilledMs)
	}
	// 4 ms × 0.125 GB × $0.0000133334 per GB-s × 1e6 requests.
	for name, c := range map[string][2]float64{
		"duration": {warm.Duration, 0.0066667},
		"dynamodb": {warm.DynamoDB, 1*0.125 + 1.1*0.625},
		"total":    {warm.Total(), 1 + 0.2 + 0.0066667 + 0.8125},
	} {
		if math.Abs(c[0]-c[1]) > 1e-6 {
			t.Errorf("%s = %.7f, want %.7f", name, c[0], c[1])
		}
	}
	cold := usEast1.perMillion(7800*time.Microsecond, storetest.Capacity{Read: 2, Write: 2})
	// 8 ms billed: 0.0133334; units 2×0.125 + 2×0.625 = 1.5.
	if got, want := cold.Total(), 1+0.2+0.0133334+1.5; math.Abs(got-want) > 1e-6 {
		t.Errorf("cold total = %.7f, want %.7f", got, want)
	}
	if got, want := blended(warm, cold, 0.01), 0.99*warm.Total()+0.01*cold.Total(); math.Abs(got-want) > 1e-12 {
		t.Errorf("blended = %v, want %v", got, want)
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
pkg: stampduty/shared/rules
BenchmarkCreateOrderRules-2   	  485235	      2463 ns/op	 192.89 MB/s	     992 B/op	       3 allocs/op
PASS
BenchmarkEncodeOrders   	    7560	    137623 ns/op	  114778 B/op	       3 allocs/op
ok  	stampduty/functions/list-orders	2.807s
`
	got, err := parseGoBench(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]float64{
		"BenchmarkCreateOrderRules": {"iterations": 485235, "ns/op": 2463, "B/op": 992, "allocs/op": 3, "MB/s": 192.89},
		"BenchmarkEncodeOrders":     {"iterations": 7560, "ns/op": 137623, "B/op": 114778, "allocs/op": 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDurations(t *testing.T) {
	var d durations
	for i := 10; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if median, least, p90 := d.stats(); median != 5500*time.Microsecond || least != time.Millisecond || p90 != 9*time.Millisecond {
		t.Errorf("median %v, min %v, p90 %v; want 5.5ms, 1ms, 9ms", median, least, p90)
	}
	if got, want := d[:9].median(), 6*time.Millisecond; got != want {
		t.Errorf("median of an odd count = %v, want %v", got, want)
	}
	if d[0] != 10*time.Millisecond {
		t.Error("the sample was sorted in place")
	}
}

func TestTable(t *testing.T) {
	tb := &table{Title: "9. A | title", Header: []string{"name", "what", "n", "µs"}, TextCols: 2}
	tb.add("a|b", "wide text here", "1", "2.5")
	tb.add("ü", "x", "12345", "—")
	tb.note("first note %d", 1)
	tb.note("second")
	t2 := &table{Title: "T", Header: []string{"binary", "bytes"}}
	t2.add("HelloWorld", "5")
	var text, md bytes.Buffer
	for _, tb := range []*table{tb, t2} {
		tb.write(&text, &md)
	}
	t.Run("TextAlignsTextLeftAndFiguresRight", func(t *testing.T) {
		want := "9. A | title\n============\nname  what                n   µs\n--------------------------------\na|b   wide text here      1  2.5\nü     x               12345    —\n  first note 1\n  second\n\n" +
			"T\n=\nbinary      bytes\n-----------------\nHelloWorld      5\n\n"
		if got := text.String(); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("MarkdownEscapesBarsAndListsNotes", func(t *testing.T) {
		want := "#### 9. A | title\n\n| name | what | n | µs |\n|---|---|--:|--:|\n| a\\|b | wide text here | 1 | 2.5 |\n| ü | x | 12345 | — |\n\n- first note 1\n- second\n\n" +
			"#### T\n\n| binary | bytes |\n|---|--:|\n| HelloWorld | 5 |\n\n"
		if got := md.String(); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
}

// TestEveryFunctionIsMeasured: each function of template.yaml with routes
// has a request in the bench (an event of events/ that is one of its
// routes), a warm and a cold row in section 4 and a row in section 5 of the
// report, as step 6 of the README's "Adding an endpoint" asks; each
// scheduled function (no route) has a label in scheduledLabels, a cold start
// in section 1 and rows in sections 6, 7 and 8. No build and no database:
// the sections are made of made-up figures.
func TestEveryFunctionIsMeasured(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{orders: 7 * listPageSize, reqs: requests(7), init: map[string]durations{}, first: map[string]durations{}}
	if b.tmpl, err = samtemplate.Load(filepath.Join(root, "template.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := load(root, b.tmpl, b.reqs); err != nil {
		t.Fatal(err)
	}
	calls := [][]storetest.ProxyCall{{{Operation: "GetItem", Table: "T", Accounted: true}}}
	for _, r := range b.reqs {
		b.rows = append(b.rows, row{Name: r.rowName("warm"), Wall: durations{time.Millisecond}, Requests: calls})
	}
	for fn, r := range firsts(b.reqs) {
		b.rows = append(b.rows, row{Name: r.rowName("cold"), Cold: true, Requests: calls})
		b.init[fn], b.first[fn] = durations{time.Millisecond}, durations{time.Millisecond}
	}
	dynamo, err := b.dynamoTable()
	if err != nil {
		t.Fatal(err)
	}
	cost, err := b.costTable()
	if err != nil {
		t.Fatal(err)
	}
	b.names = append(b.names, helloID)
	for _, f := range b.tmpl.Functions {
		b.names = append(b.names, f.LogicalID)
		b.init[f.LogicalID], b.first[f.LogicalID] = durations{time.Millisecond}, durations{time.Millisecond}
	}
	b.init[helloID], b.first[helloID] = durations{time.Millisecond}, durations{time.Millisecond}
	one := perEvent{Kinds: []string{"GetItem T"}, By: map[string]usage{"GetItem T": {1, 1, 0}}}
	b.dispatch = dispatchResults{Steps: map[string]perEvent{}, Wall: map[string]time.Duration{}, Events: 1, Latency: durations{time.Second}, PollsPerSecond: 1}
	for _, s := range stepOrder {
		b.dispatch.Steps[s] = one
	}
	var scheduled []*table // sections 1, 6, 7, 8
	for _, section := range []func() (*table, error){b.coldTable, b.eventTable, b.eventCostTable, b.latencyTable} {
		tb, err := section()
		if err != nil {
			t.Fatal(err)
		}
		scheduled = append(scheduled, tb)
	}
	for _, f := range b.tmpl.Functions {
		t.Run(f.LogicalID, func(t *testing.T) {
			if len(f.Routes) == 0 {
				label, ok := scheduledLabels[f.LogicalID]
				if !ok && !coldOnly[f.LogicalID] || len(f.Schedules) == 0 {
					t.Fatalf("a function without routes, with schedules %v, that the bench does not measure (scheduledLabels)", f.Schedules)
				}
				if ev, err := b.scheduledEvent(f.LogicalID); err != nil || !strings.Contains(string(ev), `"Scheduled Event"`) {
					t.Errorf("section 1's event of %s: %s, %v", f.LogicalID, ev, err)
				}
				if !hasRow(scheduled[0], func(name string) bool { return name == f.LogicalID }) {
					t.Errorf("section 1 has no cold start of %s", f.LogicalID)
				}
				if coldOnly[f.LogicalID] {
					return
				}
				for _, tb := range scheduled[1:] {
					if !hasRow(tb, func(name string) bool { return strings.HasPrefix(name, label+": ") }) {
						t.Errorf("%s has no row of %s (%q)", tb.Title, f.LogicalID, label)
					}
				}
				return
			}
			rows := map[string][]string{} // the names of its warm and cold rows
			for _, r := range b.reqs {
				if r.Function != f.LogicalID {
					continue
				}
				if !slices.ContainsFunc(f.Routes, func(rt samtemplate.Route) bool { return rt.Key() == r.ev.RouteKey }) {
					t.Errorf("events/%s.json is %s, no route of %s", r.Event, r.ev.RouteKey, f.LogicalID)
				}
				for _, kind := range []string{"warm", "cold"} {
					rows[kind] = append(rows[kind], r.rowName(kind))
				}
			}
			for _, kind := range []string{"warm", "cold"} {
				if !hasRow(dynamo, func(name string) bool { return slices.Contains(rows[kind], name) }) {
					t.Errorf("section 4 has no %s row of %s", kind, f.LogicalID)
				}
			}
			if !hasRow(cost, func(endpoint string) bool {
				return slices.ContainsFunc(f.Routes, func(rt samtemplate.Route) bool { return strings.HasPrefix(endpoint, rt.Key()+" ") })
			}) {
				t.Errorf("section 5 has no row of %s (named for one of its routes %+v)", f.LogicalID, f.Routes)
			}
		})
	}
}

// hasRow reports whether some row of t has a first cell that matches.
func hasRow(t *table, match func(string) bool) bool {
	return slices.ContainsFunc(t.Rows, func(r []string) bool { return match(r[0]) })
}

// TestOrderRequests: the requests that name an order name the dev caller's
// orders, in the path of their route; a request that changes its order
// names another each time, and says so when none is left.
func TestOrderRequests(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := requests(7)
	if err := load(root, tmpl, reqs); err != nil {
		t.Fatal(err)
	}
	refs := []orderRef{{"d0", "f0"}, {"d1", "f1"}, {"d2", "f2"}}
	named := 0
	for _, r := range reqs {
		if r.Order == nil {
			continue
		}
		named++
		seen := map[string]bool{}
		for i := range len(refs) {
			data, err := r.event(refs, i)
			if err != nil {
				t.Fatalf("%s %d: %v", r.Row, i, err)
			}
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(data, &ev); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(ev.RawQueryString, "documentId") { // the filtered list: the ids are in the query
				q, err := url.ParseQuery(ev.RawQueryString)
				if err != nil || len(q) != filteredOrders || ev.PathParameters != nil || !strings.HasPrefix(q.Get("filters[documentId][$in][0]"), "d") {
					t.Errorf("%s %d: query %s (%v), path parameters %v", r.Row, i, ev.RawQueryString, err, ev.PathParameters)
				}
				continue
			}
			method, route, _ := strings.Cut(ev.RouteKey, " ")
			want := strings.ReplaceAll(route, "{documentId}", ev.PathParameters["documentId"])
			want = strings.ReplaceAll(want, "{fulfillmentDocumentId}", ev.PathParameters["fulfillmentDocumentId"])
			if ev.RawPath != want || ev.RequestContext.HTTP.Path != want || ev.RequestContext.HTTP.Method != method || strings.Contains(want, "{") {
				t.Errorf("%s %d: %s %s (context %s %s), want %s %s", r.Row, i, method, ev.RawPath,
					ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path, method, want)
			}
			if !slices.Contains([]string{"d0", "d1", "d2"}, ev.PathParameters["documentId"]) {
				t.Errorf("%s %d: names %v, none of the caller's orders", r.Row, i, ev.PathParameters)
			}
			seen[ev.RawPath] = true
		}
		if r.Function == "OpsFunction" && r.ev.RequestContext.Authorizer == nil {
			t.Errorf("%s: no IAM authorizer, which the ops function requires", r.Row)
		}
		if strings.Contains(r.ev.RouteKey, "fulfillments") {
			if len(seen) != len(refs) {
				t.Errorf("%s: %d requests named %d orders, want each its own", r.Row, len(refs), len(seen))
			}
			if _, err := r.event(refs, len(refs)); err == nil {
				t.Errorf("%s: request %d of %d orders: no error", r.Row, len(refs)+1, len(refs))
			}
		}
	}
	if named < 4 {
		t.Errorf("%d requests name an order, want get-order, upload-document, ops get-order and ops status change", named)
	}
}
