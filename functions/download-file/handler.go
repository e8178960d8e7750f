package main

import (
	"context"
	"net/http"
	"time"

	"stampduty/shared/function"
)

// handler answers a download link with a redirect to the file.
type handler struct {
	files interface {
		Follow(ctx context.Context, token string, now time.Time) (string, error)
	}
}

// routes answers GET /api/files/{token}. No bearer token: the link is the
// permission, as a pre-signed address is (lifecycle.md "Files").
func (h *handler) routes() http.Handler {
	return function.Routes(function.Path{Method: http.MethodGet, Pattern: "/api/files/{token}", Serve: h.follow})
}

// follow answers 302 to the file's pre-signed S3 address while the link
// works, 403 once it has expired or if it was altered.
func (h *handler) follow(r *http.Request) (any, error) {
	u, err := h.files.Follow(r.Context(), r.PathValue("token"), time.Now())
	if err != nil {
		return nil, err
	}
	return function.Found{Location: u}, nil
}
