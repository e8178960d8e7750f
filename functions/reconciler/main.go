// Command reconciler is the Lambda function that keeps the callers'
// accounts right (accounts.md, accounts.Reconciler): EventBridge starts it
// every 5 minutes, one run at a time; each run checks every account
// against its entries and its open orders, makes the writes a crash left
// unmade, counts each in LedgerRepairs and each account whose sums
// disagree in LedgerMismatch (the LedgerMismatch alarm).
package main

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/metrics"
	"stampduty/shared/store"
)

// wire reconciles the ledger table against the orders table.
func wire(d function.Deps) function.Run {
	books := d.Ledger(d.Require("LEDGER_TABLE"))
	r := &accounts.Reconciler{
		Books: books, Orders: d.Orders(d.Require("ORDERS_TABLE")),
		Ledger: &accounts.Ledger{Store: books, Now: time.Now},
		Grace:  store.DeadAfter, Log: function.NewLogger(d.Get, os.Stdout), Now: time.Now,
	}
	return func(ctx context.Context, _ json.RawMessage) error { return run(ctx, r) }
}

// run makes one pass and counts what it did, even when it stopped early;
// a quiet run writes no metric (an idle stack pays for none, and the
// alarm reads missing data as fine).
func run(ctx context.Context, r *accounts.Reconciler) error {
	rep, err := r.Run(ctx)
	if rep.Repairs > 0 {
		metrics.Add(ctx, metrics.LedgerRepairs, float64(rep.Repairs))
	}
	if rep.Mismatches > 0 {
		metrics.Add(ctx, metrics.LedgerMismatch, float64(rep.Mismatches))
	}
	return err
}

func main() { function.Scheduled(wire) }
