// Command list-articles is the Lambda function behind GET
// /api/stamp-duty-datas: it lists the articles (purpose × state rules), a
// page at a time, sorted as asked. The route is public.
package main

import (
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

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
	h := &handler{
		articles: store.NewArticleCache(db.Articles(env.Require("ARTICLES_TABLE")), time.Minute),
	}
	return strapi.Logged(logger, h.routes()), env.Err()
}
