// Package fulfillment wires the fulfillment workflow for the functions that store
// files (upload-document, ops). It is apart from package function so that
// the functions without files do not link the S3 SDK.
package fulfillment

import (
	"time"

	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/store"
)

// Wire returns the fulfillment workflow over the orders table ORDERS_TABLE
// names, the files bucket (files.Open), the id counter COUNTERS_TABLE
// names (file ids), the webhooks table WEBHOOKS_TABLE names (whether a
// change's event is recorded) and the uploads table UPLOADS_TABLE names
// (files in flight).
func Wire(d function.Deps) *orders.Fulfiller {
	bucket := files.Open(d.Env)
	return &orders.Fulfiller{
		Orders:  d.Orders(d.Require("ORDERS_TABLE")),
		Files:   bucket,
		Direct:  bucket,
		Watches: d.Uploads(d.Require("UPLOADS_TABLE")),
		IDs:     d.IDs(d.Require("COUNTERS_TABLE"), store.IDBlock),
		// A change's event is recorded when the order's owner listens.
		Listeners: d.Webhooks(d.Require("WEBHOOKS_TABLE")),
		Now:       time.Now,
	}
}

// UploadResponse is a pre-signed upload as the API answers it (lifecycle.md
// "Large files: straight to S3"): {"data": {"upload", "method", "url",
// "headers", "fields", "expiresAt"}}; fields is empty for a PUT.
type UploadResponse struct {
	Data struct {
		Upload    string            `json:"upload"`
		Method    string            `json:"method"`
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers"`
		Fields    map[string]string `json:"fields"`
		ExpiresAt string            `json:"expiresAt"`
	} `json:"data"`
}

// Answer returns u as the API answers it.
func Answer(u orders.Upload) UploadResponse {
	var r UploadResponse
	r.Data.Upload, r.Data.Method, r.Data.URL, r.Data.Headers, r.Data.Fields, r.Data.ExpiresAt =
		u.ID, u.Method, u.URL, u.Headers, map[string]string{}, u.ExpiresAt
	return r
}
