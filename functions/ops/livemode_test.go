package main

import (
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestOperatorsSeeTheCallerAndTheMode: an operator reading an order sees
// the caller's name as owner, the same for its test and live orders, never
// the test principal's key (<name>~test), and livemode tells the mode.
func TestOperatorsSeeTheCallerAndTheMode(t *testing.T) {
	s := operating{Stack: functest.New(t, "OpsFunction", wire)}
	s.CheckOrderShowsCallerAndMode(t, func(doc string) functest.Response {
		return s.invoke(functest.Request("GET", "/api/ops/live-orders/"+doc, "", nil, ""))
	})
}
