// Command list-articles is the Lambda function behind GET
// /api/stamp-duty-datas: it lists the articles (purpose × state rules), a
// page at a time, sorted as asked. The route is public.
package main

import (
	"net/http"

	"stampduty/shared/catalogue"
	"stampduty/shared/function"
	"stampduty/shared/store"
)

// wire serves the published catalogue (its version checked at most once a
// minute; the articles table read whole only on a stack where no snapshot
// was ever published) to anyone: no token is checked.
func wire(d function.Deps) http.Handler {
	cat := store.NewSnapshotCache(d.Catalogue(d.Require("CATALOGUE_TABLE")), d.Articles(d.Require("ARTICLES_TABLE")), store.CatalogueTTL)
	return (&handler{articles: &catalogue.Lister{Articles: cat}}).routes()
}

func main() { function.Main(wire) }
