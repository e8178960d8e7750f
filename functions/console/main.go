// Command console is the Lambda function behind the staff console's JSON
// endpoints (/api/console/...), which API Gateway's JWT authorizer
// (ConsoleAuthorizer) lets through only with a valid token of the staff
// pool: for now GET /api/console/me, who is signed in and in which groups.
package main

import (
	"net/http"

	"stampduty/shared/function"
)

// wire serves the console's routes; /api/console/me needs no table and no
// setting: it answers from the token's claims.
func wire(function.Deps) http.Handler { return routes() }

func main() { function.Main(wire) }
