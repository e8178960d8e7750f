package main

import (
	"testing"

	"stampduty/shared/testkit/functest"
)

// A path API Gateway delivers with a control character in it is answered
// 404 in the envelope, with a token or without, as every function does.
func TestHostilePaths(t *testing.T) {
	functest.CheckHostilePaths(t, functest.New(t, "CancelOrderFunction", wire))
}
