// Command get-order is the Lambda function behind GET
// /api/live-orders/{documentId}: one of the caller's orders, with fresh
// download addresses for its files.
package main

import (
	"net/http"

	"stampduty/shared/config"
	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
)

func main() { function.Main(wire) }

// wire reads one order through the documentId index, for the owner of the
// token each request carries.
func wire(env *config.Env, db *store.DB) http.Handler {
	orders := &orders.Fulfiller{Orders: db.Orders(env.Require("ORDERS_TABLE")), Files: files.Open(env)}
	return (&handler{auth: function.Authenticator(env, db), orders: orders}).routes()
}
