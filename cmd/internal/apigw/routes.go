package apigw

import (
	"slices"
	"strings"

	"stampduty/shared/apipath"
)

// route is a Route prepared for matching.
type route struct {
	method   string       // upper case; "ANY" matches every method
	key      string       // the routeKey: "GET /orders/{id}" or "$default"
	path     apipath.Path // the path, as API Gateway matches it
	catchAll bool         // the $default route
	iam      bool         // authorized with AWS_IAM
	jwt      *JWT         // the JWT authorizer, nil when none
	target   Invoker
}

func newRoute(r Route) route {
	if r.Path == "$default" {
		return route{method: "ANY", key: "$default", catchAll: true, target: r.Target}
	}
	method := strings.ToUpper(r.Method)
	return route{method: method, key: method + " " + r.Path, path: apipath.Parse(r.Path), target: r.Target, iam: r.IAM, jwt: r.JWT}
}

// match reports whether the route takes a request with this method and
// path, and its path parameters.
func (rt *route) match(method, path string) (map[string]string, bool) {
	if rt.catchAll {
		return nil, true
	}
	if rt.method != "ANY" && rt.method != method {
		return nil, false
	}
	return rt.path.Match(path)
}

// moreSpecific reports whether a should win over b when both match, following
// API Gateway: literal segments before path variables before greedy
// variables, a named method before ANY, and $default last.
func moreSpecific(a, b *route) bool {
	if a.catchAll != b.catchAll {
		return b.catchAll
	}
	if c := slices.Compare(a.path.Kinds(), b.path.Kinds()); c != 0 {
		return c < 0
	}
	return a.method != "ANY" && b.method == "ANY"
}

// find returns the best route for a request and its path parameters.
func find(routes []route, method, path string) (*route, map[string]string) {
	var best *route
	var bestParams map[string]string
	for n := range routes {
		rt := &routes[n]
		params, ok := rt.match(method, path)
		if ok && (best == nil || moreSpecific(rt, best)) {
			best, bestParams = rt, params
		}
	}
	return best, bestParams
}
