package main

import (
	"testing"

	"stampduty/shared/testkit/functest"
)

// A path API Gateway delivers with a control character in it is answered
// 404 in the envelope on every route, with a token or without, and writes
// nothing but the service's own JSON lines to the log.
func TestHostilePaths(t *testing.T) {
	functest.CheckHostilePaths(t, functest.New(t, "AccountFunction", wire))
}
