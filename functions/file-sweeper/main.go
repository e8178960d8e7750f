// Command file-sweeper is the Lambda function that removes the files no
// order points at (lifecycle.md "Large files: straight to S3"; see
// orders.Watch): EventBridge starts it every hour; each run settles every
// watch that is due — files of uploads that failed or were killed half-way,
// replaced files a request could not remove, staged uploads never attached.
package main

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
)

// wire sweeps the watches of the uploads table against the orders table
// and the files bucket, logging one line per run.
func wire(d function.Deps) function.Run {
	sw := &orders.Sweeper{
		Watches: d.Uploads(d.Require("UPLOADS_TABLE")),
		Orders:  d.Orders(d.Require("ORDERS_TABLE")),
		Files:   files.Open(d.Env),
		Now:     time.Now,
		Log:     os.Stdout,
	}
	return func(ctx context.Context, _ json.RawMessage) error { return sw.Run(ctx) }
}

func main() { function.Scheduled(wire) }
