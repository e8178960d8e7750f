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

// segment is one "/"-separated part of a route's path.
type segment struct {
	kind  int
	value string // the literal, or the parameter's name
}

// route is a Route prepared for matching.
type route struct {
	method   string // upper case; "ANY" matches every method
	key      string // the routeKey: "GET /orders/{id}" or "$default"
	segments []segment
	catchAll bool // the $default route
	target   Invoker
}

func newRoute(r Route) route {
	if r.Path == "$default" {
		return route{method: "ANY", key: "$default", catchAll: true, target: r.Target}
	}
	method := strings.ToUpper(r.Method)
	rt := route{method: method, key: method + " " + r.Path, target: r.Target}
	parts := splitPath(r.Path)
	for n, p := range parts {
		name, isVar := strings.CutPrefix(p, "{")
		name, closed := strings.CutSuffix(name, "}")
		switch {
		case !isVar || !closed:
			rt.segments = append(rt.segments, segment{literal, p})
		case strings.HasSuffix(name, "+") && n == len(parts)-1:
			rt.segments = append(rt.segments, segment{greedy, strings.TrimSuffix(name, "+")})
		default:
			rt.segments = append(rt.segments, segment{param, name})
		}
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
	var params map[string]string
	set := func(name, value string) {
		if params == nil {
			params = map[string]string{}
		}
		params[name] = value
	}
	for n, seg := range rt.segments {
		if seg.kind == greedy {
			rest := strings.Join(parts[min(n, len(parts)):], "/")
			if rest == "" {
				return nil, false
			}
			set(seg.value, rest)
			return params, true
		}
		if n >= len(parts) {
			return nil, false
		}
		switch seg.kind {
		case literal:
			if parts[n] != seg.value {
				return nil, false
			}
		case param:
			if parts[n] == "" {
				return nil, false
			}
			set(seg.value, parts[n])
		}
	}
	if len(parts) != len(rt.segments) {
		return nil, false
	}
	return params, true
}

// moreSpecific reports whether a should win over b when both match, following
// API Gateway: literal segments before path variables before greedy
// variables, a named method before ANY, and $default last.
func moreSpecific(a, b *route) bool {
	if a.catchAll != b.catchAll {
		return b.catchAll
	}
	kinds := func(rt *route) []int {
		k := make([]int, len(rt.segments))
		for n, s := range rt.segments {
			k[n] = s.kind
		}
		return k
	}
	if c := slices.Compare(kinds(a), kinds(b)); c != 0 {
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
