// Command bench measures the service and prints one report, every figure
// from the same run:
//
//  1. cold start of each function and of a hello-world Lambda (init and
//     first invocation, through the local Lambda Runtime API, against a
//     local DynamoDB), and each function's init as a multiple of hello's;
//  2. the size of each linux/arm64 bootstrap, and its ratio to hello's;
//  3. the warm handler cost (go test -bench of the request paths);
//  4. the DynamoDB calls and capacity units of each kind of request,
//     measured at the wire by a proxy in front of dynalite, as dynalite
//     reports them and by DynamoDB's rules;
//  5. the cost per million requests of each endpoint at us-east-1 list
//     prices.
//
// It prints the sections as aligned text, then as Markdown for the README
// (also written to the file given with -md). Everything it starts (dynalite,
// function instances, the proxy) it stops, and its builds are removed.
//
// Usage:
//
//	go run ./cmd/bench [-starts 15] [-orders 10000] [-md FILE]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"stampduty/shared/samtemplate"
	"stampduty/shared/store/localdb"
)

// options are the flags of a run.
type options struct {
	starts int    // fresh starts per binary
	orders int    // orders of the caller the list-orders rows read
	md     string // file for the Markdown report, "" for none
}

// minStarts is the least number of fresh starts per binary.
const minStarts = 15

func main() {
	var o options
	flag.IntVar(&o.starts, "starts", minStarts, fmt.Sprintf("fresh starts per binary for the cold-start section (at least %d)", minStarts))
	flag.IntVar(&o.orders, "orders", 10000, "orders of the caller whose list is measured (the last page of 25 is measured too)")
	flag.StringVar(&o.md, "md", "", "also write the Markdown report to this file")
	flag.Parse()
	if o.starts < minStarts {
		fmt.Fprintf(os.Stderr, "bench: -starts must be at least %d\n", minStarts)
		os.Exit(2)
	}
	if o.orders < 100 {
		fmt.Fprintln(os.Stderr, "bench: -orders must be at least 100")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "\nbench:", err)
		os.Exit(1)
	}
}

// subjectEvents is the first request of each binary in the cold-start section.
var subjectEvents = map[string]func() []byte{
	"CreateOrderFunction":  createEvent,
	"ListOrdersFunction":   func() []byte { return listOrdersEvent(1, listPageSize) },
	"ListArticlesFunction": listArticlesEvent,
	helloID:                helloEvent,
}

// run measures everything and writes the report to out; progress goes to
// status.
func run(ctx context.Context, o options, out, status io.Writer) error {
	began := time.Now()
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := localdb.ModuleRoot(wd)
	if err != nil {
		return err
	}
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "stampduty-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var ids []string
	for _, f := range tmpl.Functions {
		if subjectEvents[f.LogicalID] == nil {
			return fmt.Errorf("template.yaml has a function %s the bench has no request for", f.LogicalID)
		}
		ids = append(ids, f.LogicalID)
	}
	names := append(append([]string(nil), ids...), helloID)

	fmt.Fprintln(status, "building for this host…")
	hostBins, err := buildAll(ctx, root, filepath.Join(tmp, "host"), ids, host)
	if err != nil {
		return err
	}
	fmt.Fprintln(status, "building for linux/arm64…")
	armBins, err := buildAll(ctx, root, filepath.Join(tmp, "arm64"), ids, lambdaARM64)
	if err != nil {
		return err
	}
	size, err := sizes(armBins, names)
	if err != nil {
		return err
	}

	cold, err := coldSection(ctx, root, tmpl, hostBins, names, o.starts, status)
	if err != nil {
		return err
	}

	dyn, err := measureDynamo(ctx, root, tmpl, hostBins, o.orders, status)
	if err != nil {
		return err
	}

	fmt.Fprintln(status, "go test -bench…")
	gb, err := runGoBenchmarks(ctx, root)
	if err != nil {
		return err
	}

	costs, err := costRows(cold, dyn)
	if err != nil {
		return err
	}

	tables := []*table{
		coldTable(cold, o.starts),
		sizeTable(size),
		goBenchTable(gb),
		dynamoTable(dyn),
		costTable(usEast1, costs),
	}
	took := time.Since(began).Round(time.Second)
	heading := fmt.Sprintf("stampduty benchmark, %s, %s/%s, %d CPUs%s, %s; took %s",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version(), took)

	var text, md bytes.Buffer
	fmt.Fprintf(&text, "%s\n\n", heading)
	for _, t := range tables {
		t.writeText(&text)
	}
	fmt.Fprintf(&md, "Measured with `make bench`: %s.\n\n", heading)
	for _, t := range tables {
		t.writeMarkdown(&md)
	}
	fmt.Fprint(out, text.String())
	fmt.Fprintf(out, "Markdown (for the README):\n\n%s", md.String())
	if o.md != "" {
		if err := os.WriteFile(o.md, md.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// coldSection runs section 1 on a local DynamoDB of its own, stopped after.
func coldSection(ctx context.Context, root string, tmpl *samtemplate.Template, bins map[string]string, names []string, starts int, status io.Writer) ([]coldResult, error) {
	db, err := startDatabase(ctx, root, tmpl)
	if err != nil {
		return nil, err
	}
	defer db.stop()
	var subs []subject
	for _, n := range names {
		log := &tailWriter{}
		fn, err := lambdaFunction(tmpl, n, bins[n], db.Endpoint, log)
		if err != nil {
			return nil, err
		}
		subs = append(subs, subject{Name: n, Fn: fn, Event: subjectEvents[n](), Log: log})
	}
	return coldStarts(ctx, subs, starts, status)
}

// costRows gathers the inputs of section 5 from sections 1 and 4.
func costRows(cold []coldResult, dyn *dynamoResult) ([]endpointCost, error) {
	coldOf := func(fn string) (time.Duration, error) {
		for _, c := range cold {
			if c.Name == fn {
				return c.Total(), nil
			}
		}
		return 0, fmt.Errorf("no cold starts of %s", fn)
	}
	var rows []endpointCost
	for _, e := range []struct{ endpoint, fn, warm, cold string }{
		{"POST /api/live-orders (create-order)", "CreateOrderFunction", "create-order warm", "create-order cold"},
		{fmt.Sprintf("GET /api/live-orders page 1 (pageSize %d)", listPageSize), "ListOrdersFunction", listOrdersRow("warm", 1), listOrdersRow("cold", 1)},
		{fmt.Sprintf("GET /api/live-orders page %d (pageSize %d)", dyn.LastPage, listPageSize), "ListOrdersFunction", listOrdersRow("warm", dyn.LastPage), listOrdersRow("cold", 1)},
		{"GET /api/stamp-duty-datas (list-articles)", "ListArticlesFunction", "list-articles warm", "list-articles cold"},
	} {
		w, ok1 := dyn.row(e.warm)
		c, ok2 := dyn.row(e.cold)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("section 4 has no row %q or %q", e.warm, e.cold)
		}
		_, _, wu, wok := w.perRequest()
		_, _, cu, cok := c.perRequest()
		if !wok || !cok {
			return nil, errors.New("section 4: some DynamoDB calls could not be accounted by DynamoDB's rules")
		}
		cd, err := coldOf(e.fn)
		if err != nil {
			return nil, err
		}
		rows = append(rows, endpointCost{Endpoint: e.endpoint, WarmDur: w.Wall.median(), ColdDur: cd, Warm: wu, Cold: cu})
	}
	return rows, nil
}

// cpuModel returns ", <model name>" from /proc/cpuinfo, "" when unknown.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return ", " + strings.TrimSpace(v)
		}
	}
	return ""
}
