// Command upload-document is the Lambda function behind PUT
// /api/live-orders/{documentId}/document: the caller's document of an order
// (PDF, PNG or JPEG), stored in S3 while the order is Pending.
package main

import (
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/function/fulfillment"
)

func main() { function.Main(wire) }

// wire stores documents in the files bucket and points the caller's orders
// at them.
func wire(d function.Deps) http.Handler {
	return (&handler{auth: d.Authenticator(), orders: fulfillment.Wire(d)}).routes()
}
