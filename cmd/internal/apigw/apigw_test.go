package apigw

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"stampduty/cmd/internal/runtimeapi"
)

// fakeInvoker hands each event to the test and answers with respond.
type fakeInvoker struct {
	events  chan events.APIGatewayV2HTTPRequest
	respond func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) ([]byte, error)
}

// newFake returns an invoker answering every event with 200 and body "ok".
func newFake() *fakeInvoker {
	return &fakeInvoker{
		events: make(chan events.APIGatewayV2HTTPRequest, 10),
		respond: func(context.Context, events.APIGatewayV2HTTPRequest) ([]byte, error) {
			return []byte(`{"statusCode":200,"body":"ok"}`), nil
		},
	}
}

// answering returns an invoker answering every event with payload and err.
func answering(payload string, err error) *fakeInvoker {
	f := newFake()
	f.respond = func(context.Context, events.APIGatewayV2HTTPRequest) ([]byte, error) {
		return []byte(payload), err
	}
	return f
}

func (f *fakeInvoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("fake: decode event: %w", err)
	}
	f.events <- ev
	return f.respond(ctx, ev)
}

// event returns the event of the request the test just made.
func (f *fakeInvoker) event(t *testing.T) events.APIGatewayV2HTTPRequest {
	t.Helper()
	select {
	case ev := <-f.events:
		return ev
	default:
		t.Fatal("the function was not invoked")
		return events.APIGatewayV2HTTPRequest{}
	}
}

// notInvoked fails the test if the function was invoked.
func (f *fakeInvoker) notInvoked(t *testing.T) {
	t.Helper()
	select {
	case ev := <-f.events:
		t.Fatalf("the function was invoked with %s %s", ev.RequestContext.HTTP.Method, ev.RawPath)
	default:
	}
}

// adapterInvoker runs a handler behind aws-lambda-go-api-proxy in-process,
// as a function's main does, with the event and response as JSON.
type adapterInvoker struct {
	adapter *httpadapter.HandlerAdapterV2
}

func (a adapterInvoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	resp, err := a.adapter.ProxyWithContext(ctx, ev)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return json.Marshal(resp)
}

// serve starts the emulated API on a test server.
func serve(t *testing.T, routes []Route, opts Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(NewHandler(routes, opts))
	t.Cleanup(srv.Close)
	return srv
}

// routeFor returns the route with key "METHOD /path", or "$default", to target.
func routeFor(key string, target Invoker) Route {
	method, path, ok := strings.Cut(key, " ")
	if !ok {
		method, path = "", key
	}
	return Route{Method: method, Path: path, Target: target}
}

// do sends a request and returns the response with its body read.
func do(t *testing.T, method, url string, body io.Reader, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the response: %v", err)
	}
	return resp, b
}

// wantMessage checks one of API Gateway's own answers.
func wantMessage(t *testing.T, resp *http.Response, body []byte, status int, msg string) {
	t.Helper()
	if got, want := resp.StatusCode, status; got != want {
		t.Errorf("status = %d, want %d", got, want)
	}
	if got, want := string(body), `{"message":"`+msg+`"}`; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
	if got, want := resp.Header.Get("Content-Type"), "application/json"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
}

