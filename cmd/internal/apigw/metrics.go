package apigw

// This file holds the local twin of API Gateway's own metrics: on AWS the
// stage publishes Count, 4xx, 5xx and Latency (namespace AWS/ApiGateway,
// dimension ApiId) with no line in any log, and the stack's Api5xxAlarm
// watches 5xx. Locally the handler writes the same numbers per request as
// an embedded-metric-format line to Options.Metrics, so that the local
// stack's summary (cmd/internal/localmetrics) shows what that alarm would
// see: a function that crashes, times out or answers 5xx counts.

import (
	"encoding/json"
	"net/http"
	"time"
)

// ApiNamespace is API Gateway's namespace for its metrics.
const ApiNamespace = "AWS/ApiGateway"

// apiMetrics is one request's EMF record of API Gateway's metrics.
func apiMetrics(apiID string, status int, d time.Duration, now time.Time) []byte {
	flag := func(lo int) int {
		if status >= lo && status < lo+100 {
			return 1
		}
		return 0
	}
	type metric struct{ Name, Unit string }
	rec := map[string]any{
		"ApiId":   apiID,
		"Count":   1,
		"4xx":     flag(http.StatusBadRequest),
		"5xx":     flag(http.StatusInternalServerError),
		"Latency": float64(d.Microseconds()) / 1000,
		"_aws": map[string]any{
			"Timestamp": now.UnixMilli(),
			"CloudWatchMetrics": []map[string]any{{
				"Namespace":  ApiNamespace,
				"Dimensions": [][]string{{"ApiId"}},
				"Metrics": []metric{{"Count", "Count"}, {"4xx", "Count"}, {"5xx", "Count"},
					{"Latency", "Milliseconds"}},
			}},
		},
	}
	line, _ := json.Marshal(rec) // a map of strings, numbers and slices always encodes
	return append(line, '\n')
}
