package main

import (
	"net/http"
	"slices"
	"strings"

	"stampduty/shared/apipath"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// route is one route of the template: a method and a path pattern, whose
// {name} segments match any one non-empty segment and a last {name+}
// segment the non-empty rest of the path, as API Gateway matches them.
type route struct {
	Method, Path string
}

// handler answers the requests no route takes.
type handler struct {
	routes []route
}

// serve answers 405 MethodNotAllowedError, with Allow, when the path is a
// route's with another method, and 404 NotFoundError "Not Found" otherwise
// (also for a request a route does take, which API Gateway never sends
// here).
func (h *handler) serve() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, rt := range h.routes {
			if _, ok := apipath.Parse(rt.Path).Match(r.URL.Path); ok {
				allow = append(allow, rt.Method)
			}
		}
		if len(allow) == 0 || slices.Contains(allow, r.Method) {
			function.WriteError(w, r, stampduty.Errorf(stampduty.ENOTFOUND, "Not Found"))
			return
		}
		slices.Sort(allow)
		w.Header().Set("Allow", strings.Join(slices.Compact(allow), ", "))
		function.WriteError(w, r, stampduty.Errorf(stampduty.ENOTALLOWED, "Method %s is not allowed here", r.Method))
	})
}
