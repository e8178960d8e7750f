package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/function"
)

// env is a local runtime's environment of the pages function.
var env = map[string]string{"COGNITO_CLIENT_ID": "client1", "AWS_REGION": "ap-south-1", "COGNITO_ENDPOINT": "http://127.0.0.1:9229", "AWS_SAM_LOCAL": "true", "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}

// get answers GET path from the function wired over e.
func get(t *testing.T, e map[string]string, path string) *http.Response {
	t.Helper()
	h, err := function.Build(wire, func(k string) string { return e[k] }, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	return w.Result()
}

// TestPages: every file of the console is served under /console/ with its
// type and the security headers (a CSP without inline script or eval that
// lets the page reach the Cognito endpoint, nosniff, no referrer, never
// framed); the shell links only files that exist; anything else is 404.
func TestPages(t *testing.T) {
	for path, ctype := range map[string]string{
		"/console": "text/html", "/console/": "text/html", "/console/index.html": "text/html",
		"/console/console.js": "text/javascript", "/console/console.css": "text/css",
		"/console/favicon.svg": "image/svg+xml", "/console/config.json": "application/json",
	} {
		r := get(t, env, path)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), ctype) {
			t.Errorf("%s: %d %s, want 200 %s", path, r.StatusCode, r.Header.Get("Content-Type"), ctype)
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self';", "frame-ancestors 'none'", "connect-src 'self' http://127.0.0.1:9229 "} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q allows unsafe-*", path, csp)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", path, r.Header)
		}
		if ctype == "text/html" && (strings.Contains(string(body), "<script>") || strings.Contains(string(body), "onclick=") || strings.Contains(string(body), "style=")) {
			t.Errorf("%s has an inline script", path)
		}
	}
	if r := get(t, env, "/console/config.json"); true {
		body, _ := io.ReadAll(r.Body)
		if got, want := string(body), `{"endpoint":"http://127.0.0.1:9229","region":"ap-south-1","clientId":"client1"}`; got != want {
			t.Errorf("config %s, want %s", got, want)
		}
	}
	for _, path := range []string{"/console/nope.js", "/console/../go.mod", "/consolex", "/console/pages.go"} {
		if r := get(t, env, path); r.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", path, r.StatusCode)
		}
	}
}

// TestConfigOnAWS: without COGNITO_ENDPOINT the page signs in at Cognito's
// endpoint of the region; set outside a local runtime it fails the init.
func TestConfigOnAWS(t *testing.T) {
	aws := map[string]string{"COGNITO_CLIENT_ID": "client1", "AWS_REGION": "ap-south-1", "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
	body, _ := io.ReadAll(get(t, aws, "/console/config.json").Body)
	if got, want := string(body), `{"endpoint":"https://cognito-idp.ap-south-1.amazonaws.com/","region":"ap-south-1","clientId":"client1"}`; got != want {
		t.Errorf("config %s, want %s", got, want)
	}
	aws["COGNITO_ENDPOINT"] = "http://127.0.0.1:9229"
	if _, err := function.Build(wire, func(k string) string { return aws[k] }, slog.New(slog.NewJSONHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "COGNITO_ENDPOINT") {
		t.Errorf("init: %v, want it to refuse COGNITO_ENDPOINT", err)
	}
}

// TestModulesAreServed: every file the shell links (script, stylesheet,
// icon, module preload) and every module a module imports is served, so
// that a view's module added to web/ but misspelled in an import is a
// failing test, not a blank console.
func TestModulesAreServed(t *testing.T) {
	linked := regexp.MustCompile(`(?:src|href)="(/console/[^"]+)"`)
	imported := regexp.MustCompile(`(?m)^import (?:.* from )?"\./([^"]+)"`)
	seen := map[string]bool{}
	todo := []string{"/console"}
	for len(todo) > 0 {
		path := todo[0]
		todo = todo[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		r := get(t, env, path)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 {
			t.Errorf("%s: %d, want 200", path, r.StatusCode)
			continue
		}
		for _, m := range linked.FindAllStringSubmatch(string(body), -1) {
			todo = append(todo, m[1])
		}
		for _, m := range imported.FindAllStringSubmatch(string(body), -1) {
			todo = append(todo, "/console/"+m[1])
		}
	}
	for _, want := range []string{"/console/console.js", "/console/core.js", "/console/orders.js", "/console/callers.js"} {
		if !seen[want] {
			t.Errorf("%s is neither linked nor imported; seen %v", want, seen)
		}
	}
}

// TestCompressedAndRevalidated: through the Lambda adapter, as API Gateway
// delivers it, a file is gzipped for a browser that accepts gzip (base64
// in the event, the same bytes once decoded), sent as it is to one that
// does not (or refuses gzip with q=0), and a reload with the ETag is 304
// with no body; each answer says it varies by Accept-Encoding.
func TestCompressedAndRevalidated(t *testing.T) {
	h, err := function.Build(wire, func(k string) string { return env[k] }, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	serve := function.Lambda(h, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	want, err := fs.ReadFile(web, "web/core.js")
	if err != nil {
		t.Fatal(err)
	}
	get := func(headers map[string]string) events.APIGatewayV2HTTPResponse {
		t.Helper()
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "GET /console/{file}", RawPath: "/console/core.js", Headers: headers,
			RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: "$default", HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/console/core.js"}}}
		out, err := serve(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Headers["Vary"]; got != "Accept-Encoding" {
			t.Errorf("Vary = %q; want Accept-Encoding", got)
		}
		return out
	}

	t.Run("GzipForABrowserThatTakesIt", func(t *testing.T) {
		out := get(map[string]string{"accept-encoding": "gzip, deflate, br, zstd"})
		if out.StatusCode != 200 || out.Headers["Content-Encoding"] != "gzip" || !out.IsBase64Encoded {
			t.Fatalf("status %d, Content-Encoding %q, base64 %v; want 200 gzip base64", out.StatusCode, out.Headers["Content-Encoding"], out.IsBase64Encoded)
		}
		raw, err := base64.StdEncoding.DecodeString(out.Body)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the gzip holds %d bytes (%v); want core.js's %d", len(got), err, len(want))
		}
		if len(raw) >= len(want)/2 {
			t.Errorf("gzip is %d bytes of %d", len(raw), len(want))
		}
	})
	for _, accept := range []string{"", "identity", "gzip;q=0"} {
		t.Run("AsItIsFor"+strings.ReplaceAll(cmp.Or(accept, "none"), ";", "_"), func(t *testing.T) {
			headers := map[string]string{}
			if accept != "" {
				headers["accept-encoding"] = accept
			}
			out := get(headers)
			if out.Headers["Content-Encoding"] != "" || out.Body != string(want) {
				t.Errorf("Content-Encoding %q, %d bytes; want core.js as it is", out.Headers["Content-Encoding"], len(out.Body))
			}
		})
	}
	t.Run("AReloadWithTheETagIs304", func(t *testing.T) {
		for _, accept := range []string{"gzip", ""} {
			tag := get(map[string]string{"accept-encoding": accept}).Headers["Etag"]
			if tag == "" {
				t.Fatalf("no ETag for Accept-Encoding %q", accept)
			}
			out := get(map[string]string{"accept-encoding": accept, "if-none-match": tag})
			if out.StatusCode != http.StatusNotModified || out.Body != "" {
				t.Errorf("Accept-Encoding %q, If-None-Match %s: %d with %d bytes; want 304 and no body", accept, tag, out.StatusCode, len(out.Body))
			}
		}
	})
}
