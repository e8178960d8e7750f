package main

import (
	"context"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/function/fulfillment"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// handler stores the caller's document of one of its orders: sent as the
// body, or sent straight to the bucket with a pre-signed upload and then
// attached by its id.
type handler struct {
	auth   *auth.Authenticator
	orders interface {
		UploadDocument(ctx context.Context, owner, doc string, u stampduty.Upload) (stampduty.File, error)
		AttachDocument(ctx context.Context, owner, doc, id string) (stampduty.File, error)
		NewDocumentUpload(ctx context.Context, owner, doc string, d stampduty.Declared) (orders.Upload, error)
	}
}

// fileResponse is a stored file: {"data": <File>}.
type fileResponse struct {
	Data stampduty.File `json:"data"`
}

// routes answers PUT /api/live-orders/{documentId}/document and POST
// /api/live-orders/{documentId}/document/upload.
func (h *handler) routes() http.Handler {
	const path = "/api/live-orders/{documentId}/document"
	return function.Routes(
		function.Path{Method: http.MethodPut, Pattern: path, Serve: function.AsCaller(h.auth, h.put)},
		function.Path{Method: http.MethodPost, Pattern: path + "/upload", Serve: function.AsCaller(h.auth, h.upload)},
	)
}

// put stores the body, the file itself, as the order's document; a JSON
// body {"upload": "<id>"} attaches the file of that upload instead.
func (h *handler) put(r *http.Request, owner string) (any, error) {
	ctx, doc := r.Context(), r.PathValue("documentId")
	f, err := fulfillment.Put(r,
		func(u stampduty.Upload) (stampduty.File, error) { return h.orders.UploadDocument(ctx, owner, doc, u) },
		func(id string) (stampduty.File, error) { return h.orders.AttachDocument(ctx, owner, doc, id) })
	if err != nil {
		return nil, err
	}
	return fileResponse{Data: f}, nil
}

// upload makes a pre-signed upload of the order's document.
func (h *handler) upload(r *http.Request, owner string) (any, error) {
	return fulfillment.NewUpload(r, func(d stampduty.Declared) (orders.Upload, error) {
		return h.orders.NewDocumentUpload(r.Context(), owner, r.PathValue("documentId"), d)
	})
}
