package apigw

// This file holds the local twin of API Gateway's own metrics: on AWS the
// stage publishes Count, 4xx, 5xx and Latency (namespace AWS/ApiGateway,
// dimension ApiId) with no line in any log, and the stack's Api5xxAlarm
// watches 5xx. Locally the handler writes the same numbers per request as
// an embedded-metric-format line to Options.Metrics, so that the local
// stack's summary (cmd/internal/localmetrics) shows what that alarm would
// see: a function that crashes, times out or answers 5xx counts. A
// request whose client hung up counts as the status the function
// answered, as on AWS: a hang-up is not API Gateway's 5xx.

import (
	"net/http"
	"time"

	"stampduty/shared/metrics"
)

// ApiNamespace is API Gateway's namespace for its metrics.
const ApiNamespace = "AWS/ApiGateway"

// apiMetrics is one request's EMF record of API Gateway's metrics, with
// its newline.
func apiMetrics(apiID string, status int, d time.Duration, now time.Time) []byte {
	flag := func(lo int) []float64 {
		if status >= lo && status < lo+100 {
			return []float64{1}
		}
		return []float64{0}
	}
	line, _ := metrics.Record(ApiNamespace, []metrics.Dimension{{Name: "ApiId", Value: apiID}}, []metrics.Value{
		{Name: "Count", Unit: metrics.Count, Values: []float64{1}},
		{Name: "4xx", Unit: metrics.Count, Values: flag(http.StatusBadRequest)},
		{Name: "5xx", Unit: metrics.Count, Values: flag(http.StatusInternalServerError)},
		{Name: "Latency", Unit: metrics.Milliseconds, Values: []float64{float64(d.Microseconds()) / 1000}},
	}, now) // strings and numbers always encode
	return append(line, '\n')
}
