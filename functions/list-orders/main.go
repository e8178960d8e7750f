// Command list-orders is the Lambda function behind GET /api/live-orders: it
// lists the caller's orders, newest first, a page at a time.
package main

import (
	"errors"
	"log/slog"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/function"
	"stampduty/shared/store"
	"stampduty/shared/strapi"
)

func main() { function.Main(wire) }

// wire builds the handler from the environment: config → store → handler,
// logging one line per request to logger.
func wire(getenv func(string) string, logger *slog.Logger) (http.Handler, error) {
	env := config.New(getenv)
	db := store.Open(env)
	authn, err := auth.FromEnv(env, db.Tokens(env.Require("TOKENS_TABLE")))
	if err != nil {
		return nil, errors.Join(env.Err(), err)
	}
	h := &handler{auth: authn, orders: db.Orders(env.Require("ORDERS_TABLE"))}
	return strapi.Logged(logger, h.routes()), env.Err()
}
