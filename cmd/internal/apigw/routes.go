package apigw

import (
	"slices"
	"strings"
)

// segment kinds, most specific first.
const (
	literal = iota
	param
	greedy
)

// route is a Route prepared for matching.
type route struct {
	method   string   // upper case; "ANY" matches every method
	key      string   // the routeKey: "GET /orders/{id}" or "$default"
	kinds    []int    // the kind of each "/"-separated segment of the path
	values   []string // each segment's literal, or its parameter's name
	catchAll bool     // the $default route
	iam      bool     // authorized with AWS_IAM
	target   Invoker
}

func newRoute(r Route) route {
	if r.Path == "$default" {
		return route{method: "ANY", key: "$default", catchAll: true, target: r.Target}
	}
	method := strings.ToUpper(r.Method)
	rt := route{method: method, key: method + " " + r.Path, target: r.Target, iam: r.IAM}
	parts := splitPath(r.Path)
	for n, p := range parts {
		name, isVar := strings.CutPrefix(p, "{")
		name, closed := strings.CutSuffix(name, "}")
		kind := param
		switch {
		case !isVar || !closed:
			kind, name = literal, p
		case strings.HasSuffix(name, "+") && n == len(parts)-1:
			kind, name = greedy, strings.TrimSuffix(name, "+")
		}
		rt.kinds = append(rt.kinds, kind)
		rt.values = append(rt.values, name)
	}
	return rt
}

// splitPath splits "/a/b" into ["a" "b"]; "/" gives [""].
func splitPath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// match reports whether the route takes a request with this method and path
// segments, and its path parameters.
func (rt *route) match(method string, parts []string) (map[string]string, bool) {
	if rt.catchAll {
		return nil, true
	}
	if rt.method != "ANY" && rt.method != method {
		return nil, false
	}
	params := map[string]string{}
	for n, kind := range rt.kinds {
		if kind == greedy {
			rest := strings.Join(parts[min(n, len(parts)):], "/")
			params[rt.values[n]] = rest
			return params, rest != ""
		}
		if n >= len(parts) || kind == literal && parts[n] != rt.values[n] || kind == param && parts[n] == "" {
			return nil, false
		}
		if kind == param {
			params[rt.values[n]] = parts[n]
		}
	}
	return nilIfEmpty(params), len(parts) == len(rt.kinds)
}

// moreSpecific reports whether a should win over b when both match, following
// API Gateway: literal segments before path variables before greedy
// variables, a named method before ANY, and $default last.
func moreSpecific(a, b *route) bool {
	if a.catchAll != b.catchAll {
		return b.catchAll
	}
	if c := slices.Compare(a.kinds, b.kinds); c != 0 {
		return c < 0
	}
	return a.method != "ANY" && b.method == "ANY"
}

// find returns the best route for a request and its path parameters.
func find(routes []route, method, path string) (*route, map[string]string) {
	parts := splitPath(path)
	var best *route
	var bestParams map[string]string
	for n := range routes {
		rt := &routes[n]
		params, ok := rt.match(method, parts)
		if ok && (best == nil || moreSpecific(rt, best)) {
			best, bestParams = rt, params
		}
	}
	return best, bestParams
}
