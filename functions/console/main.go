// Command console is the Lambda function behind the staff console's JSON
// endpoints (/api/console/...), which API Gateway's JWT authorizer
// (ConsoleAuthorizer) lets through only with a valid token of the staff
// pool: who is signed in (GET /api/console/me), and, for an operator or
// an admin, the work queue, one order, moving a paper, attaching its
// certificate and cancelling an order, as the operators' API does them,
// and the webhooks that keep failing.
package main

import (
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/function/fulfillment"
)

// wire serves the console's routes: the operators' fulfillment workflow
// (fulfillment.Wire, as the ops function has it) and the queue's counts
// over the orders table; the failing webhooks over the deliveries and
// webhooks tables; /api/console/me answers from the token's claims.
func wire(d function.Deps) http.Handler {
	return (&handler{orders: fulfillment.WireMoves(d), count: d.Orders(d.Require("ORDERS_TABLE")), failing: failures(d)}).routes()
}

func main() { function.Main(wire) }
