// Command local runs the whole service on this machine without Docker, the
// way `sam local start-api` does: a local DynamoDB (dynalite, in memory)
// with the tables template.yaml defines, the sample catalogue and a dev
// token; a local S3 server (Versity's gateway) with the template's bucket; each function built for this host by its own Makefile target; and
// an HTTP server that turns each request into an API Gateway HTTP API
// (payload 2.0) event, runs it on a warm instance of the function's real
// binary through a local Lambda Runtime API, and answers with its response.
// Routes, tables and environment are read from template.yaml.
//
// Environment:
//
//	LOCAL_ADDR           where to serve the API (default 127.0.0.1:3000)
//	DYNAMODB_ENDPOINT    use this DynamoDB instead of starting dynalite
//	LOCAL_DYNAMODB_ADDR  where dynalite listens (default 127.0.0.1:8000)
//	S3_ENDPOINT          use this S3 server instead of starting versitygw
//	LOCAL_S3_ADDR        where the local S3 server listens (default 127.0.0.1:9000)
//	LOCAL_PORT_OFFSET    added to each default port (3000, 8000, 9000), e.g. 1
//	                     for a second stack on 3001, 8001 and 9001
//	LOCAL_STARTED_AT     the Unix time `make local` started, for the ready line
//	AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
//	                     the key pair the operator routes (AWS_IAM) accept;
//	                     unset, a fixed local pair that the stack prints
//	ARTICLES             a JSON catalogue to seed instead of cmd/local/articles.json
//
// With -db-only it runs just the database, for `sam local start-api`.
//
// It refuses to start when an address it needs is in use (another local
// stack's, say), naming the variable that moves it; it prints each phase
// (and, while a build lasts, how long it has taken), and accepts
// connections only once it can answer them. Ctrl-C
// stops everything it started, and it then exits 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	dbOnly := flag.Bool("db-only", false, "run only the local DynamoDB (tables, catalogue, dev token), e.g. for sam local start-api")
	flag.Parse()
	// Ctrl-C (SIGINT) or SIGTERM is the normal way to stop: run stops
	// everything it started and the exit status is 0. Once stopping, the
	// signals' default action is back, so a second Ctrl-C ends at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	if err := run(ctx, options{getenv: os.Getenv, dbOnly: *dbOnly, out: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}

// options are the settings of one run.
type options struct {
	getenv func(string) string
	dbOnly bool
	out    io.Writer
	// ready, when set, receives the stack once it serves.
	ready func(*stack)
	// endpointWait bounds the wait for DYNAMODB_ENDPOINT to answer
	// (defaultEndpointWait when zero).
	endpointWait time.Duration
	// progressEvery is how often a long step says it is still going
	// (defaultProgressEvery when zero).
	progressEvery time.Duration
}

// defaultEndpointWait is how long a run waits for DYNAMODB_ENDPOINT to answer.
const defaultEndpointWait = 10 * time.Second

// run starts the stack, serves until ctx ends, then stops everything it
// started. A ctx that ends while the stack starts is a normal stop too.
func run(ctx context.Context, o options) error {
	begin := time.Now()
	s, err := start(ctx, o)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(o.out, "local: stopped")
			return nil
		}
		return err
	}
	s.banner()
	fmt.Fprintln(s.out, readyLine(begin, time.Now(), o.getenv("LOCAL_STARTED_AT")))
	if o.ready != nil {
		o.ready(s)
	}
	<-ctx.Done()
	fmt.Fprintln(s.out, "local: stopping")
	s.close()
	fmt.Fprintln(s.out, "local: stopped")
	return nil
}

// readyLine says how long the start took. `make local` sets
// LOCAL_STARTED_AT to the Unix time at which it started, so that the
// figure covers what it did before this program ran (installing dynalite,
// building versitygw and this program): the time a reader waited. Without
// it, the figure covers this program alone, and says so.
func readyLine(begin, now time.Time, startedAt string) string {
	own := now.Sub(begin).Seconds()
	if sec, err := strconv.ParseFloat(startedAt, 64); err == nil && sec > 0 {
		since := now.Sub(time.Unix(0, int64(sec*1e9)))
		if since >= now.Sub(begin)-time.Second { // not a stale or future time
			return fmt.Sprintf("local: ready in %.1fs since `make local` started (%.1fs before this program ran, %.1fs in it)",
				since.Seconds(), since.Seconds()-own, own)
		}
	}
	return fmt.Sprintf("local: ready in %.1fs since this program started", own)
}
