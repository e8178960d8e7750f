package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/store/localdb"
)

// helloID is the name the hello-world Lambda goes by in the report.
const helloID = "HelloWorld"

// helloPkg is the hello-world Lambda: aws-lambda-go and
// aws-lambda-go-api-proxy with one handler, the floor every function is
// compared with.
const helloPkg = "./cmd/bench/testdata/hello"

// buildAll builds the functions ids with their Makefile targets, and the
// hello-world Lambda with the Makefile's release flags (CGO_ENABLED=0,
// -tags lambda.norpc -trimpath -ldflags "-s -w"), for Lambda (linux/arm64)
// or for this host, into dir; it returns their paths by logical id.
func (b *bench) buildAll(dir string, ids []string, forLambda bool) (map[string]string, error) {
	bins := map[string]string{}
	for _, id := range ids {
		path, err := localstack.Build(b.ctx, b.root, dir, id, forLambda)
		if err != nil {
			return nil, err
		}
		bins[id] = path
	}
	bins[helloID] = filepath.Join(dir, helloID, "bootstrap")
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

// sizeTable is section 2: the size of each binary of bins, in the order of
// names, in bytes, MiB and as a multiple of hello-world's.
func sizeTable(bins map[string]string, names []string) (*table, error) {
	t := &table{
		Title:  "2. Binary size (linux/arm64, release flags)",
		Header: []string{"binary", "bytes", "MiB", "× hello"},
	}
	hello, err := os.Stat(bins[helloID])
	if err != nil {
		return nil, fmt.Errorf("size of %s: %w", helloID, err)
	}
	for _, n := range names {
		fi, err := os.Stat(bins[n])
		if err != nil {
			return nil, fmt.Errorf("size of %s: %w", n, err)
		}
		t.add(n, fmt.Sprint(fi.Size()), fmt.Sprintf("%.2f", float64(fi.Size())/(1<<20)), ratio(float64(fi.Size()), float64(hello.Size())))
	}
	t.note(`GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags "-s -w" (functions by their Makefile targets)`)
	return t, nil
}

// function describes the host build of the function logicalID (or of the
// hello-world Lambda) to the local Lambda runtime, talking to DynamoDB at
// endpoint and logging to b.logs[logicalID].
func (b *bench) function(logicalID, endpoint string) (runtimeapi.Function, error) {
	log := b.logs[logicalID]
	if log == nil {
		log = &tailWriter{}
		b.logs[logicalID] = log
	}
	if logicalID == helloID {
		return runtimeapi.Function{Name: helloID, Path: b.bins[helloID], Log: log, MemoryMB: 128, Timeout: 10 * time.Second,
			Env: []string{"AWS_REGION=" + localdb.Region}}, nil
	}
	f, ok := b.tmpl.Function(logicalID)
	if !ok {
		return runtimeapi.Function{}, fmt.Errorf("template.yaml has no function %s", logicalID)
	}
	return localstack.Function(b.tmpl, f, b.bins[logicalID], endpoint, log)
}

// coldResult is the cold starts of one binary.
type coldResult struct {
	Name string
	// Init is process start → first /invocation/next; First the first
	// invocation's wall time through the Runtime API.
	Init, First durations
}

// Total returns the median of init + first invocation, which is what a cold
// request bills on provided.al2023.
func (c coldResult) Total() time.Duration {
	var d durations
	for i := range c.Init {
		d = append(d, c.Init[i]+c.First[i])
	}
	return d.median()
}

// coldStarts is section 1, on a local DynamoDB of its own: it starts each
// binary of names fresh n times, round-robin (the first binary of each round
// rotates), after one unrecorded warm-up round, and records each start's
// init and first invocation, which gets the first request of its function.
func (b *bench) coldStarts(names []string, n int) ([]coldResult, error) {
	db, err := b.startDatabase()
	if err != nil {
		return nil, err
	}
	defer db.Stop()
	first := firsts(b.reqs)
	fns, evs := make([]runtimeapi.Function, len(names)), make([][]byte, len(names))
	for i, name := range names {
		if fns[i], err = b.function(name, db.Endpoint); err != nil {
			return nil, err
		}
		if evs[i] = first[name].payload; name == helloID {
			evs[i] = []byte(helloEvent)
		}
	}
	res := make([]coldResult, len(names))
	for round := -1; round < n; round++ {
		for k := range names {
			i := (k + max(round, 0)) % len(names)
			init, took, err := coldStart(b.ctx, fns[i], evs[i])
			if err != nil {
				return nil, b.withLog(err, names[i])
			}
			if res[i].Name = names[i]; round >= 0 {
				res[i].Init = append(res[i].Init, init)
				res[i].First = append(res[i].First, took)
			}
		}
		if round >= 0 {
			fmt.Fprintf(b.status, "\rcold starts: round %d/%d", round+1, n)
		}
	}
	fmt.Fprintln(b.status)
	return res, nil
}

// coldStart starts one instance of fn, invokes it once with ev, checks the
// answer and closes it.
func coldStart(ctx context.Context, fn runtimeapi.Function, ev []byte) (init, first time.Duration, err error) {
	inst, err := runtimeapi.Start(ctx, fn)
	if err != nil {
		return 0, 0, err
	}
	defer inst.Close()
	init = inst.InitDuration()
	t0 := time.Now()
	out, err := inst.Invoke(ctx, ev)
	first = time.Since(t0)
	if err == nil {
		err = checkOK(fn.Name, out)
	}
	if err != nil {
		return 0, 0, err
	}
	return init, first, inst.Close()
}

// coldTable is section 1.
func coldTable(rs []coldResult, n int) *table {
	t := &table{
		Title: "1. Cold start (this host, release flags)",
		Header: []string{"binary", "init median", "init min", "init p90", "× hello init",
			"1st invoke median", "1st invoke min", "1st invoke p90", "init+1st median"},
	}
	var hello time.Duration
	for _, r := range rs {
		if r.Name == helloID {
			hello = r.Init.median()
		}
	}
	for _, r := range rs {
		im, imin, ip90 := r.Init.stats()
		fm, fmin, fp90 := r.First.stats()
		t.add(r.Name, ms(im), ms(imin), ms(ip90), ratio(float64(im), float64(hello)), ms(fm), ms(fmin), ms(fp90), ms(r.Total()))
	}
	t.note("milliseconds; %d fresh starts per binary, round-robin over the binaries after one unrecorded warm-up round", n)
	t.note("init = process start → first /invocation/next (Lambda's Init Duration); 1st invoke = wall time of the first request through the local Runtime API, against dynalite")
	t.note("requests: create-order Affidavit/Karnataka amount 20 with the dev token; list-orders page 1; list-articles page 1; hello any event")
	return t
}

// checkOK fails unless out is an API Gateway response with status 200.
func checkOK(name string, out []byte) error {
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return fmt.Errorf("%s: response %.200q: %w", name, out, err)
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: status %d: %.300s", name, resp.StatusCode, resp.Body)
	}
	return nil
}

// tailWriter keeps the last 4 KiB a function wrote, for error messages.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 4096 {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-4096:]...)
	}
	return len(p), nil
}

// withLog adds to err what the function logicalID logged last.
func (b *bench) withLog(err error, logicalID string) error {
	w := b.logs[logicalID]
	if err == nil || errors.Is(err, context.Canceled) || w == nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := strings.TrimSpace(string(w.buf)); s != "" {
		return fmt.Errorf("%w; function output:\n  %s", err, strings.ReplaceAll(s, "\n", "\n  "))
	}
	return err
}
