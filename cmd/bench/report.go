package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// table is one section of the report: a title, a header, rows of cells and
// notes printed under it. The first TextCols columns (at least 1) are text,
// the others figures.
type table struct {
	Title    string
	Header   []string
	Rows     [][]string
	Notes    []string
	TextCols int
}

func (t *table) add(cells ...string) { t.Rows = append(t.Rows, cells) }
func (t *table) note(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// write writes t to text as an aligned table (the text columns left
// aligned, the others right aligned) and to md as a Markdown table under a
// level-4 heading, with the notes under each.
func (t *table) write(text, md io.Writer) {
	rows := append([][]string{t.Header}, t.Rows...)
	widths := make([]int, len(t.Header))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	fmt.Fprintf(text, "%s\n%s\n", t.Title, strings.Repeat("=", utf8.RuneCountInString(t.Title)))
	fmt.Fprintf(md, "#### %s\n\n", t.Title)
	for k, row := range rows {
		cells, escaped, align := make([]string, len(row)), make([]string, len(row)), make([]string, len(row))
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			cells[i], escaped[i], align[i] = pad+c, strings.ReplaceAll(c, "|", `\|`), "--:"
			if i < max(1, t.TextCols) {
				cells[i], align[i] = c+pad, "---"
			}
		}
		line := strings.Join(cells, "  ")
		fmt.Fprintf(text, "%s\n", strings.TrimRight(line, " "))
		fmt.Fprintf(md, "| %s |\n", strings.Join(escaped, " | "))
		if k == 0 {
			fmt.Fprintf(text, "%s\n", strings.Repeat("-", utf8.RuneCountInString(line)))
			fmt.Fprintf(md, "|%s|\n", strings.Join(align, "|"))
		}
	}
	for _, n := range t.Notes {
		fmt.Fprintf(text, "  %s\n", n)
	}
	if len(t.Notes) > 0 {
		fmt.Fprintf(md, "\n- %s\n", strings.Join(t.Notes, "\n- "))
	}
	fmt.Fprintln(text)
	fmt.Fprintln(md)
}

// durations is a sample of durations.
type durations []time.Duration

// stats returns the median (the mean of the two middle values for an even
// count), the minimum and the 90th percentile by the nearest-rank method;
// zeros for an empty sample. d keeps its order.
func (d durations) stats() (median, least, p90 time.Duration) {
	s := slices.Sorted(slices.Values(d))
	n := len(s)
	if n == 0 {
		return 0, 0, 0
	}
	return (s[(n-1)/2] + s[n/2]) / 2, s[0], s[int(math.Ceil(0.9*float64(n)))-1]
}

func (d durations) median() time.Duration {
	m, _, _ := d.stats()
	return m
}

// ms formats a duration in milliseconds with two decimals, dollars an
// amount with four.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
func dollars(v float64) string  { return fmt.Sprintf("$%.4f", v) }

