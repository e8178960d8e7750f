// Command list-orders is the Lambda function behind GET /api/live-orders: it
// lists the caller's orders, newest first, a page at a time.
package main

import (
	"errors"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"stampduty/shared/auth"
	"stampduty/shared/config"
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
		auth:   auth.NewAuthenticator(db.Tokens(env.Require("TOKENS_TABLE")), hasher, auth.CacheTTL),
		orders: db.Orders(env.Require("ORDERS_TABLE")),
	}
	return strapi.Logged(logger, h.routes()), env.Err()
}
