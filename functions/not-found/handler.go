package main

import (
	"net/http"
	"net/url"
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

// serve answers a GET or HEAD of a GET route's path with one trailing
// slash more (API Gateway matches neither "/console/" to "/console" nor to
// "/console/{file}") with 308 to that path; else 405
// MethodNotAllowedError, with Allow, when the path is a route's with
// another method, and 404 NotFoundError "Not Found" otherwise (also for a
// request a route does take, which API Gateway never sends here).
func (h *handler) serve() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to, ok := h.withoutSlash(r); ok {
			w.Header().Set("Location", to)
			w.WriteHeader(http.StatusPermanentRedirect)
			return
		}
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

// withoutSlash returns where a GET or HEAD of a path ending in one "/" is
// sent when the path without it is a GET route's: a reference relative to
// the request ("../console" for "/console/", the query kept), so that it
// holds under any stage or base path.
func (h *handler) withoutSlash(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return "", false
	}
	trimmed, ok := strings.CutSuffix(r.URL.Path, "/")
	if !ok || trimmed == "" || strings.HasSuffix(trimmed, "/") {
		return "", false
	}
	for _, rt := range h.routes {
		if _, match := apipath.Parse(rt.Path).Match(trimmed); match && rt.Method == http.MethodGet {
			to := "../" + url.PathEscape(trimmed[strings.LastIndex(trimmed, "/")+1:])
			if r.URL.RawQuery != "" {
				to += "?" + r.URL.RawQuery
			}
			return to, true
		}
	}
	return "", false
}
