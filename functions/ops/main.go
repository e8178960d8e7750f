// Command ops is the Lambda function behind the operators' API,
// /api/ops/live-orders: the work queue, one order, moving a fulfillment and
// attaching its certificate. API Gateway admits only requests signed by an
// IAM identity (AWS_IAM); the operator is that identity's ARN.
package main

import (
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/function/fulfillment"
)

func main() { function.Main(wire) }

// wire serves the fulfillment workflow over the orders table, its indexes
// and the files bucket.
func wire(d function.Deps) http.Handler {
	return (&handler{orders: fulfillment.WireMoves(d)}).routes()
}
