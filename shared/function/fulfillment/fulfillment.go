// Package fulfillment wires the fulfillment workflow for the functions that store
// files (upload-document, ops, console), and serves the order and paper
// routes the operators' API and the console share (Routes). It is apart
// from package function so that the functions without files do not link
// the S3 SDK.
package fulfillment

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/jsonobj"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/strapiquery"
)

// Wire returns the fulfillment workflow over the orders table ORDERS_TABLE
// names, the files bucket (files.Open), the id counter COUNTERS_TABLE
// names (file ids), the webhooks table WEBHOOKS_TABLE names (whether a
// change's event is recorded) and the uploads table UPLOADS_TABLE names
// (files in flight).
func Wire(d function.Deps) *orders.Fulfiller {
	bucket := files.Open(d.Env).WithLinks(files.Links(d.Env))
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

// WireMoves is Wire for the functions that move papers (ops, console):
// with the numbers table NUMBERS_TABLE names, where a move claims the
// numbers it stores (papers.md: a number names one paper).
func WireMoves(d function.Deps) *orders.Fulfiller {
	f := Wire(d)
	f.Numbers = d.Numbers(d.Require("NUMBERS_TABLE"))
	// A paper moved to Procured is charged, a cancel releases its hold.
	f.Payments = d.Accounts()
	return f
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

// NewUpload serves a request for a pre-signed upload: it reads the
// declared file (function.ReadDeclared), makes the upload with newUpload
// and answers it as an UploadResponse.
func NewUpload(r *http.Request, newUpload func(stampduty.Declared) (orders.Upload, error)) (any, error) {
	d, err := function.ReadDeclared(r)
	if err != nil {
		return nil, err
	}
	u, err := newUpload(d)
	if err != nil {
		return nil, err
	}
	var a UploadResponse
	a.Data.Upload, a.Data.Method, a.Data.URL, a.Data.Headers, a.Data.Fields, a.Data.ExpiresAt =
		u.ID, u.Method, u.URL, u.Headers, map[string]string{}, u.ExpiresAt
	return a, nil
}

// Put stores the file r brings (lifecycle.md "Large files: straight to
// S3"): the body itself, read with function.ReadUpload, with body; or, when
// the body is JSON, the staged upload {"upload": "<id>"} it names, read
// with function.ReadAttach, with staged.
func Put[T any](r *http.Request, body func(stampduty.Upload) (T, error), staged func(id string) (T, error)) (T, error) {
	if function.IsJSON(r) {
		id, err := function.ReadAttach(r)
		if err != nil {
			var none T
			return none, err
		}
		return staged(id)
	}
	u, err := function.ReadUpload(r)
	if err != nil {
		var none T
		return none, err
	}
	return body(u)
}

// changeFields are the members of a fulfillment change's body:
// order_status, and the references it may bring; any other is refused.
var changeFields = map[string]bool{"order_status": true, "unique_doc_ref": true, "certificate_number": true}

// ReadChange reads the body of a request to move a fulfillment
// (lifecycle.md): {"order_status": "…", "unique_doc_ref": "…",
// "certificate_number": "…"}, only order_status required, every member a
// string; any other member is 400 naming it. The operators' API and the
// console read it alike.
func ReadChange(r *http.Request) (stampduty.Change, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return stampduty.Change{}, err
	}
	var (
		c         stampduty.Change
		bad       []stampduty.FieldError
		hasStatus bool
	)
	for _, m := range members {
		s := m.Value.Text
		switch {
		case !changeFields[m.Key]:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of a fulfillment change"})
		case m.Value.Kind != jsonobj.String:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " must be a string"})
		case m.Key == "order_status":
			c.Status, hasStatus = s, true
		case m.Key == "unique_doc_ref":
			c.UniqueDocRef = strings.TrimSpace(s)
		default:
			c.CertificateNumber = strings.TrimSpace(s)
		}
	}
	if !hasStatus && !slices.ContainsFunc(bad, func(f stampduty.FieldError) bool { return f.Path == "order_status" }) {
		bad = append(bad, stampduty.FieldError{Path: "order_status", Message: "order_status is required"})
	}
	if bad != nil {
		return stampduty.Change{}, stampduty.Invalid(bad)
	}
	return c, nil
}

// ModeParam is the query parameter that picks the live or the test orders
// of an operators' list (the queue, its counts).
const ModeParam = "mode"

// ReadMode reads the mode of an operators' list from q (test-mode.md: test
// orders are listed only when asked for): absent or "live" lists the live
// orders, "test" the test orders only; any other value (an empty one, a
// capitalised one, a second mode) is EINVALID, naming mode. It reports whether the test orders were asked for.
func ReadMode(q strapiquery.Query) (test bool, err error) {
	mode, ok, err := q.Value(ModeParam)
	switch {
	case err != nil:
		return false, err
	case !ok || mode == "live":
		return false, nil
	case mode == "test":
		return true, nil
	}
	msg := "Invalid mode: must be live or test"
	return false, &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: ModeParam, Message: msg}}}
}
