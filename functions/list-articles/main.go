// Command list-articles is the Lambda function behind GET
// /api/stamp-duty-datas: it lists the articles (purpose × state rules), a
// page at a time, sorted as asked. The route is public.
package main

import (
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/store"
)

// wire serves the articles table, read whole and cached for a minute,
// to anyone: no token is checked.
func wire(d function.Deps) http.Handler {
	return (&handler{articles: store.NewArticleCache(d.Articles(d.Require("ARTICLES_TABLE")), store.CatalogueTTL)}).routes()
}

func main() { function.Main(wire) }
