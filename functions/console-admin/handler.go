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

// routes answers the admin routes: each area's own (callers.go, ...), and
// the account's CSV (accounts_csv.go), which is no JSON answer.
func (h *handler) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+accountPath+"/entries.csv", function.Budget(http.HandlerFunc(h.entriesCSV)))
	mux.Handle("/", function.Routes(slices.Concat(h.callerRoutes(), h.catalogueRoutes(), h.ruleRoutes(), h.staffRoutes(), h.accountRoutes())...))
	return mux
}
