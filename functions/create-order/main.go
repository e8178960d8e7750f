// Command create-order is the Lambda function behind POST /api/live-orders:
// it creates a stamp-duty order for the caller.
package main

import (
	"net/http"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
)

// wire puts the create-order workflow (articles, counters, orders and
// idempotency keys) behind the caller's token check.
func wire(d function.Deps) http.Handler {
	return (&handler{
		auth: d.Authenticator(),
		orders: &orders.Creator{
			Articles: store.NewArticleCache(d.Articles(d.Require("ARTICLES_TABLE")), time.Minute),
			IDs:      d.IDs(d.Require("COUNTERS_TABLE"), store.IDBlock),
			Orders:   d.Orders(d.Require("ORDERS_TABLE")),
			Keys:     d.Idempotency(d.Require("IDEMPOTENCY_TABLE")),
			// The order.created event is recorded when the caller listens.
			Listeners: d.Webhooks(d.Require("WEBHOOKS_TABLE")),
			Now:       time.Now,
		},
	}).routes()
}

func main() { function.Main(wire) }
