// Command webhook-dispatch is the Lambda function that sends webhook events
// (webhooks.md). EventBridge starts it every minute; each run polls for
// about a minute, every second: it relays the events of changed orders
// into delivery jobs and attempts the due ones, so that an event's first
// attempt follows its change within a second or two, and retries come on
// their schedule. Runs may overlap; leases keep them off each other's jobs.
package main

import (
	"context"
	"os"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/webhooks"
)

// Poll is how often a run relays and delivers.
const Poll = time.Second

// Margin is how long before the invocation's deadline a run starts no new
// pass: a delivery's timeout and a little more.
const Margin = webhooks.Timeout + 2*time.Second

func main() { function.Scheduled(wire) }

// wire dispatches the outboxes of the orders table to the webhooks of the
// webhooks table through the deliveries table. The stack is local (plain
// http to loopback receivers allowed) exactly when a local Lambda runtime
// says so (config.LocalSignal), as for registration; the Lambda Runtime API
// is refused even then.
func wire(d function.Deps) function.Run {
	disp := &webhooks.Dispatcher{
		Outbox:    d.Orders(d.Require("ORDERS_TABLE")),
		Hooks:     d.Webhooks(d.Require("WEBHOOKS_TABLE")),
		Jobs:      d.Deliveries(d.Require("DELIVERIES_TABLE")),
		Files:     files.Open(d.Env),
		Deliverer: webhooks.Deliverer{Guard: webhooks.Guard{Local: d.Local(), RuntimeAPI: d.Get("AWS_LAMBDA_RUNTIME_API")}},
		Log:       os.Stdout,
	}
	return func(ctx context.Context) error { return disp.Run(ctx, Poll, Margin) }
}