// TestEvent: a request's event carries API Gateway's version, route key,
// path and request context, with a request id of its own.
func TestEvent(t *testing.T) {
	t.Run("sets version, route key, path and request context", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "POST", Path: "/api/live-orders", Target: fn}}, Options{})
		before := time.Now()
		resp, _ := do(t, "POST", srv.URL+"/api/live-orders", strings.NewReader(`{"a":1}`), http.Header{
			"User-Agent":   {"stampduty-test/1.0"},
			"Content-Type": {"application/json"},
		})
		after := time.Now()
		ev := fn.event(t)

		host := strings.TrimPrefix(srv.URL, "http://")
		for _, c := range []struct{ name, got, want string }{
			{"version", ev.Version, "2.0"},
			{"routeKey", ev.RouteKey, "POST /api/live-orders"},
			{"rawPath", ev.RawPath, "/api/live-orders"},
			{"rawQueryString", ev.RawQueryString, ""},
			{"requestContext.routeKey", ev.RequestContext.RouteKey, "POST /api/live-orders"},
			{"requestContext.accountId", ev.RequestContext.AccountID, "000000000000"},
			{"requestContext.apiId", ev.RequestContext.APIID, "local"},
			{"requestContext.stage", ev.RequestContext.Stage, "$default"},
			{"requestContext.domainName", ev.RequestContext.DomainName, host},
			{"requestContext.domainPrefix", ev.RequestContext.DomainPrefix, "127"},
			{"requestContext.requestId", ev.RequestContext.RequestID, resp.Header.Get("Apigw-Requestid")},
			{"requestContext.http.method", ev.RequestContext.HTTP.Method, "POST"},
			{"requestContext.http.path", ev.RequestContext.HTTP.Path, "/api/live-orders"},
			{"requestContext.http.protocol", ev.RequestContext.HTTP.Protocol, "HTTP/1.1"},
			{"requestContext.http.sourceIp", ev.RequestContext.HTTP.SourceIP, "127.0.0.1"},
			{"requestContext.http.userAgent", ev.RequestContext.HTTP.UserAgent, "stampduty-test/1.0"},
			{"body", ev.Body, `{"a":1}`},
		} {
			if c.got != c.want {
				t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
			}
		}
		if len(ev.RequestContext.RequestID) != 16 {
			t.Errorf("requestId %q is not shaped like API Gateway's", ev.RequestContext.RequestID)
		}
		if ev.QueryStringParameters != nil || ev.PathParameters != nil || ev.Cookies != nil {
			t.Errorf("query %v, path parameters %v, cookies %v: want all nil", ev.QueryStringParameters, ev.PathParameters, ev.Cookies)
		}
		if ev.IsBase64Encoded {
			t.Error("isBase64Encoded = true for a JSON body")
		}
		epoch := time.UnixMilli(ev.RequestContext.TimeEpoch)
		if epoch.Before(before.Truncate(time.Millisecond)) || epoch.After(after) {
			t.Errorf("timeEpoch %v not between %v and %v", epoch, before, after)
		}
		tm, err := time.Parse("02/Jan/2006:15:04:05 -0700", ev.RequestContext.Time)
		if err != nil {
			t.Fatalf("time %q: %v", ev.RequestContext.Time, err)
		}
		if got, want := tm, epoch.Truncate(time.Second); !got.Equal(want) {
			t.Errorf("time %v, want %v (from timeEpoch)", got, want)
		}
		if !strings.HasSuffix(ev.RequestContext.Time, " +0000") {
			t.Errorf("time %q is not in UTC", ev.RequestContext.Time)
		}
	})

	t.Run("gives each request its own request id", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: fn}}, Options{})
		do(t, "GET", srv.URL+"/x", nil, nil)
		do(t, "GET", srv.URL+"/x", nil, nil)
		if a, b := fn.event(t).RequestContext.RequestID, fn.event(t).RequestContext.RequestID; a == b {
			t.Errorf("two requests share the request id %q", a)
		}
	})
}

// TestEventParameters: the query string is passed raw and decoded, and path
// parameters as the route names them.
func TestEventParameters(t *testing.T) {
	t.Run("keeps the raw query string and decodes the parameters", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "GET", Path: "/api/live-orders", Target: fn}}, Options{})
		raw := "sort%5B0%5D=purpose_name%3Aasc&sort%5B1%5D=created_at%3Adesc&filter[state]=open&tag=a&tag=b&q=a+b%20c&empty=&flag"
		do(t, "GET", srv.URL+"/api/live-orders?"+raw, nil, nil)
		ev := fn.event(t)
		if got, want := ev.RawQueryString, raw; got != want {
			t.Errorf("rawQueryString = %q, want %q", got, want)
		}
		want := map[string]string{
			"sort[0]":       "purpose_name:asc",
			"sort[1]":       "created_at:desc",
			"filter[state]": "open",
			"tag":           "a,b",
			"q":             "a b c",
			"empty":         "",
			"flag":          "",
		}
		if got := ev.QueryStringParameters; !reflect.DeepEqual(got, want) {
			t.Errorf("queryStringParameters = %v, want %v", got, want)
		}
	})

	for _, c := range []struct {
		name, route, request, rawPath string
		params                        map[string]string
	}{
		{"passes path parameters, percent-decoded like the path", "GET /api/orders/{id}/items/{item}",
			"GET /api/orders/A%20B/items/7", "/api/orders/A B/items/7", map[string]string{"id": "A B", "item": "7"}},
		{"passes the rest of the path to a greedy parameter", "ANY /files/{path+}",
			"DELETE /files/a/b/c.txt", "/files/a/b/c.txt", map[string]string{"path": "a/b/c.txt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fn := newFake()
			srv := serve(t, []Route{routeFor(c.route, fn)}, Options{})
			method, path, _ := strings.Cut(c.request, " ")
			do(t, method, srv.URL+path, nil, nil)
			ev := fn.event(t)
			if got := ev.PathParameters; !reflect.DeepEqual(got, c.params) {
				t.Errorf("pathParameters = %v, want %v", got, c.params)
			}
			if got := ev.RouteKey; got != c.route {
				t.Errorf("routeKey = %q, want %q", got, c.route)
			}
			if got := ev.RawPath; got != c.rawPath {
				t.Errorf("rawPath = %q, want %q", got, c.rawPath)
			}
		})
	}
}

