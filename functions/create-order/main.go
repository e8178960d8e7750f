// Command create-order is the Lambda function behind POST /api/live-orders:
// it creates a stamp-duty order for the caller.
package main

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/orders"
	"stampduty/shared/store"
	"stampduty/shared/strapi"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	h, err := wire(os.Getenv, logger)
	if err != nil {
		logger.Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}

// wire builds the handler from the environment: config → store → handler,
// logging one line per request to logger.
func wire(getenv func(string) string, logger *slog.Logger) (http.Handler, error) {
	env := config.New(getenv)
	db := store.Open(env)
	hasher, err := auth.NewHasher(env.Require("TOKEN_HASH_KEY"))
	if err != nil {
		return nil, errors.Join(env.Err(), err)
	}
	h := &handler{
		auth: auth.NewAuthenticator(db.Tokens(env.Require("TOKENS_TABLE")), hasher, auth.CacheTTL),
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
