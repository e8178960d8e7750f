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
//     prices;
//  6. the webhook dispatch's DynamoDB calls and units per event (relaying,
//     delivering, retrying), measured the same way;
//  7. its cost per million events, and the poller's fixed monthly cost;
//  8. the time from a stored change to its receiver's first delivery
//     attempt, with the dispatch binary run by the local schedule.
//
// The requests are the samples of events/ (see requests). It prints the
// sections as aligned text, then as Markdown, which it also puts in
// cmd/bench/README.md between its marks (-readme names another file, -readme ""
// none) and writes to the file given with -md. Everything it starts (dynalite, the local S3
// server, function instances, the proxy) it stops, and its builds are
// removed.
//
// Usage (make bench builds it with the functions' host flags first, and
// passes BENCH_FLAGS):
//
//	make bench BENCH_FLAGS="[-starts 15] [-orders 10000] [-readme FILE] [-md FILE]"
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"stampduty/cmd/internal/localstack"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/testkit/syncbuf"
)

// minStarts is the least number of fresh starts per binary.
const minStarts = 15

func main() {
	b := &bench{logs: map[string]*syncbuf.Buffer{}, init: map[string]durations{}, first: map[string]durations{}, status: os.Stderr}
	flag.IntVar(&b.starts, "starts", minStarts, fmt.Sprintf("fresh starts per binary for the cold-start section (at least %d)", minStarts))
	flag.IntVar(&b.orders, "orders", 10000, "orders of the caller whose list is measured (the last page of 25 is measured too)")
	md := flag.String("md", "", "also write the Markdown report to this file")
	readme := flag.String("readme", readmeFile, "put the Markdown report between the marks of this file (relative to the module root; \"\": none)")
	flag.Parse()
	bad := ""
	switch {
	case b.starts < minStarts:
		bad = fmt.Sprintf("-starts must be at least %d", minStarts)
	case b.orders < 100:
		bad = "-orders must be at least 100"
	}
	if bad != "" {
		fmt.Fprintln(os.Stderr, "bench:", bad)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	b.ctx = ctx
	err := b.run(*md, *readme, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "\nbench:", err)
		os.Exit(1)
	}
}

// bench is a run: its settings, what it runs on, and its results.
type bench struct {
	ctx            context.Context
	starts, orders int       // the flags
	status         io.Writer // progress
	root           string    // the module root
	tmpl           *samtemplate.Template
	reqs           []request
	names          []string                   // the functions' logical ids, then helloID
	bins, arm      map[string]string          // the host and linux/arm64 builds, by name
	endpoint       string                     // the local DynamoDB
	s3Endpoint     string                     // the local S3
	proxy          *storetest.Proxy           // section 4's, in front of it
	logs           map[string]*syncbuf.Buffer // what each binary logged

	init, first map[string]durations          // section 1: each start's init and first invocation, by name
	gobench     map[string]map[string]float64 // section 3: values by benchmark and unit
	goTest      string                        // section 3: the command
	rows        []row                         // section 4
	dispatch    dispatchResults               // sections 6 to 8
	// quiet are the tables the scheduled functions' cold starts of section
	// 1 read: empty copies, so that a start's one pass finds nothing to do.
	quiet map[string]string
	// typicalOrderBytes and maxOrderBytes are order item sizes by
	// DynamoDB's formula, measured on the PutItem at the wire; filled says
	// how the caller's orders were made.
	typicalOrderBytes, maxOrderBytes int
	filled                           string
	// refs are the dev caller's orders, oldest first, which the requests
	// that name an order choose from: the seeded one in section 1, all of
	// them once filled.
	refs []orderRef
}

