package main

import (
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestCallerTokensRefused: every console route of the operators refuses a
// caller's test token, and its live one, when no staff id token's claims
// came with it (the function's own check behind API Gateway's JWT
// authorizer): 401, no DynamoDB call, though each route is sent what
// would move or cancel the caller's own test order. test-mode.md: a test
// token on operator paths.
func TestCallerTokensRefused(t *testing.T) {
	functest.New(t, "ConsoleFunction", wire).CheckOrderRoutesRefuseCallerTokens(t, 401)
}
