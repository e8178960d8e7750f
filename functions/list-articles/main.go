// Command list-articles is the Lambda function behind GET
// /api/stamp-duty-datas: it lists the articles (purpose × state rules), a
// page at a time, sorted as asked. The route is public.
package main

import (
	"log/slog"
	"net/http"
	"time"

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
	h := &handler{
		articles: store.NewArticleCache(db.Articles(env.Require("ARTICLES_TABLE")), time.Minute),
	}
	return strapi.Logged(logger, h.routes()), env.Err()
}