// num formats a float with up to prec decimals, trailing zeros dropped.
func num(v float64, prec int) string {
	s := fmt.Sprintf("%.*f", prec, v)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// ratio formats v/of with two decimals, "—" when of is 0.
func ratio(v, of float64) string {
	if of == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", v/of)
}

// coldTable is section 1.
func (b *bench) coldTable() (*table, error) {
	t := &table{
		Title: "1. Cold start (this host, release flags)",
		Header: []string{"binary", "init median", "init min", "init p90", "× hello init",
			"1st invoke median", "1st invoke min", "1st invoke p90", "init+1st median"},
	}
	hello := b.init[helloID].median()
	for _, n := range b.names {
		im, imin, ip90 := b.init[n].stats()
		fm, fmin, fp90 := b.first[n].stats()
		t.add(n, ms(im), ms(imin), ms(ip90), ratio(float64(im), float64(hello)), ms(fm), ms(fmin), ms(fp90), ms(b.coldTotal(n)))
	}
	t.note("milliseconds; %d fresh starts per binary, round-robin over the binaries after one unrecorded warm-up round", b.starts)
	t.note("init = process start → first /invocation/next (Lambda's Init Duration); 1st invoke = wall time of the first request through the local Runtime API, against dynalite")
	t.note("requests: create-order Affidavit/Karnataka amount 20 with the dev token; list-orders page 1; list-articles page 1; get-order and upload-document (a 47-byte PDF) of an order the dev caller is given before this section; the ops queue, status Pending, pageSize %d; %s its Scheduled Event, with a deadline that leaves room for one pass (its 1st invoke: one relay and delivery pass over empty tables); hello any event", listPageSize, dispatchID)
	return t, nil
}

// row returns the section 4 row of the given name.
func (b *bench) row(name string) row {
	for _, r := range b.rows {
		if r.Name == name {
			return r
		}
	}
	return row{Name: name}
}

// sizeTable is section 2: the size of each linux/arm64 binary in bytes, MiB
// and as a multiple of hello-world's.
func (b *bench) sizeTable() (*table, error) {
	t := &table{Title: "2. Binary size (linux/arm64, release flags)", Header: []string{"binary", "bytes", "MiB", "× hello"}}
	size := map[string]int64{}
	for _, n := range b.names {
		fi, err := os.Stat(b.arm[n])
		if err != nil {
			return nil, fmt.Errorf("size of %s: %w", n, err)
		}
		size[n] = fi.Size()
	}
	for _, n := range b.names {
		t.add(n, fmt.Sprint(size[n]), fmt.Sprintf("%.2f", float64(size[n])/(1<<20)), ratio(float64(size[n]), float64(size[helloID])))
	}
	t.note(`GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags "-s -w" (functions by their Makefile targets)`)
	return t, nil
}

// perRequest returns the mean calls, dynalite capacity and DynamoDB
// capacity per request, and whether every call was accounted.
func (r row) perRequest() (calls float64, dyn, ddb storetest.Capacity, complete bool) {
	n := float64(len(r.Requests))
	if n == 0 {
		return 0, dyn, ddb, false
	}
	complete = true
	for _, req := range r.Requests {
		calls += float64(len(req))
		for _, c := range req {
			dyn, ddb = dyn.Add(c.Consumed), ddb.Add(c.Billed)
			complete = complete && c.Accounted
		}
	}
	return calls / n, storetest.Capacity{Read: dyn.Read / n, Write: dyn.Write / n}, storetest.Capacity{Read: ddb.Read / n, Write: ddb.Write / n}, complete
}

// pattern describes the calls per request, e.g. "Query OrdersTable ×2 +
// PutItem OrdersTable ×1 + UpdateItem CountersTable ×0.1".
func (r row) pattern() string {
	if len(r.Requests) == 0 {
		return "—"
	}
	counts := map[string]float64{}
	var parts []string
	for _, req := range r.Requests {
		for _, c := range req {
			k := c.Operation + " " + c.Table
			if c.ErrType != "" {
				k += " (" + c.ErrType + ")"
			}
			if counts[k]++; counts[k] == 1 {
				parts = append(parts, k)
			}
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	for i, k := range parts {
		parts[i] = fmt.Sprintf("%s ×%s", k, num(counts[k]/float64(len(r.Requests)), 2))
	}
	return strings.Join(parts, " + ")
}

// dynamoTable is section 4.
func (b *bench) dynamoTable() (*table, error) {
	t := &table{
		Title: "4. DynamoDB calls and capacity units per request (dynalite, measured at the wire)",
		Header: []string{"request", "DynamoDB calls per request", "calls", "warm wall median ms",
			"RCU dynalite", "WCU dynalite", "RCU DynamoDB rules", "WCU DynamoDB rules"},
		TextCols: 2,
	}
	var notes []string             // the rows' notes, each once
	noted := map[string][]string{} // the rows of each
	for _, r := range b.rows {
		if r.Note != "" {
			if noted[r.Note] == nil {
				notes = append(notes, r.Note)
			}
			noted[r.Note] = append(noted[r.Note], r.Name)
		}
		calls, dyn, ddb, complete := r.perRequest()
		wall, rcu, wcu := ms(r.Wall.median()), num(ddb.Read, 3), num(ddb.Write, 3)
		if r.Cold {
			wall = "—"
		}
		if !complete {
			rcu, wcu = "?", "?"
		}
		t.add(r.Name, r.pattern(), num(calls, 2), wall, num(dyn.Read, 3), num(dyn.Write, 3), rcu, wcu)
	}
	t.note("the caller has %d orders (%s)", b.orders, b.filled)
	t.note("warm rows: %d timed requests (wall time: the invocation through the local Runtime API, its DynamoDB calls through the measuring proxy included), then %d requests whose units are computed; cold rows: %d fresh instances, first request", timedRequests, accountedRequests, coldSamples)
	t.note("units and calls are means per request (create-order reserves %d ids, %d orders' worth, with one UpdateItem)", store.IDBlock, store.IDBlock/3)
	t.note("RCU/WCU dynalite: what dynalite reports with ReturnConsumedCapacity TOTAL (the proxy asks for it)")
	t.note("RCU/WCU DynamoDB rules: computed from item sizes (DynamoDB's formula): reads ceil(bytes read / 4 KB) per call, at least 1, ×0.5 if eventually consistent, whatever the projection; writes ceil(max(old, new item) / 1 KB), at least 1, also when the condition fails")
	t.note("index writes: dynalite reports the table's write only; the DynamoDB-rules columns add each global secondary index entry a write makes (OrdersTable's by-document-keys and queue-shards, projection KEYS_ONLY: a keys-sized entry put with the order, a delete and a put when a write moves it to another queue shard, nothing otherwise; its outbox, projection ALL, the item's size again while events are pending)")
	for _, n := range notes {
		t.note("%s: %s", strings.Join(noted[n], "; "), n)
	}
	t.note("order item size (DynamoDB's formula): typical %d bytes (the create-order request above), max-length %d bytes (every field at its bound, purpose and purchasedBy in 4-byte characters)", b.typicalOrderBytes, b.maxOrderBytes)
	return t, nil
}

// prices are list prices in US dollars: HTTP API and Lambda per million
// requests, Lambda (arm64) per GB-second at MemoryGB, DynamoDB on-demand per
// million read and write request units.
type prices struct{ HTTPAPI, LambdaRequests, GBSecond, MemoryGB, ReadUnits, WriteUnits float64 }

// usEast1 are us-east-1 list prices as of pricesDate (DynamoDB's after the
// November 2024 price cut), at 128 MB; coldShare is the share of requests
// assumed to be cold starts.
var usEast1 = prices{HTTPAPI: 1.00, LambdaRequests: 0.20, GBSecond: 0.0000133334, MemoryGB: 0.125, ReadUnits: 0.125, WriteUnits: 0.625}

const (
	pricesDate = "2024-11-01"
	coldShare  = 0.01
)

// cost is the cost of a million requests, by part, in US dollars.
type cost struct{ BilledMs, HTTPAPI, Requests, Duration, DynamoDB float64 }

func (c cost) Total() float64 { return c.HTTPAPI + c.Requests + c.Duration + c.DynamoDB }

// perMillion returns the cost of a million requests that each run for d
// (billed per started millisecond) and consume u DynamoDB request units.
func (p prices) perMillion(d time.Duration, u storetest.Capacity) cost {
	billed := math.Ceil(float64(d) / float64(time.Millisecond))
	return cost{
		BilledMs: billed,
		HTTPAPI:  p.HTTPAPI,
		Requests: p.LambdaRequests,
		Duration: billed / 1000 * p.MemoryGB * p.GBSecond * 1e6,
		DynamoDB: u.Read*p.ReadUnits + u.Write*p.WriteUnits,
	}
}

// blended returns the cost of a million requests of which the share cold
// are cold starts.
func blended(warm, cold cost, share float64) float64 {
	return (1-share)*warm.Total() + share*cold.Total()
}

// costTable is section 5: a row per request, warm with its warm row of
// section 4, cold with its function's cold starts (section 1) and cold row.
func (b *bench) costTable() (*table, error) {
	p := usEast1
	t := &table{
		Title: "5. Cost per million requests (US$, us-east-1)",
		Header: []string{"endpoint", "warm ms billed", "HTTP API", "Lambda requests", "Lambda duration", "DynamoDB",
			"total, all warm", "cold ms billed", "total, all cold", fmt.Sprintf("total, %g%% cold", coldShare*100)},
	}
	first := firsts(b.reqs)
	for _, r := range b.reqs {
		wr, cr := b.row(r.rowName("warm")), b.row(first[r.Function].rowName("cold"))
		_, _, wu, wok := wr.perRequest()
		_, _, cu, cok := cr.perRequest()
		if !wok || !cok {
			return nil, fmt.Errorf("section 4 has no row %q or %q whose DynamoDB calls are all accounted by DynamoDB's rules", r.rowName("warm"), cr.Name)
		}
		coldDur := b.coldTotal(r.Function)
		w, c := p.perMillion(wr.Wall.median(), wu), p.perMillion(coldDur, cu)
		switch {
		case coldDur == 0 && b.only != nil && !b.only["cold"]: // -only without section 1: warm columns only
			t.add(r.Endpoint, num(w.BilledMs, 0), dollars(w.HTTPAPI), dollars(w.Requests), dollars(w.Duration), dollars(w.DynamoDB),
				dollars(w.Total()), "—", "—", "—")
		case coldDur == 0:
			return nil, fmt.Errorf("no cold starts of %s", r.Function)
		default:
			t.add(r.Endpoint, num(w.BilledMs, 0), dollars(w.HTTPAPI), dollars(w.Requests), dollars(w.Duration), dollars(w.DynamoDB),
				dollars(w.Total()), num(c.BilledMs, 0), dollars(c.Total()), dollars(blended(w, c, coldShare)))
		}
	}
	t.note("prices: us-east-1 list prices as of %s: HTTP API $%.2f per million requests; Lambda arm64 $%.2f per million requests + $%.10f per GB-second at %g GB (128 MB), billed per 1 ms; DynamoDB on-demand $%.3f per million read request units, $%.3f per million write request units",
		pricesDate, p.HTTPAPI, p.LambdaRequests, p.GBSecond, p.MemoryGB, p.ReadUnits, p.WriteUnits)
	t.note("Lambda duration assumed = the median warm invocation wall time measured in section 4 on this host (through the Runtime API, dynalite round trips included); a 128 MB Lambda has about 128/1769 of a vCPU, so real durations are likely longer")
	t.note("cold: init + first invocation (section 1 medians), billed as provided.al2023 bills init, with the cold row's DynamoDB units (section 4); the other rows of a function take the cold row of its first (list-orders page 1, the ops queue); the last column assumes %g%% of requests are cold", coldShare*100)
	t.note("request units by DynamoDB's rules (section 4), means per request; HTTP API requests are metered per 512 KB, every response here is smaller")
	return t, nil
}

// readmeFile is where make bench keeps its report, relative to the module
// root: the tables of cmd/bench/README.md between its two marks.
const readmeFile = "cmd/bench/README.md"

// The marks around the report in readmeFile. What lies between them is
// the bench's; the text around them is written by hand.
const (
	reportBegin = "<!-- make bench writes from here -->\n"
	reportEnd   = "<!-- make bench writes to here -->\n"
)

// splice returns doc with what lies between its marks replaced by report,
// set off by a blank line on each side.
func splice(doc, report []byte) ([]byte, error) {
	before, rest, ok := bytes.Cut(doc, []byte(reportBegin))
	if !ok {
		return nil, fmt.Errorf("no line %q", bytes.TrimSpace([]byte(reportBegin)))
	}
	_, after, ok := bytes.Cut(rest, []byte(reportEnd))
	if !ok {
		return nil, fmt.Errorf("no line %q after %q", bytes.TrimSpace([]byte(reportEnd)), bytes.TrimSpace([]byte(reportBegin)))
	}
	var b bytes.Buffer
	b.Write(before)
	b.WriteString(reportBegin + "\n")
	b.Write(bytes.Trim(report, "\n"))
	b.WriteString("\n\n" + reportEnd)
	b.Write(after)
	return b.Bytes(), nil
}

// writeReadme puts report between the marks of the file path (relative to
// root unless absolute), leaving the rest of the file as it is.
func writeReadme(root, path string, report []byte) error {
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err = splice(doc, report)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, doc, 0o644)
}
