// Command upload-document is the Lambda function behind PUT
// /api/live-orders/{documentId}/document: the caller's document of an order
// (PDF, PNG or JPEG), stored in S3 while the order is Pending.
package main

import (
	"net/http"

	"stampduty/shared/config"
	"stampduty/shared/function"
	"stampduty/shared/function/fulfil"
	"stampduty/shared/store"
)

func main() { function.Main(wire) }

// wire stores documents in the files bucket and points the caller's orders
// at them.
func wire(env *config.Env, db *store.DB) http.Handler {
	return (&handler{auth: function.Authenticator(env, db), orders: fulfil.Wire(env, db)}).routes()
}
