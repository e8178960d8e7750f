// Command bench measures the service and prints one report, every figure
// from the same run: 1. each function's cold start against a hello-world
// Lambda's, through the local Lambda Runtime API; 2. each linux/arm64
// bootstrap's size; 3. the warm handler cost (go test -bench); 4. the
// DynamoDB calls and capacity units of each kind of request, measured at the
// wire by a proxy in front of dynalite; 5. the cost per million requests;
// 6–8. the webhook dispatch's units per event, its cost, and the time from a
// stored change to its receiver's first delivery attempt; … 15. one
// webhook's backlog, made through the create-order function, drained by
// the scheduled dispatch function, against the API's create rate (the
// sections' list is sections.go).
//
// The requests are the samples of events/ (see requests). It prints the
// sections as aligned text, then as Markdown, which it also puts in
// cmd/bench/README.md between its marks (-readme names another file, -readme ""
// none) and writes to the file given with -md. Everything it starts it
// stops, and its builds are removed.
//
//	make bench BENCH_FLAGS="[-starts 60] [-orders 10000] [-only SECTION,…] [-readme FILE] [-md FILE]"
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
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/testkit/syncbuf"
)

// minStarts is the least number of fresh starts per binary; defaultStarts
// is how many the bench makes unless told. At 15, the medians of one
// commit's binaries moved by up to 0.3× hello-world between runs on the
// 2-core host (1.74–2.18× in one full run, 1.69–3.05× in a cold-only
// run); at 60, three runs within ten minutes gave 1.58–1.87×,
// 1.58–1.82× and 1.46–1.75×, for about 15 s more of the bench.
const (
	minStarts     = 15
	defaultStarts = 60
)

