// Command get-order is the Lambda function behind GET
// /api/live-orders/{documentId}: one of the caller's orders, with fresh
// download addresses for its files.
package main

import (
	"net/http"

	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
)

func main() { function.Main(wire) }

// wire reads one order by its key (or the documentId index), for the owner of the
// token each request carries, with the rule version it was priced with
// (by its hash, from the catalogue table; each read once an instance).
func wire(d function.Deps) http.Handler {
	orders := &orders.Fulfiller{Orders: d.Orders(d.Require("ORDERS_TABLE")), Files: files.Open(d.Env).WithLinks(files.Links(d.Env)),
		Rules: &orders.SnapshotCache{From: d.Catalogue(d.Require("CATALOGUE_TABLE"))}}
	return (&handler{auth: d.Authenticator(), orders: orders}).routes()
}
