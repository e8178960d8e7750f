// Command create-order is the Lambda function behind POST /api/live-orders:
// it creates a stamp-duty order for the caller.
package main

import (
	"net/http"
	"time"

	"stampduty/shared/config"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
)

// wire puts the create-order workflow (articles, counters, orders and
// idempotency keys) behind the caller's token check.
func wire(env *config.Env, db *store.DB) http.Handler {
	return (&handler{
		auth: function.Authenticator(env, db),
		orders: &orders.Creator{
			Articles: store.NewArticleCache(db.Articles(env.Require("ARTICLES_TABLE")), time.Minute),
			IDs:      db.IDs(env.Require("COUNTERS_TABLE"), store.IDBlock),
			Orders:   db.Orders(env.Require("ORDERS_TABLE")),
			Keys:     db.Idempotency(env.Require("IDEMPOTENCY_TABLE")),
			Now:      time.Now,
		},
	}).routes()
}

func main() { function.Main(wire) }
