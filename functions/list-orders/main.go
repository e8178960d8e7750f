// Command list-orders is the Lambda function behind GET /api/live-orders: it
// lists the caller's orders, newest first, a page at a time.
package main

import (
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/store"
)

func main() { function.Main(wire) }

// wire serves the orders table a page at a time, to the owner of the
// token each request carries.
func wire(env *config.Env, db *store.DB) (http.Handler, error) {
	authn, err := auth.FromEnv(env, db.Tokens(env.Require("TOKENS_TABLE")))
	if err != nil {
		return nil, err
	}
	h := &handler{auth: authn, orders: db.Orders(env.Require("ORDERS_TABLE")), files: files.Open(env)}
	return h.routes(), nil
}
