package main

import (
	"net/http"

	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
)

// meResponse is the body of GET /api/console/me: {"data": <staff>, "meta": {}}.
type meResponse struct {
	Data staffauth.Member `json:"data"`
	Meta struct{}         `json:"meta"`
}

// handler is the console's JSON endpoints.
type handler struct {
	orders  work
	count   counter
	failing failingWebhooks
}

// routes answers the console's routes.
func (h *handler) routes() http.Handler {
	return function.Routes(append(append(h.orderRoutes(), h.webhookRoutes()...),
		function.Path{Method: http.MethodGet, Pattern: "/api/console/me", Serve: func(r *http.Request) (any, error) {
			s, err := staffauth.SignedIn(r)
			return meResponse{Data: s}, err
		}},
	)...)
}
