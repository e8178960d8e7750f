package main

import (
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestCallerTokensRefused: every operator route refuses a caller's test
// token, and its live one, when no IAM identity came with it (the
// function's own check behind API Gateway's AWS_IAM): 403, no DynamoDB
// call, though each route is sent what would move or cancel the caller's
// own test order. test-mode.md: a test token on operator paths.
func TestCallerTokensRefused(t *testing.T) {
	functest.New(t, "OpsFunction", wire).CheckOrderRoutesRefuseCallerTokens(t, 403)
}
