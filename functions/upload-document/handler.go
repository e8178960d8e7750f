package main

import (
	"context"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/rules"
	"stampduty/shared/strapi"
)

// handler stores the caller's document of one of its orders.
type handler struct {
	auth   *auth.Authenticator
	orders interface {
		UploadDocument(ctx context.Context, owner, doc string, u rules.Upload) (rules.File, error)
	}
}

// fileResponse is a stored file: {"data": <File>}.
type fileResponse struct {
	Data rules.File `json:"data"`
}

// routes answers PUT /api/live-orders/{documentId}/document.
func (h *handler) routes() http.Handler {
	return function.Routes(function.Path{Method: http.MethodPut, Pattern: "/api/live-orders/{documentId}/document", Serve: function.AsCaller(h.auth, h.put)})
}

// put stores the body, the file itself, as the order's document.
func (h *handler) put(r *http.Request, owner string) (any, error) {
	u, err := strapi.ReadUpload(r)
	if err != nil {
		return nil, err
	}
	f, err := h.orders.UploadDocument(r.Context(), owner, r.PathValue("documentId"), u)
	if err != nil {
		return nil, err
	}
	return fileResponse{Data: f}, nil
}