// TestEventHeaders: headers are passed as API Gateway passes them, and
// cookies apart.
func TestEventHeaders(t *testing.T) {
	t.Run("lower-cases header names, joins repeated headers and adds API Gateway's", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: fn}}, Options{})
		do(t, "GET", srv.URL+"/x", nil, http.Header{
			"X-Custom-Header": {"one", "two"},
			"Accept":          {"application/json"},
			"Cookie":          {"a=1"},
		})
		ev := fn.event(t)
		for name, want := range map[string]string{
			"x-custom-header":   "one,two",
			"accept":            "application/json",
			"host":              strings.TrimPrefix(srv.URL, "http://"),
			"x-forwarded-for":   "127.0.0.1",
			"x-forwarded-proto": "http",
			"x-forwarded-port":  srv.URL[strings.LastIndex(srv.URL, ":")+1:],
		} {
			if got := ev.Headers[name]; got != want {
				t.Errorf("header %s = %q, want %q", name, got, want)
			}
		}
		for name := range ev.Headers {
			if name != strings.ToLower(name) {
				t.Errorf("header name %q is not lower case", name)
			}
		}
		if v, ok := ev.Headers["cookie"]; ok {
			t.Errorf("cookie header %q passed, want it in cookies only", v)
		}
		if !strings.HasPrefix(ev.Headers["x-amzn-trace-id"], "Root=1-") {
			t.Errorf("x-amzn-trace-id = %q, want a trace header", ev.Headers["x-amzn-trace-id"])
		}
	})

	t.Run("moves the cookies of all Cookie headers to cookies", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: fn}}, Options{})
		do(t, "GET", srv.URL+"/x", nil, http.Header{"Cookie": {"a=1; b=2", "c=3"}})
		if got, want := fn.event(t).Cookies, []string{"a=1", "b=2", "c=3"}; !reflect.DeepEqual(got, want) {
			t.Errorf("cookies = %q, want %q", got, want)
		}
	})
}

// TestEventBody: a body is passed as text or in base64 as API Gateway
// decides by its content type and UTF-8 validity.
func TestEventBody(t *testing.T) {
	t.Run("encodes bodies by content type and UTF-8 validity", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "POST", Path: "/x", Target: fn}}, Options{})
		text := "héllo ✓ <b>"
		binary := []byte{0x89, 'P', 'N', 'G', 0xff, 0x00}
		for _, c := range []struct {
			contentType string
			body        []byte
			base64      bool
		}{
			{"application/json", []byte(text), false},
			{"application/json; charset=utf-8", []byte(text), false},
			{"text/plain", []byte(text), false},
			{"text/csv", []byte(text), false},
			{"application/vnd.api+json", []byte(text), false},
			{"application/xml", []byte(text), false},
			{"application/atom+xml", []byte(text), false},
			{"application/x-www-form-urlencoded", []byte("a=1&b=%20"), false},
			{"application/javascript", []byte(text), false},
			{"application/octet-stream", []byte(text), true},
			{"image/png", binary, true},
			{"", []byte(text), true},
			{"text/plain", binary, true}, // not valid UTF-8
			{"application/octet-stream", nil, false},
		} {
			header := http.Header{}
			if c.contentType != "" {
				header.Set("Content-Type", c.contentType)
			}
			do(t, "POST", srv.URL+"/x", bytes.NewReader(c.body), header)
			ev := fn.event(t)
			if ev.IsBase64Encoded != c.base64 {
				t.Errorf("%q body %q: isBase64Encoded = %v, want %v", c.contentType, c.body, ev.IsBase64Encoded, c.base64)
			}
			got := []byte(ev.Body)
			if ev.IsBase64Encoded {
				var err error
				if got, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
					t.Errorf("%q body: invalid base64 %q", c.contentType, ev.Body)
				}
			}
			if !bytes.Equal(got, c.body) {
				t.Errorf("%q body: got %q, want %q", c.contentType, got, c.body)
			}
		}
	})
}

