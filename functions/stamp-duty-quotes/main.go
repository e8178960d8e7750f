// Command stamp-duty-quotes is the Lambda function behind GET
// /api/stamp-duty-quotes: the duty an order for a purpose in a state would
// carry, without ordering. The route is public.
package main

import (
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
)

// wire quotes from the articles table, read whole and cached for a minute
// as the article list reads it, to anyone: no token is checked.
func wire(d function.Deps) http.Handler {
	articles := store.NewArticleCache(d.Articles(d.Require("ARTICLES_TABLE")), store.CatalogueTTL)
	return (&handler{quotes: &orders.Quoter{Articles: articles.Catalogue()}}).routes()
}

func main() { function.Main(wire) }
