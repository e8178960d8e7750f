// Command upload-document is the Lambda function behind PUT
// /api/live-orders/{documentId}/document: the caller's document of an order
// (PDF, PNG or JPEG), stored in S3 while the order is Pending.
package main

import (
	"net/http"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
)

func main() { function.Main(wire) }

// wire stores documents in the files bucket and points the caller's orders
// at them.
func wire(env *config.Env, db *store.DB) (http.Handler, error) {
	authn, err := auth.FromEnv(env, db.Tokens(env.Require("TOKENS_TABLE")))
	if err != nil {
		return nil, err
	}
	h := &handler{auth: authn, orders: &orders.Fulfiller{
		Orders: db.Orders(env.Require("ORDERS_TABLE")),
		Files:  files.Open(env),
		IDs:    db.IDs(env.Require("COUNTERS_TABLE"), store.IDBlock),
		Now:    time.Now,
	}}
	return h.routes(), nil
}
