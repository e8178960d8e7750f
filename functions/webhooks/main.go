// Command webhooks is the Lambda function behind the caller's webhooks
// (webhooks.md): POST and GET /api/webhooks, DELETE
// /api/webhooks/{documentId}, GET /api/webhooks/{documentId}/deliveries and
// POST /api/webhook-events/{eventId}/redeliver, for the owner of the bearer
// token each request carries.
package main

import (
	"net/http"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/store"
	"stampduty/shared/webhooks"
)

// wire serves the webhook workflows over the webhooks and deliveries
// tables. The stack is local (plain http to loopback addresses allowed)
// exactly when a local Lambda runtime says so (config.LocalSignal), which
// no deployed function's environment does; the Lambda Runtime API is
// refused even then.
func wire(d function.Deps) http.Handler {
	return wireGuard(d, webhooks.Guard{Local: d.Local(), RuntimeAPI: d.Get("AWS_LAMBDA_RUNTIME_API")})
}

// wireGuard is wire with the URL rules of g.
func wireGuard(d function.Deps, g webhooks.Guard) http.Handler {
	r := &webhooks.Registry{
		Hooks: d.Webhooks(d.Require("WEBHOOKS_TABLE")),
		Jobs:  d.Deliveries(d.Require("DELIVERIES_TABLE")),
		IDs:   d.IDs(d.Require("COUNTERS_TABLE"), store.IDBlock),
		Guard: g,
		Now:   time.Now,
	}
	return (&handler{auth: d.Authenticator(), hooks: r}).routes()
}

func main() { function.Main(wire) }
