// Command webhook-dispatch is the Lambda function that sends webhook events
// (webhooks.md). EventBridge starts it every minute; each run polls for
// about a minute, every second: it relays the events of changed orders
// into delivery jobs and attempts the due ones, so that an event's first
// attempt follows its change within a second or two, and retries come on
// their schedule. Runs may overlap; leases keep them off each other's jobs.
package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/specimen"
	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// Poll is how often a run relays and delivers.
const Poll = time.Second

// Margin is how long before the invocation's deadline a run starts no new
// pass: a delivery's timeout and a little more.
const Margin = webhooks.Timeout + 2*time.Second

func main() { function.Scheduled(wire) }

// wire dispatches the outboxes of the orders table to the webhooks of the
// webhooks table through the deliveries table, each invocation as the
// poller its schedule's input names (webhooks.PollerOf: the template runs
// DispatchPollers of them). The stack is local (plain http to loopback
// receivers allowed) exactly when a local Lambda runtime says so
// (config.LocalSignal), as for registration; the Lambda Runtime API is
// refused even then.
func wire(d function.Deps) function.Run {
	outbox, hooks, jobs := d.Orders(d.Require("ORDERS_TABLE")), d.Webhooks(d.Require("WEBHOOKS_TABLE")), d.Deliveries(d.Require("DELIVERIES_TABLE"))
	fs, guard := files.Open(d.Env), webhooks.Guard{Local: d.Local(), RuntimeAPI: d.Get("AWS_LAMBDA_RUNTIME_API")}
	// Test orders step on the due reads (test-mode.md), through the
	// fulfillment workflow, with SPECIMEN certificates.
	steps := webhooks.Steps{Every: d.Seconds("TEST_STEP_SECONDS", stampduty.DefaultStepEvery), Stepper: &orders.Fulfiller{
		Orders: outbox, Files: fs, Listeners: hooks, Numbers: d.Numbers(d.Require("NUMBERS_TABLE")),
		Specimen: specimen.ForOrder, Payments: d.Accounts(), Now: time.Now}}
	// The package's lines, as JSON records (Lambda's JSON log format).
	log := function.Lines(function.NewLogger(d.Get, os.Stdout), slog.LevelInfo, "webhooks")
	ps := &webhooks.Pollers{Log: log, New: func(webhooks.Poller) *webhooks.Dispatcher {
		return &webhooks.Dispatcher{Outbox: outbox, Hooks: hooks, Jobs: jobs, Files: fs, Deliverer: webhooks.Deliverer{Guard: guard},
			Steps: steps, Log: log}
	}}
	return func(ctx context.Context, payload json.RawMessage) error { return ps.Run(ctx, payload, Poll, Margin) }
}
