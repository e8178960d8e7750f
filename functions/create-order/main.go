// Command create-order is the Lambda function behind POST /api/live-orders
// and POST /api/live-orders/batch: it creates a caller's stamp-duty order,
// or a batch of them.
package main

import (
	"net/http"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/webhooks"
)

// wire puts the create-order workflow (articles, counters, orders and
// idempotency keys) behind the caller's token check.
func wire(d function.Deps) http.Handler { return wireAt(d, time.Now) }

// wireAt is wire with the clock now (tests move it past a key's lease).
func wireAt(d function.Deps, now func() time.Time) http.Handler {
	ords, keys := d.Orders(d.Require("ORDERS_TABLE")), d.Idempotency(d.Require("IDEMPOTENCY_TABLE"))
	hooks, jobs := d.Webhooks(d.Require("WEBHOOKS_TABLE")), d.Deliveries(d.Require("DELIVERIES_TABLE"))
	// A hold that takes available below the threshold tells
	// account.low_balance to the caller's webhooks (accounts.md, Events).
	ledger := d.Accounts()
	ledger.Events = &webhooks.Publisher{Hooks: hooks, Jobs: jobs}
	creator := &orders.Creator{
		Articles: store.NewArticleCache(d.Articles(d.Require("ARTICLES_TABLE")), time.Minute),
		IDs:      d.IDs(d.Require("COUNTERS_TABLE"), store.IDBlock),
		Orders:   ords,
		Keys:     keys,
		// The order.created event is recorded when the caller listens.
		Listeners: hooks,
		// A test order's first step (test-mode.md) is a job in the deliveries table.
		Steps:     jobs,
		StepEvery: d.Seconds("TEST_STEP_SECONDS", stampduty.DefaultStepEvery),
		// Each order's total is held on its caller's account (accounts.md).
		Payments: ledger,
		Now:      now,
	}
	return (&handler{
		auth:   d.Authenticator(),
		orders: creator,
		// A batch's rows go through the same checks and the same writes.
		batch: &orders.Batcher{Creator: creator, Orders: ords, Keys: keys},
	}).routes()
}

func main() { function.Main(wire) }