func TestRouting(t *testing.T) {
	t.Run("answers 404 for an unknown path without invoking", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "GET", Path: "/api/orders", Target: fn}}, Options{})
		for _, path := range []string{"/api/other", "/api/orders/1", "/api", "/api/orders/"} {
			resp, body := do(t, "GET", srv.URL+path, nil, nil)
			wantMessage(t, resp, body, http.StatusNotFound, "Not Found")
		}
		fn.notInvoked(t)
	})

	t.Run("matches the method exactly", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "GET", Path: "/api/orders", Target: fn}}, Options{})
		for _, method := range []string{"HEAD", "POST", "get"} {
			resp, _ := do(t, method, srv.URL+"/api/orders", nil, nil)
			if got, want := resp.StatusCode, http.StatusNotFound; got != want {
				t.Errorf("%s: status %d, want %d", method, got, want)
			}
		}
		fn.notInvoked(t)
	})

	t.Run("prefers the most specific route", func(t *testing.T) {
		names := []string{"GET /pets/dog/1", "GET /pets/dog/{id}", "GET /pets/{proxy+}", "ANY /{proxy+}", "GET /{proxy+}", "$default"}
		var routes []Route
		for _, name := range names {
			routes = append(routes, routeFor(name, answering(fmt.Sprintf(`{"statusCode":200,"body":%q}`, name), nil)))
		}
		// Registration order must not matter.
		reversed := make([]Route, len(routes))
		for n, r := range routes {
			reversed[len(routes)-1-n] = r
		}
		for _, rs := range [][]Route{routes, reversed} {
			srv := serve(t, rs, Options{})
			for request, want := range map[string]string{
				"GET /pets/dog/1":      "GET /pets/dog/1",
				"GET /pets/dog/2":      "GET /pets/dog/{id}",
				"GET /pets/cat/1":      "GET /pets/{proxy+}",
				"GET /pets/dog/1/toys": "GET /pets/{proxy+}",
				"POST /pets/dog/1":     "ANY /{proxy+}",
				"GET /toys":            "GET /{proxy+}",
				"GET /":                "$default",
			} {
				method, path, _ := strings.Cut(request, " ")
				_, body := do(t, method, srv.URL+path, nil, nil)
				if got := string(body); got != want {
					t.Errorf("%s went to %q, want %q", request, got, want)
				}
			}
		}
	})
}

