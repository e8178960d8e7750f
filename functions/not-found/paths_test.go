package main

import (
	"testing"

	"stampduty/shared/testkit/functest"
)

// A path API Gateway delivers with a control character in it (issue 17:
// a forged log line, %00 %01 %0d %7f) is answered 404 in the envelope on
// every route, with a token or without (signed, on operator routes), and
// writes nothing but the service's own JSON lines to the log.
func TestHostilePaths(t *testing.T) {
	functest.CheckHostilePaths(t, functest.New(t, "NotFoundFunction", wire))
}
