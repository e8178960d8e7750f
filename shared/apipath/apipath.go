// Package apipath matches request paths against the paths of API Gateway HTTP
// API routes ("/api/live-orders/{documentId}", "/files/{proxy+}") the way
// API Gateway does: a literal segment matches itself, case-sensitively; a
// {name} segment any one non-empty segment; a last {name+} segment the
// non-empty rest of the path; a trailing slash makes another path. The
// $default route's function, the local API Gateway and the tests' OpenAPI
// check all match with it, so the three agree on which route takes a
// request.
package apipath

import "strings"

// Kind is the kind of a path segment, most specific first.
type Kind int

// The kinds of segment.
const (
	Literal Kind = iota // matches itself
	Param               // {name}: one non-empty segment
	Greedy              // {name+}, last: the non-empty rest of the path
)

// Path is a route's path, prepared for matching.
type Path struct {
	kinds  []Kind
	values []string // each segment's literal, or its parameter's name
}

// Parse prepares a route path such as "/api/live-orders/{documentId}".
func Parse(path string) Path {
	var p Path
	parts := split(path)
	for n, s := range parts {
		name, open := strings.CutPrefix(s, "{")
		name, closed := strings.CutSuffix(name, "}")
		kind := Param
		switch {
		case !open || !closed:
			kind, name = Literal, s
		case strings.HasSuffix(name, "+") && n == len(parts)-1:
			kind, name = Greedy, strings.TrimSuffix(name, "+")
		}
		p.kinds = append(p.kinds, kind)
		p.values = append(p.values, name)
	}
	return p
}

// split splits "/a/b" into ["a" "b"]; "/" gives [""].
func split(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// Kinds returns the kind of each segment, for ranking routes that match the
// same request (fewer and later variables are more specific).
func (p Path) Kinds() []Kind { return p.kinds }

// Match reports whether the request path is one of p's, and the values of
// its path parameters (nil when it has none).
func (p Path) Match(path string) (map[string]string, bool) {
	parts := split(path)
	var params map[string]string
	set := func(name, value string) {
		if params == nil {
			params = map[string]string{}
		}
		params[name] = value
	}
	for n, kind := range p.kinds {
		if kind == Greedy {
			rest := strings.Join(parts[min(n, len(parts)):], "/")
			set(p.values[n], rest)
			return params, rest != ""
		}
		if n >= len(parts) || kind == Literal && parts[n] != p.values[n] || kind == Param && parts[n] == "" {
			return nil, false
		}
		if kind == Param {
			set(p.values[n], parts[n])
		}
	}
	return params, len(parts) == len(p.kinds)
}
