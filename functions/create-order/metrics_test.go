package main

import (
	"strings"
	"testing"

	"stampduty/shared/metrics"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

// TestMetricLines: the function's invocations, measured as function.Main
// measures them (functest.Stack.Metrics), write the metrics their alarms and dashboard watch: an
// order created counts by state, and a table that throttles (through the
// metering proxy's faults) answers 503 and writes DynamoDBThrottles and
// DynamoDBRetries for this function, beside its Faults.
func TestMetricLines(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	create := func() (int, map[string]float64) {
		t.Helper()
		before := len(s.Metrics.String())
		resp := s.Invoke(functest.Request("POST", "/api/live-orders", "", functest.DevHeaders, body(map[string]any{"quantity": 2})))
		got := map[string]float64{}
		for line := range strings.Lines(s.Metrics.String()[before:]) {
			points, ok, err := metrics.Read([]byte(line))
			if !ok || err != nil {
				t.Fatalf("a line that is not a metric record: %q (%v)", line, err)
			}
			for _, p := range points {
				key := string(p.Name)
				for _, d := range []string{metrics.State, metrics.FunctionName} {
					if v, ok := p.Dimensions[d]; ok {
						key += " " + d + "=" + v
					}
				}
				for _, v := range p.Values {
					got[key] += v
				}
			}
		}
		return resp.Status, got
	}

	t.Run("an order created counts by state", func(t *testing.T) {
		status, got := create()
		if status != 200 {
			t.Fatalf("status %d", status)
		}
		if got["OrdersCreated State=KA"] != 1 || got["PapersOrdered State=KA"] != 2 || got["Faults FunctionName=CreateOrderFunction"] != 0 {
			t.Errorf("metrics %v; want one order of two papers in KA, no fault", got)
		}
	})
	t.Run("a throttled table writes the DynamoDB throttle alarm's metric", func(t *testing.T) {
		s.Proxy.SetFault(func(storetest.ProxyCall) *storetest.Fault {
			return &storetest.Fault{Status: 400, Type: "ProvisionedThroughputExceededException"}
		})
		status, got := create()
		s.Proxy.SetFault(nil)
		if status != 503 {
			t.Fatalf("status %d; want 503", status)
		}
		// At least one call, and each of its 3 attempts, throttled.
		if got["DynamoDBThrottles FunctionName=CreateOrderFunction"] < 3 || got["DynamoDBRetries FunctionName=CreateOrderFunction"] < 2 ||
			got["Faults FunctionName=CreateOrderFunction"] != 1 || got["OrdersCreated State=KA"] != 0 {
			t.Errorf("metrics %v; want 3 throttles or more, 2 retries or more, a fault and no order", got)
		}
	})
}