func TestResponse(t *testing.T) {
	t.Run("answers 413 for a body over MaxBody without invoking", func(t *testing.T) {
		fn := newFake()
		srv := serve(t, []Route{{Method: "POST", Path: "/x", Target: fn}}, Options{MaxBody: 16})
		resp, body := do(t, "POST", srv.URL+"/x", strings.NewReader(strings.Repeat("a", 17)), nil)
		wantMessage(t, resp, body, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		// Without a Content-Length (chunked), the limit applies while reading.
		resp, body = do(t, "POST", srv.URL+"/x", io.MultiReader(strings.NewReader(strings.Repeat("a", 17))), nil)
		wantMessage(t, resp, body, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		fn.notInvoked(t)
		resp, _ = do(t, "POST", srv.URL+"/x", strings.NewReader(strings.Repeat("a", 16)), nil)
		if got, want := resp.StatusCode, http.StatusOK; got != want {
			t.Errorf("body of exactly MaxBody: status %d, want %d", got, want)
		}
	})

	t.Run("maps invocation failures to API Gateway's answers", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			err    error
			status int
			msg    string
		}{
			{"invocation error", errors.New("runtime exited"), http.StatusInternalServerError, "Internal Server Error"},
			{"function error", &runtimeapi.FunctionError{Type: "ValidationError", Message: "bad"}, http.StatusInternalServerError, "Internal Server Error"},
			{"function timeout", fmt.Errorf("invoke fn: %w", runtimeapi.ErrTimeout), http.StatusServiceUnavailable, "Service Unavailable"},
		} {
			t.Run(c.name, func(t *testing.T) {
				srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: answering("", c.err)}}, Options{})
				resp, body := do(t, "GET", srv.URL+"/x", nil, nil)
				wantMessage(t, resp, body, c.status, c.msg)
			})
		}
	})

	t.Run("answers 503 when the integration times out", func(t *testing.T) {
		fn := newFake()
		fn.respond = func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: fn}}, Options{Timeout: 50 * time.Millisecond})
		resp, body := do(t, "GET", srv.URL+"/x", nil, nil)
		wantMessage(t, resp, body, http.StatusServiceUnavailable, "Service Unavailable")
	})

	t.Run("answers 500 for a malformed response", func(t *testing.T) {
		for _, payload := range []string{`not json`, `{"statusCode":"200"}`, `{"statusCode":0}`, `{"statusCode":200,"body":"%%%","isBase64Encoded":true}`} {
			srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: answering(payload, nil)}}, Options{})
			resp, body := do(t, "GET", srv.URL+"/x", nil, nil)
			wantMessage(t, resp, body, http.StatusInternalServerError, "Internal Server Error")
		}
	})

	t.Run("copies status, headers, multi-value headers, cookies and body", func(t *testing.T) {
		payload := `{"statusCode":201,"headers":{"content-type":"text/plain","x-one":"1","x-list":"a,b"},` +
			`"multiValueHeaders":{"x-many":["a","b"]},"cookies":["s=1; Path=/","t=2"],"body":"created ✓"}`
		srv := serve(t, []Route{{Method: "POST", Path: "/x", Target: answering(payload, nil)}}, Options{})
		resp, body := do(t, "POST", srv.URL+"/x", nil, nil)
		if got, want := resp.StatusCode, http.StatusCreated; got != want {
			t.Errorf("status = %d, want %d", got, want)
		}
		if got, want := string(body), "created ✓"; got != want {
			t.Errorf("body = %q, want %q", got, want)
		}
		for name, want := range map[string][]string{
			"Content-Type":   {"text/plain"},
			"X-One":          {"1"},
			"X-List":         {"a,b"},
			"X-Many":         {"a", "b"},
			"Set-Cookie":     {"s=1; Path=/", "t=2"},
			"Content-Length": {fmt.Sprint(len("created ✓"))},
		} {
			if got := resp.Header.Values(name); !reflect.DeepEqual(got, want) {
				t.Errorf("header %s = %q, want %q", name, got, want)
			}
		}
		if resp.Header.Get("Apigw-Requestid") == "" {
			t.Error("no apigw-requestid header")
		}
	})

	t.Run("decodes a base64 body", func(t *testing.T) {
		want := []byte{0x89, 'P', 'N', 'G', 0x00, 0xff}
		payload := fmt.Sprintf(`{"statusCode":200,"headers":{"content-type":"image/png"},"body":%q,"isBase64Encoded":true}`,
			base64.StdEncoding.EncodeToString(want))
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: answering(payload, nil)}}, Options{})
		_, body := do(t, "GET", srv.URL+"/x", nil, nil)
		if !bytes.Equal(body, want) {
			t.Errorf("body = %q, want %q", body, want)
		}
	})

	t.Run("sends no content type the function did not set", func(t *testing.T) {
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: answering(`{"statusCode":200,"body":"<html></html>"}`, nil)}}, Options{})
		resp, _ := do(t, "GET", srv.URL+"/x", nil, nil)
		if got, ok := resp.Header["Content-Type"]; ok {
			t.Errorf("Content-Type = %q, want none", got)
		}
	})

	t.Run("turns a payload without statusCode into a 200 JSON body", func(t *testing.T) {
		for _, payload := range []string{`{"hello":"world"}`, `"just a string"`, `[1,2]`, `42`} {
			srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: answering(payload, nil)}}, Options{})
			resp, body := do(t, "GET", srv.URL+"/x", nil, nil)
			if got, want := resp.StatusCode, http.StatusOK; got != want {
				t.Errorf("%s: status = %d, want %d", payload, got, want)
			}
			if got, want := resp.Header.Get("Content-Type"), "application/json"; got != want {
				t.Errorf("%s: Content-Type = %q, want %q", payload, got, want)
			}
			if got := string(body); got != payload {
				t.Errorf("body = %s, want %s", got, payload)
			}
		}
	})

	t.Run("writes an access log line per request", func(t *testing.T) {
		lines := make(chan string, 10)
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: newFake()}}, Options{Log: lineSink(lines)})
		do(t, "GET", srv.URL+"/x?a=1", nil, nil)
		do(t, "GET", srv.URL+"/missing", nil, nil)
		for _, want := range []string{"GET /x 200 ", "- 404 "} {
			select {
			case line := <-lines:
				if !strings.HasPrefix(line, want) {
					t.Errorf("log line %q, want it to start with %q", line, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no log line for %q", want)
			}
		}
	})
}

// lineSink is a log writer sending each line to a channel.
type lineSink chan string

func (s lineSink) Write(p []byte) (int, error) {
	s <- string(p)
	return len(p), nil
}
