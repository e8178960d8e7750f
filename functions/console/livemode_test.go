package main

import (
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestConsoleShowsTheCallerAndTheMode: the console's order view names the
// caller (owner) by its name, the same for its test and live orders, never
// the test principal's key, and livemode tells the mode (the page shows
// it as "Mode: Test" or "Live").
func TestConsoleShowsTheCallerAndTheMode(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	operator := functest.StaffClaims("operator@console.local", "operator")
	s.CheckOrderShowsCallerAndMode(t, func(doc string) functest.Response {
		return s.Invoke(functest.AsStaff(functest.Request("GET", "/api/console/orders/"+doc, "", nil, ""), operator))
	})
}
