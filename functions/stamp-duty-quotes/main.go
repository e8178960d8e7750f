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

// wire quotes from the articles table, one article by its key (GetItem),
// cached with misses for as long as the published catalogue's version
// (read at most once a minute) is unchanged, to anyone: no token is
// checked.
func wire(d function.Deps) http.Handler {
	versions := store.NewSnapshotCache(d.Catalogue(d.Require("CATALOGUE_TABLE")), nil, store.CatalogueTTL)
	articles := store.NewVersionedArticleCache(d.Articles(d.Require("ARTICLES_TABLE")), versions)
	return (&handler{quotes: &orders.Quoter{Articles: articles}}).routes()
}

func main() { function.Main(wire) }
