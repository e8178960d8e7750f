// Command create-order is the Lambda function behind POST /api/live-orders:
// it creates a stamp-duty order for the caller.
package main

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
	"stampduty/shared/strapi"
)

func main() { function.Main(wire) }

// wire builds the handler from the environment: config → store → workflow
// → handler, logging one line per request to logger.
func wire(getenv func(string) string, logger *slog.Logger) (http.Handler, error) {
	env := config.New(getenv)
	db := store.Open(env)
	authn, err := auth.FromEnv(env, db.Tokens(env.Require("TOKENS_TABLE")))
	if err != nil {
		return nil, errors.Join(env.Err(), err)
	}
	h := &handler{
		auth: authn,
		orders: &orders.Creator{
			Articles: store.NewArticleCache(db.Articles(env.Require("ARTICLES_TABLE")), time.Minute),
			IDs:      db.IDs(env.Require("COUNTERS_TABLE"), store.IDBlock),
			Orders:   db.Orders(env.Require("ORDERS_TABLE")),
			Keys:     db.Idempotency(env.Require("IDEMPOTENCY_TABLE")),
			Now:      time.Now,
		},
	}
	return strapi.Logged(logger, h.routes()), env.Err()
}
