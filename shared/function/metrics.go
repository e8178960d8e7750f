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
}

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

// flush writes s; a metric line that cannot be written is lost, never the
// answer.
func (m Meter) flush(s *metrics.Set) {
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	_ = s.Flush(m.Out, m.Namespace, now())
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
// handler, with no request metrics: what the run adds is written at its
// end (its errors are Lambda's own Errors metric).
func MeasuredRun(m Meter, run Run) Run {
	return func(ctx context.Context, payload json.RawMessage) error {
		s := m.set()
		defer m.flush(s)
		return run(metrics.With(ctx, s), payload)
	}
}
