// Command list-orders is the Lambda function behind GET /api/live-orders: it
// lists the caller's orders, newest first, a page at a time.
package main

import (
	"net/http"

	"stampduty/shared/files"
	"stampduty/shared/function"
)

func main() { function.Main(wire) }

// wire serves the orders table a page at a time, to the owner of the
// token each request carries.
func wire(d function.Deps) http.Handler {
	return (&handler{auth: d.Authenticator(), orders: d.Orders(d.Require("ORDERS_TABLE")), files: files.Open(d.Env).WithLinks(files.Links(d.Env))}).routes()
}
