package function

// This file holds what every function measures of itself: each API
// request's count, 5xx and latency, and the Set that the workflows and the
// store add their metrics to (metrics.Add with the request's context),
// written to standard output in CloudWatch's embedded metric format at the
// end of each invocation.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/metrics"
)

// Meter is where a function's metrics go: the namespace (empty: metrics
// off), the function's name for the FunctionName dimension, and the
// writer of the EMF lines (standard output, which Lambda sends to the
// function's log group).
type Meter struct {
	Namespace string
	Function  string
	Out       io.Writer
	Now       func() time.Time
	// Every is how often a scheduled run's metrics are written while it
	// runs (MeasuredRun); 0 writes them only at its end. See RunFlushEvery.
	Every time.Duration
}

// RunFlushEvery is how often Scheduled writes a run's metrics while it
// runs. The dispatcher's run lasts about a minute: written only at its
// end, its values would all land in the minute it ends (a minute late on
// the dashboard and for the alarm on the oldest due delivery), and a run
// that Lambda kills at its timeout would lose them all. Written every 10 s
// on the wall clock's multiples of 10 s, each write stamped just before
// its boundary, every value lands in the minute it was counted, a killed
// run loses at most 10 s of them, and an idle dispatcher writes 6 lines a
// minute instead of 1 (its OldestDueAge line of 187 bytes: 48 MB a month
// instead of 9, 2 cents of log ingestion at $0.50/GB). Each line is a
// single write, so they never interleave with the run's own log lines.
const RunFlushEvery = 10 * time.Second

// MeterFromEnv is the Meter the process environment names:
// METRICS_NAMESPACE (the template's) and AWS_LAMBDA_FUNCTION_NAME
// (Lambda's), writing to out.
func MeterFromEnv(getenv func(string) string, out io.Writer) Meter {
	return Meter{Namespace: getenv(metrics.NamespaceVar), Function: getenv("AWS_LAMBDA_FUNCTION_NAME"), Out: out, Now: time.Now}
}

// set returns an invocation's empty Set, its FunctionName fixed.
func (m Meter) set() *metrics.Set {
	return metrics.NewSet(map[string]string{metrics.FunctionName: m.Function})
}

// flush writes s, stamped now; a metric line that cannot be written is
// lost, never the answer.
func (m Meter) flush(s *metrics.Set) { m.flushAt(s, m.now()) }

// flushAt writes s stamped at.
func (m Meter) flushAt(s *metrics.Set, at time.Time) { _ = s.Flush(m.Out, m.Namespace, at) }

// now returns the Meter's time.
func (m Meter) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// every writes s at each multiple of m.Every on the wall clock until stop
// is closed, each write stamped 1 ms before its multiple (so that with an
// Every dividing a minute no value moves to the next minute), and closes
// done once it writes no more.
func (m Meter) every(s *metrics.Set, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		now := time.Now()
		boundary := now.Truncate(m.Every).Add(m.Every)
		t := time.NewTimer(boundary.Sub(now))
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		m.flushAt(s, boundary.Add(-time.Millisecond))
	}
}

// Measured wraps an API function's handler: each invocation carries a
// Set in its context and ends by writing it, with Requests, Faults (a 5xx
// answer, or an error Lambda would answer 502 for) and Latency.
func Measured(m Meter, next Handler) Handler {
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		start, s := time.Now(), m.set()
		resp, err := next(metrics.With(ctx, s), ev)
		s.Add(metrics.Requests, 1)
		if err != nil || resp.StatusCode >= http.StatusInternalServerError {
			s.Add(metrics.Faults, 1)
		} else {
			s.Add(metrics.Faults, 0)
		}
		s.Add(metrics.Latency, float64(time.Since(start).Microseconds())/1000)
		m.flush(s)
		return resp, err
	}
}

// MeasuredRun wraps a scheduled function's run as Measured does a
// handler, with no request metrics: what the run adds is written every
// m.Every while it runs (when m.Every is set) and at its end (its errors
// are Lambda's own Errors metric).
func MeasuredRun(m Meter, run Run) Run {
	return func(ctx context.Context, payload json.RawMessage) error {
		s := m.set()
		if m.Every > 0 {
			stop, done := make(chan struct{}), make(chan struct{})
			go m.every(s, stop, done)
			defer func() { close(stop); <-done; m.flush(s) }()
		} else {
			defer m.flush(s)
		}
		return run(metrics.With(ctx, s), payload)
	}
}