// run measures everything and writes the report to out, and its Markdown to
// the file md and between the marks of the file readme, each unless it is "".
func (b *bench) run(md, readme string, out io.Writer) error {
	began := time.Now()
	wd, err := os.Getwd()
	if err == nil {
		b.root, err = localdb.ModuleRoot(wd)
	}
	if err == nil {
		b.tmpl, err = samtemplate.Load(filepath.Join(b.root, "template.yaml"))
	}
	if err != nil {
		return err
	}
	if b.reqs, err = load(b.root, b.tmpl, requests((b.orders+listPageSize-1)/listPageSize)); err != nil {
		return err
	}
	for _, f := range b.tmpl.Functions {
		b.names = append(b.names, f.LogicalID)
	}
	b.names = append(b.names, helloID)
	for _, n := range b.names {
		b.logs[n] = &syncbuf.Buffer{}
	}
	tmp, err := os.MkdirTemp("", "stampduty-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintln(b.status, "building for this host…")
	if b.bins, err = b.buildAll(filepath.Join(tmp, "host"), false); err != nil {
		return err
	}
	fmt.Fprintln(b.status, "building for linux/arm64…")
	if b.arm, err = b.buildAll(filepath.Join(tmp, "arm64"), true); err != nil {
		return err
	}
	srv, err := b.startDatabase()
	if err != nil {
		return err
	}
	defer srv.Stop()
	b.endpoint = srv.Endpoint
	s3srv, err := b.startFiles()
	if err != nil {
		return err
	}
	defer s3srv.Stop()
	b.s3Endpoint = s3srv.Endpoint
	if err := b.seed(); err != nil {
		return err
	}
	if b.quiet, err = b.freshTables("quiet-"); err != nil {
		return err
	}
	for _, measure := range []func() error{b.coldStarts, b.measureDynamo, b.measureEvents, b.measureLatency, b.runGoBenchmarks} {
		if err := measure(); err != nil {
			return err
		}
	}
	var tables []*table
	for _, section := range []func() (*table, error){b.coldTable, b.sizeTable, b.goBenchTable, b.dynamoTable, b.costTable,
		b.eventTable, b.eventCostTable, b.latencyTable} {
		t, err := section()
		if err != nil {
			return err
		}
		tables = append(tables, t)
	}
	heading := fmt.Sprintf("stampduty benchmark, %s, %s/%s, %d CPUs%s, %s; took %s",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version(),
		time.Since(began).Round(time.Second))
	var text, markdown bytes.Buffer
	fmt.Fprintf(&text, "%s\n\n", heading)
	fmt.Fprintf(&markdown, "Measured with `make bench`: %s.\n\n", heading)
	for _, t := range tables {
		t.write(&text, &markdown)
	}
	fmt.Fprintf(out, "%sMarkdown (for %s):\n\n%s", text.String(), readmeFile, markdown.String())
	if readme != "" {
		if err := writeReadme(b.root, readme, markdown.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(b.status, "bench: wrote the report into %s\n", readme)
	}
	if md != "" {
		return os.WriteFile(md, markdown.Bytes(), 0o644)
	}
	return nil
}

// helloID is the name the hello-world Lambda goes by in the report, and
// helloPkg its package: aws-lambda-go and aws-lambda-go-api-proxy with one
// handler, the floor every function is compared with.
const (
	helloID  = "HelloWorld"
	helloPkg = "./cmd/bench/testdata/hello"
)

// buildAll builds the functions with their Makefile targets, and the
// hello-world Lambda with the Makefile's release flags (CGO_ENABLED=0,
// -tags lambda.norpc -trimpath -ldflags "-s -w"), for Lambda (linux/arm64)
// or for this host, into dir; it returns their paths by name.
func (b *bench) buildAll(dir string, forLambda bool) (map[string]string, error) {
	bins := map[string]string{helloID: filepath.Join(dir, helloID, "bootstrap")}
	for _, f := range b.tmpl.Functions {
		path, err := localstack.Build(b.ctx, b.root, dir, f.LogicalID, forLambda)
		if err != nil {
			return nil, err
		}
		bins[f.LogicalID] = path
	}
	cmd := exec.CommandContext(b.ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", bins[helloID], helloPkg)
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if forLambda {
		cmd.Env = append(cmd.Env, "GOOS=linux", "GOARCH=arm64")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %w\n%s", helloID, err, out)
	}
	return bins, nil
}

// cpuModel returns ", <model name>" from /proc/cpuinfo, "" when unknown.
func cpuModel() string {
	info, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(info), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return ", " + strings.TrimSpace(v)
		}
	}
	return ""
}
