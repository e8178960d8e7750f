// Command list-orders is the Lambda function behind GET /api/live-orders: it
// lists the caller's orders, newest first, a page at a time.
package main

import (
	"net/http"

	"stampduty/shared/config"
	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/store"
)

func main() { function.Main(wire) }

// wire serves the orders table a page at a time, to the owner of the
// token each request carries.
func wire(env *config.Env, db *store.DB) http.Handler {
	return (&handler{auth: function.Authenticator(env, db), orders: db.Orders(env.Require("ORDERS_TABLE")), files: files.Open(env)}).routes()
}
