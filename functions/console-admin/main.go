// Command console-admin is the Lambda function behind the staff console's
// admin routes (console.md: callers and their tokens, the catalogue, staff
// accounts), which API Gateway's JWT authorizer (ConsoleAuthorizer) lets
// through only with a valid token of the staff pool, and which serve only a
// member of the admin group. A function apart from ConsoleFunction, so that
// the operators' routes hold no grant to write tokens, articles or accounts.
package main

import (
	"net/http"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/callers"
	"stampduty/shared/function"
)

// wire serves the admin routes over the callers' workflows (the tokens
// table, the orders table to count a caller's orders, and the token
// hashing key to issue tokens), the catalogue's (catalogueWorkflows) and
// the staff's (the Cognito user pool, staffPool).
func wire(d function.Deps) http.Handler {
	return (&handler{
		callers: &callers.Admin{Tokens: d.Tokens(d.Require("TOKENS_TABLE")), Orders: d.Orders(d.Require("ORDERS_TABLE")),
			Hasher: auth.HasherFromEnv(d.Env), Now: time.Now},
		catalogue: catalogueWorkflows(d),
		staff:     staffPool(d.Env),
	}).routes()
}

func main() { function.Main(wire) }
