package main

import (
	"net/http"
	"slices"

	"stampduty/shared/function"
)

// handler is the console's admin routes, each for a member of the admin
// group (staffauth.AsAdmin, checked before anything is read).
type handler struct {
	callers   callerAdmin
	catalogue catalogueAdmin
	staff     staffAdmin
	accounts  accountAdmin
}

// routes answers the admin routes: each area's own (callers.go, ...).
func (h *handler) routes() http.Handler {
	return function.Routes(slices.Concat(h.callerRoutes(), h.catalogueRoutes(), h.ruleRoutes(), h.staffRoutes(), h.accountRoutes())...)
}
