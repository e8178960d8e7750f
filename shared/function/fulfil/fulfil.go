// Package fulfil wires the fulfillment workflow for the functions that store
// files (upload-document, ops). It is apart from package function so that
// the functions without files do not link the S3 SDK.
package fulfil

import (
	"time"

	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
)

// Wire returns the fulfillment workflow over the orders table ORDERS_TABLE
// names, the files bucket (files.Open), the id counter COUNTERS_TABLE
// names (file ids) and the webhooks table WEBHOOKS_TABLE names (whether a
// change's event is recorded).
func Wire(d function.Deps) *orders.Fulfiller {
	return &orders.Fulfiller{
		Orders: d.Orders(d.Require("ORDERS_TABLE")),
		Files:  files.Open(d.Env),
		IDs:    d.IDs(d.Require("COUNTERS_TABLE"), store.IDBlock),
		// A change's event is recorded when the order's owner listens.
		Listeners: d.Webhooks(d.Require("WEBHOOKS_TABLE")),
		Now:       time.Now,
	}
}
