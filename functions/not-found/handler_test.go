package main

import (
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestMain runs the tests against the local engines (dynalite), which
// functest needs.
func TestMain(m *testing.M) { functest.Main(m) }

func TestNotFound(t *testing.T) {
	s := functest.New(t, "NotFoundFunction", wire)
	send := func(method, path string) functest.Response {
		t.Helper()
		ev := functest.Request(method, path, "", nil, "")
		ev.RouteKey, ev.RequestContext.RouteKey = "$default", "$default"
		return s.Invoke(ev)
	}

	// check sends "METHOD /path" and checks the envelope: its status, name
	// and message, and the Allow header.
	check := func(t *testing.T, req string, status int, errName, message, allow string) {
		t.Helper()
		method, path, _ := strings.Cut(req, " ")
		r := send(method, path)
		if r.Status != status {
			t.Fatalf("%s: status %d, want %d: %s", req, r.Status, status, r.Body)
		}
		e := r.Error(t)
		if e.Error.Name != errName || e.Error.Message != message || r.Headers["Allow"] != allow {
			t.Errorf("%s: %s %q, Allow %q; want %s %q, Allow %q", req, e.Error.Name, e.Error.Message, r.Headers["Allow"], errName, message, allow)
		}
	}
	t.Run("PathsTheAPIDoesNotHave", func(t *testing.T) {
		// Unknown, the root, any method, an extra segment, an empty parameter,
		// a trailing slash, another case; and a route's own request, which
		// API Gateway never sends here.
		for _, req := range []string{"GET /api/nothing", "GET /", "DELETE /api/nothing", "GET /api/live-orders/abc/extra",
			"PUT /api/live-orders//document", "POST /api/live-orders/", "GET /api/stamp-duty-datas//", "GET /api/nothing/", "GET /API/live-orders", "GET /api/live-orders/abc"} {
			check(t, req, 404, "NotFoundError", "Not Found", "")
		}
	})
	t.Run("PathsWithAnotherMethod", func(t *testing.T) {
		for req, allow := range map[string]string{"PATCH /api/live-orders/abc": "DELETE, GET", "PUT /api/live-orders": "GET, POST",
			"POST /api/stamp-duty-datas":                            "GET",
			"GET /api/ops/live-orders/a/fulfillments/b/certificate": "PUT"} {
			method, _, _ := strings.Cut(req, " ")
			check(t, req, 405, "MethodNotAllowedError", "Method "+method+" is not allowed here", allow)
		}
	})

	t.Run("ATrailingSlashIsSentToTheRoute", func(t *testing.T) {
		// A person typing /console/ reaches the console; relative, so that
		// it holds under a stage's path.
		for _, tc := range []struct{ method, path, query, want string }{
			{"GET", "/console/", "", "../console"},
			{"HEAD", "/console/", "", "../console"},
			{"GET", "/api/stamp-duty-datas/", "pagination[page]=2", "../stamp-duty-datas?pagination[page]=2"},
			{"GET", "/api/live-orders/k3v9xq2m7p4r8t1w5y6z0abc/", "", "../k3v9xq2m7p4r8t1w5y6z0abc"},
		} {
			ev := functest.Request(tc.method, tc.path, tc.query, nil, "")
			ev.RouteKey, ev.RequestContext.RouteKey = "$default", "$default"
			r := s.Invoke(ev)
			if got, want := r.Status, 308; got != want || r.Headers["Location"] != tc.want || r.Body != "" {
				t.Errorf("%s %s?%s: %d, Location %q, body %q; want %d, Location %q, no body", tc.method, tc.path, tc.query, got, r.Headers["Location"], r.Body, want, tc.want)
			}
		}
	})

	t.Run("HeadWithoutBody", func(t *testing.T) {
		r := send("HEAD", "/api/stamp-duty-quotes")
		if r.Status != 405 || r.Body != "" || r.Headers["Allow"] != "GET" {
			t.Errorf("HEAD: status %d, Allow %q, body %q; want 405, Allow GET, no body", r.Status, r.Headers["Allow"], r.Body)
		}
	})

	// Every route of the template, asked with a method it does not have.
	t.Run("EveryRouteWithOtherMethods", func(t *testing.T) {
		for _, rt := range templateRoutes() {
			path := strings.NewReplacer("{documentId}", "k3v9xq2m7p4r8t1w5y6z0abc", "{fulfillmentDocumentId}", "f1").Replace(rt.Path)
			for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
				if routeHas(rt.Path, m) || routeMatches(path, m) {
					continue // API Gateway sends it to that route, not here
				}
				if r := send(m, path); r.Status != 405 || r.Error(t).Error.Name != "MethodNotAllowedError" {
					t.Errorf("%s %s: status %d, want 405: %s", m, path, r.Status, r.Body)
				}
			}
		}
	})

	t.Run("Events", func(t *testing.T) {
		s.CheckEvents(t, map[string]int{"not-found": 404, "not-found-method": 405})
	})

	t.Run("Template", func(t *testing.T) {
		s.CheckTemplate(s.Proxy.All())
		s.CheckRoutes()
		if calls := s.Proxy.All(); len(calls) != 0 {
			t.Errorf("the catch-all made %d DynamoDB calls", len(calls))
		}
	})
}

// routeMatches reports whether a template route with method matches the
// concrete path, a {parameter} matching any one non-empty segment: as
// GET /api/live-orders/{documentId} matches GET /api/live-orders/batch,
// which API Gateway therefore routes to get-order, whatever other methods
// POST /api/live-orders/batch has.
func routeMatches(path, method string) bool {
	segs := strings.Split(path, "/")
	for _, rt := range templateRoutes() {
		pat := strings.Split(rt.Path, "/")
		if rt.Method != method || len(pat) != len(segs) {
			continue
		}
		match := true
		for i, p := range pat {
			if p != segs[i] && !(strings.HasPrefix(p, "{") && segs[i] != "") {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// routeHas reports whether the template has a route of path with method.
func routeHas(path, method string) bool {
	for _, rt := range templateRoutes() {
		if rt.Path == path && rt.Method == method {
			return true
		}
	}
	return false
}
