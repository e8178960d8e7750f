package fulfillment

import (
	"context"
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// Papers is what the routes that work an order's papers call: the
// fulfillment workflow (orders.Fulfiller). The operators' API and the
// console serve the same routes over it, each with its own way to say who
// acts, so the requests are read here once.
type Papers interface {
	Advance(ctx context.Context, doc, ffDoc string, c stampduty.Change, by string) (stampduty.OpsOrder, error)
	AttachCertificate(ctx context.Context, doc, ffDoc string, u stampduty.Upload) (stampduty.OpsOrder, error)
	AttachStagedCertificate(ctx context.Context, doc, ffDoc, id string) (stampduty.OpsOrder, error)
	NewCertificateUpload(ctx context.Context, doc, ffDoc string, d stampduty.Declared) (orders.Upload, error)
	OpsCancel(ctx context.Context, doc, reason string) (stampduty.OpsOrder, error)
}

// Move moves the paper {fulfillmentDocumentId} of the order {documentId}
// as r's body says (ReadChange), for by.
func Move(r *http.Request, p Papers, by string) (stampduty.OpsOrder, error) {
	c, err := ReadChange(r)
	if err != nil {
		return stampduty.OpsOrder{}, err
	}
	return p.Advance(r.Context(), r.PathValue("documentId"), r.PathValue("fulfillmentDocumentId"), c, by)
}

// Attach stores r's body, a PDF, as the paper's certificate, or attaches
// the staged upload a JSON body {"upload": "<id>"} names (Put).
func Attach(r *http.Request, p Papers) (stampduty.OpsOrder, error) {
	ctx, doc, ffDoc := r.Context(), r.PathValue("documentId"), r.PathValue("fulfillmentDocumentId")
	return Put(r,
		func(u stampduty.Upload) (stampduty.OpsOrder, error) { return p.AttachCertificate(ctx, doc, ffDoc, u) },
		func(id string) (stampduty.OpsOrder, error) { return p.AttachStagedCertificate(ctx, doc, ffDoc, id) })
}

// CertificateUpload makes a pre-signed upload of the paper's certificate
// (NewUpload).
func CertificateUpload(r *http.Request, p Papers) (any, error) {
	return NewUpload(r, func(d stampduty.Declared) (orders.Upload, error) {
		return p.NewCertificateUpload(r.Context(), r.PathValue("documentId"), r.PathValue("fulfillmentDocumentId"), d)
	})
}

// Cancel cancels the order {documentId} for the reason r's body gives
// ({"reason": "…"}, stampduty.CancelReason), as an operator.
func Cancel(r *http.Request, p Papers) (stampduty.OpsOrder, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return stampduty.OpsOrder{}, err
	}
	reason, err := stampduty.CancelReason(stampjson.Fields(members))
	if err != nil {
		return stampduty.OpsOrder{}, err
	}
	return p.OpsCancel(r.Context(), r.PathValue("documentId"), reason)
}
