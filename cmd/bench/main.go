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
// The requests are the samples in events/ (see requests). It prints the
// sections as aligned text, then as Markdown for the README (also written
// to the file given with -md). Everything it starts (dynalite, function
// instances, the proxy) it stops, and its builds are removed.
//
// Usage:
//
//	go run ./cmd/bench [-starts 15] [-orders 10000] [-md FILE]
package main

import (
	"bytes"
	"context"
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

// minStarts is the least number of fresh starts per binary.
const minStarts = 15

func main() {
	starts := flag.Int("starts", minStarts, fmt.Sprintf("fresh starts per binary for the cold-start section (at least %d)", minStarts))
	orders := flag.Int("orders", 10000, "orders of the caller whose list is measured (the last page of 25 is measured too)")
	md := flag.String("md", "", "also write the Markdown report to this file")
	flag.Parse()
	bad := ""
	switch {
	case *starts < minStarts:
		bad = fmt.Sprintf("-starts must be at least %d", minStarts)
	case *orders < 100:
		bad = "-orders must be at least 100"
	}
	if bad != "" {
		fmt.Fprintln(os.Stderr, "bench:", bad)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *starts, *orders, *md, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "\nbench:", err)
		os.Exit(1)
	}
}

// bench is what the sections run with.
type bench struct {
	ctx    context.Context
	root   string // the module root
	tmpl   *samtemplate.Template
	reqs   []request
	bins   map[string]string      // the host builds, by logical id (helloID for hello)
	logs   map[string]*tailWriter // what each function logged lately
	status io.Writer              // progress
}

// run measures everything and writes the report to out (and the Markdown
// to the file md unless it is ""); progress goes to status.
func run(ctx context.Context, starts, orders int, md string, out, status io.Writer) error {
	began := time.Now()
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	b := &bench{ctx: ctx, logs: map[string]*tailWriter{}, status: status}
	if b.root, err = localdb.ModuleRoot(wd); err != nil {
		return err
	}
	if b.tmpl, err = samtemplate.Load(filepath.Join(b.root, "template.yaml")); err != nil {
		return err
	}
	lastPage := (orders + listPageSize - 1) / listPageSize
	b.reqs = requests(lastPage)
	if err := load(b.root, b.tmpl, b.reqs); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "stampduty-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var names []string
	for _, f := range b.tmpl.Functions {
		names = append(names, f.LogicalID)
	}
	fmt.Fprintln(status, "building for this host…")
	if b.bins, err = b.buildAll(filepath.Join(tmp, "host"), names, false); err != nil {
		return err
	}
	fmt.Fprintln(status, "building for linux/arm64…")
	armBins, err := b.buildAll(filepath.Join(tmp, "arm64"), names, true)
	if err != nil {
		return err
	}
	names = append(names, helloID)
	size, err := sizeTable(armBins, names)
	if err != nil {
		return err
	}
	cold, err := b.coldStarts(names, starts)
	if err != nil {
		return err
	}
	dyn, err := b.measureDynamo(orders)
	if err != nil {
		return err
	}
	fmt.Fprintln(status, "go test -bench…")
	gb, err := goBenchTable(ctx, b.root)
	if err != nil {
		return err
	}
	costs, err := costTable(usEast1, b.reqs, cold, dyn)
	if err != nil {
		return err
	}

	heading := fmt.Sprintf("stampduty benchmark, %s, %s/%s, %d CPUs%s, %s; took %s",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version(),
		time.Since(began).Round(time.Second))
	var text, mdText bytes.Buffer
	fmt.Fprintf(&text, "%s\n\n", heading)
	fmt.Fprintf(&mdText, "Measured with `make bench`: %s.\n\n", heading)
	for _, t := range []*table{coldTable(cold, starts), size, gb, dynamoTable(dyn), costs} {
		t.writeText(&text)
		t.writeMarkdown(&mdText)
	}
	fmt.Fprintf(out, "%sMarkdown (for the README):\n\n%s", text.String(), mdText.String())
	if md != "" {
		return os.WriteFile(md, mdText.Bytes(), 0o644)
	}
	return nil
}

// cpuModel returns ", <model name>" from /proc/cpuinfo, "" when unknown.
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return ", " + strings.TrimSpace(v)
		}
	}
	return ""
}
