// Command cancel-order is the Lambda function behind DELETE
// /api/live-orders/{documentId}: the caller cancels one of its orders
// while every fulfillment is Pending (papers.md, Cancellation), and it
// answers as Strapi v5 answers a delete: 204, no body.
//
// It is a function of its own, not a route of upload-document (which also
// writes one order for its caller): a cancel needs only the order's read
// and write and the webhooks' read (whether order.cancelled is recorded),
// and none of upload-document's S3 writes, uploads table and id counter,
// so each function keeps exactly the grants it uses.
package main

import (
	"net/http"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/orders"
)

func main() { function.Main(wire) }

// wire cancels the orders of the owner of the token each request carries,
// recording order.cancelled when the owner listens to it.
func wire(d function.Deps) http.Handler {
	f := &orders.Fulfiller{Orders: d.Orders(d.Require("ORDERS_TABLE")), Listeners: d.Webhooks(d.Require("WEBHOOKS_TABLE")),
		Payments: d.Accounts(), Now: time.Now}
	return (&handler{auth: d.Authenticator(), orders: f}).routes()
}
