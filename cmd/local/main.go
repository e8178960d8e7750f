// Command local runs the whole service on this machine without Docker, the
// way `sam local start-api` does: dynalite with the tables of template.yaml,
// the sample catalogue and a dev token; Versity's S3 gateway with the
// template's bucket; cognito-local with the template's staff user pool,
// its client and groups, and a local admin and operator; each function
// built for this host by its own Makefile target; and an HTTP server that
// turns each request into an API Gateway HTTP API event (payload 2.0),
// checking the JWTs of the routes with a JWT authorizer against the local
// pool, runs it on a warm instance of the function's binary through a
// local Lambda Runtime API, and answers with its response. README.md
// beside it says what it does and why, and its variables: LOCAL_ADDR,
// LOCAL_DYNAMODB_ADDR, LOCAL_S3_ADDR, LOCAL_COGNITO_ADDR,
// LOCAL_PORT_OFFSET (where it listens), DYNAMODB_ENDPOINT and S3_ENDPOINT
// (engines to use instead), ARTICLES (another catalogue),
// LOCAL_SCHEDULE_EVERY (the period of every schedule), LOCAL_DISPATCH_POLLERS
// (how many webhook pollers run: 1, 2 or 4), LOCAL_TEST_STEP_SECONDS (how far
// apart test orders step), AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (the operator routes' key pair), LOCAL_STARTED_AT
// (when `make local` started, for the ready line). With -db-only it runs
// just the database, for `sam local start-api`.
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
	// Ctrl-C or SIGTERM is the normal way to stop, with exit status 0; once
	// stopping, a second Ctrl-C ends it at once.
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
	ready  func(*stack) // if set, receives the stack once it serves
	// endpointWait bounds the wait for DYNAMODB_ENDPOINT to answer (10 s
	// when zero); progressEvery is how often a long step says it is still
	// going (10 s when zero).
	endpointWait, progressEvery time.Duration
}

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

// readyLine says how long the start took: since startedAt, the Unix time at
// which `make local` started (installing and building before this program
// ran), the wait a reader had; without it, since this program started.
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