func main() {
	b := &bench{logs: map[string]*syncbuf.Buffer{}, init: map[string]durations{}, first: map[string]durations{}}
	flag.IntVar(&b.starts, "starts", defaultStarts, fmt.Sprintf("fresh starts per binary for the cold-start section (at least %d)", minStarts))
	flag.IntVar(&b.orders, "orders", 10000, "orders of the caller whose list is measured (the last page of 25 is measured too)")
	md := flag.String("md", "", "also write the Markdown report to this file")
	readme := flag.String("readme", readmeFile, "put the Markdown report between the marks of this file (relative to the module root; \"\": none)")
	only := flag.String("only", "", "measure only these sections, by name, comma-separated ("+strings.Join(sectionNames(), ", ")+"); the report then goes to no README")
	flag.Parse()
	if *only != "" {
		var err error
		if b.only, err = pickSections(*only); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		*readme = ""
	}
	if b.starts < minStarts || b.orders < 100 {
		fmt.Fprintf(os.Stderr, "bench: -starts must be at least %d and -orders at least 100\n", minStarts)
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

// say writes a progress line to stderr.
func say(format string, a ...any) { fmt.Fprintf(os.Stderr, format, a...) }

// bench is a run: its settings, what it runs on, and its results.
type bench struct {
	ctx                  context.Context
	starts, orders       int             // the flags
	only                 map[string]bool // -only's sections; nil: all
	root                 string
	tmpl                 *samtemplate.Template
	reqs                 []request
	body                 *stampduty.OrderBody       // the create-order request's, for the orders made directly
	names                []string                   // the functions' logical ids, then helloID
	bins, arm            map[string]string          // the host and linux/arm64 builds, by name
	endpoint, s3Endpoint string                     // the local DynamoDB and S3
	proxy                *storetest.Proxy           // section 4's, in front of endpoint
	logs                 map[string]*syncbuf.Buffer // what each binary logged
	// quiet are the empty copies of the tables that the scheduled functions'
	// cold starts read, so that a start's one pass finds nothing to do.
	quiet map[string]string
	// refs are the dev caller's orders, oldest first, which the requests
	// that name an order choose from.
	refs []orderRef

	init, first map[string]durations          // section 1, by name
	gobench     map[string]map[string]float64 // section 3: values by benchmark and unit
	goTest      string                        // section 3's command
	rows        []row                         // section 4
	// Order item sizes by DynamoDB's formula, measured on the PutItem at the
	// wire, and how the caller's orders were made.
	typicalOrderBytes, maxOrderBytes int
	filled                           string
	dispatch                         dispatchResults // sections 6 to 8
	shares                           sharesResults   // sections 9 and 10
	catalogue                        []catalogueSize // section 12: the sample, then thousands
	load                             loadResults     // sections 13 and 14
	drain                            []drainArm      // section 15
	ledger                           []ledgerArm     // section 16
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
	if err == nil {
		b.reqs, err = load(b.root, b.tmpl, requests((b.orders+listPageSize-1)/listPageSize))
	}
	if err == nil {
		b.body, err = orderBody(firsts(b.reqs)["CreateOrderFunction"].ev.Body)
	}
	if err != nil {
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
	say("building for this host, then for linux/arm64…\n")
	if b.bins, err = b.buildAll(filepath.Join(tmp, "host"), false); err != nil {
		return err
	}
	if b.arm, err = b.buildAll(filepath.Join(tmp, "arm64"), true); err != nil {
		return err
	}
	stop, err := b.startEngines()
	if err != nil {
		return err
	}
	defer stop()
	if err := b.seed(); err != nil {
		return err
	}
	for _, s := range b.sections() {
		if b.only != nil && !b.only[s.name] {
			continue
		}
		if err := s.measure(); err != nil {
			return err
		}
	}
	heading := fmt.Sprintf("stampduty benchmark, %s, %s/%s, %d CPUs%s, %s; took %s",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version(),
		time.Since(began).Round(time.Second))
	var text, markdown bytes.Buffer
	fmt.Fprintf(&text, "%s\n\n", heading)
	fmt.Fprintf(&markdown, "Measured with `make bench`: %s.\n\n", heading)
	for _, s := range b.sections() {
		if b.only != nil && !b.only[s.name] {
			continue
		}
		for _, tableOf := range s.tables {
			t, err := tableOf()
			if err != nil {
				return err
			}
			t.write(&text, &markdown)
		}
	}
	fmt.Fprintf(out, "%sMarkdown (for %s):\n\n%s", text.String(), readmeFile, markdown.String())
	if readme != "" {
		if err := writeReadme(b.root, readme, markdown.Bytes()); err != nil {
			return err
		}
		say("bench: wrote the report into %s\n", readme)
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
// hello-world Lambda with the Makefile's release flags, for Lambda
// (linux/arm64) or for this host, into dir; it returns their paths by name.
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
	cmd.Dir, cmd.Env = b.root, append(os.Environ(), "CGO_ENABLED=0")
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
	for line := range strings.SplitSeq(string(info), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return ", " + strings.TrimSpace(v)
		}
	}
	return ""
}

// startEngines starts dynalite with the template's tables, seeded as the
// local stack seeds them, and empty copies of them (b.quiet), and the local
// S3 server with the template's buckets.
func (b *bench) startEngines() (stop func(), err error) {
	db, err := localdb.Start(b.ctx, b.root, "", nil)
	if err != nil {
		return nil, err
	}
	s3, err := locals3.Start(b.ctx, b.root, "", localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region, nil)
	if err != nil {
		db.Stop()
		return nil, err
	}
	stop = func() { s3.Stop(); db.Stop() }
	b.endpoint, b.s3Endpoint = db.Endpoint, s3.Endpoint
	if _, err = b.freshTables(""); err == nil {
		err = localstack.Buckets(b.ctx, b.s3Endpoint, b.tmpl)
	}
	if err == nil {
		b.quiet, err = b.freshTables("quiet-")
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// freshTables creates a copy of the template's tables named prefix +
// logical id, seeded with the sample catalogue (and, without a prefix, the
// dev token, as the local stack seeds its tables), and returns their names
// by logical id.
func (b *bench) freshTables(prefix string) (map[string]string, error) {
	names := map[string]string{}
	for _, t := range b.tmpl.Tables {
		names[t.LogicalID] = prefix + t.LogicalID
	}
	client := localdb.Client(b.endpoint)
	err := localdb.CreateTables(b.ctx, client, b.tmpl.Tables, names)
	if err == nil {
		db := store.New(client)
		_, err = localdb.Seed(b.ctx, db, db.IDs(names["CountersTable"], 10), func(id string) string { return names[id] },
			filepath.Join(b.root, localdb.SampleCatalogue), prefix == "")
	}
	if err != nil {
		return nil, fmt.Errorf("tables %s*: %w", prefix, err)
	}
	return names, nil
}

// freshProxied is freshTables behind a new proxy, which the caller closes,
// that accounts their writes by their indexes.
func (b *bench) freshProxied(prefix string) (map[string]string, *storetest.Proxy, error) {
	names, err := b.freshTables(prefix)
	if err != nil {
		return nil, nil, err
	}
	proxy, err := storetest.StartProxy(b.endpoint, storetest.Schemas(b.tmpl, names))
	return names, proxy, err
}
