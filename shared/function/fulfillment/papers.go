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
// fulfillment workflow (orders.Fulfiller).
type Papers interface {
	OpsGet(ctx context.Context, doc string) (stampduty.OpsOrder, error)
	Advance(ctx context.Context, doc, ffDoc string, c stampduty.Change, by string) (stampduty.OpsOrder, error)
	AttachCertificate(ctx context.Context, doc, ffDoc string, u stampduty.Upload) (stampduty.OpsOrder, error)
	AttachStagedCertificate(ctx context.Context, doc, ffDoc, id string) (stampduty.OpsOrder, error)
	NewCertificateUpload(ctx context.Context, doc, ffDoc string, d stampduty.Declared) (orders.Upload, error)
	OpsCancel(ctx context.Context, doc, reason string) (stampduty.OpsOrder, error)
}

// OrderResponse is one order as operators see it: {"data": <OpsOrder>},
// with "meta": {} on reads only, as the operators' API answers.
type OrderResponse struct {
	Data stampduty.OpsOrder `json:"data"`
	Meta *struct{}          `json:"meta,omitempty"`
}

// Routes serve the routes that work one order and its papers, for the
// operators' API and the console alike: each reads the request here once
// and answers as both do. Who acts (by) is each function's own to say:
// it wraps these with its check of the caller (an IAM identity, a staff
// member's role). Paths name the order {documentId} and the paper
// {fulfillmentDocumentId}.
type Routes struct{ Papers Papers }

// Get answers the order {documentId} as operators see it.
func (s Routes) Get(r *http.Request, _ string) (any, error) {
	o, err := s.Papers.OpsGet(r.Context(), r.PathValue("documentId"))
	return read(o, err)
}

// Move moves the paper as r's body says (ReadChange), for by.
func (s Routes) Move(r *http.Request, by string) (any, error) {
	c, err := ReadChange(r)
	if err != nil {
		return nil, err
	}
	return written(s.Papers.Advance(r.Context(), r.PathValue("documentId"), r.PathValue("fulfillmentDocumentId"), c, by))
}

// Attach stores r's body, a PDF, as the paper's certificate, or attaches
// the staged upload a JSON body {"upload": "<id>"} names (Put).
func (s Routes) Attach(r *http.Request, _ string) (any, error) {
	ctx, doc, ffDoc := r.Context(), r.PathValue("documentId"), r.PathValue("fulfillmentDocumentId")
	return written(Put(r,
		func(u stampduty.Upload) (stampduty.OpsOrder, error) {
			return s.Papers.AttachCertificate(ctx, doc, ffDoc, u)
		},
		func(id string) (stampduty.OpsOrder, error) {
			return s.Papers.AttachStagedCertificate(ctx, doc, ffDoc, id)
		}))
}

// Upload makes a pre-signed upload of the paper's certificate (NewUpload).
func (s Routes) Upload(r *http.Request, _ string) (any, error) {
	return NewUpload(r, func(d stampduty.Declared) (orders.Upload, error) {
		return s.Papers.NewCertificateUpload(r.Context(), r.PathValue("documentId"), r.PathValue("fulfillmentDocumentId"), d)
	})
}

// Cancel cancels the order for the reason r's body gives ({"reason":
// "…"}, stampduty.CancelReason), as an operator, and answers the order as
// the other writes do: cancelled now, or as an earlier cancel left it.
func (s Routes) Cancel(r *http.Request, _ string) (any, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return nil, err
	}
	reason, err := stampduty.CancelReason(stampjson.Fields(members))
	if err != nil {
		return nil, err
	}
	return written(s.Papers.OpsCancel(r.Context(), r.PathValue("documentId"), reason))
}

// read answers a read of the order, with "meta": {}.
func read(o stampduty.OpsOrder, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return OrderResponse{Data: o, Meta: &struct{}{}}, nil
}

// written answers a write with the order as it now is.
func written(o stampduty.OpsOrder, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return OrderResponse{Data: o}, nil
}
