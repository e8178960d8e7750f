// Command get-order is the Lambda function behind GET
// /api/live-orders/{documentId}: one of the caller's orders, with fresh
// download addresses for its files.
package main

import (
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
)

func main() { function.Main(wire) }

// wire reads one order through the documentId index, for the owner of the
// token each request carries.
func wire(env *config.Env, db *store.DB) (http.Handler, error) {
	authn, err := auth.FromEnv(env, db.Tokens(env.Require("TOKENS_TABLE")))
	if err != nil {
		return nil, err
	}
	h := &handler{auth: authn, orders: &orders.Fulfiller{Orders: db.Orders(env.Require("ORDERS_TABLE")), Files: files.Open(env)}}
	return h.routes(), nil
}
