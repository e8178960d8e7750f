package function_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// event is an API Gateway event for a request, as API Gateway builds it:
// the path percent-decoded in both rawPath and requestContext.http.path.
func event(method, path, query string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "ANY /api/things/{id}", RawPath: path, RawQueryString: query,
		Headers: map[string]string{"host": "api.example.com"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "api.example.com", RouteKey: "ANY /api/things/{id}", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"},
		},
	}
}

// errorBody is what function.WriteError answers err with.
func errorBody(err error) string {
	w := httptest.NewRecorder()
	function.WriteError(w, httptest.NewRequest(http.MethodGet, "/", nil), err)
	return w.Body.String()
}

// checkLog fails unless every line of logs is one JSON object with the
// service's "msg" of a request line.
func checkLog(t testing.TB, logs string) {
	t.Helper()
	for line := range strings.Lines(logs) {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil || entry["msg"] != "request" {
			t.Errorf("log line %q is not one of the service's JSON lines", line)
		}
	}
}

// The attack: a control character in the path, with the forged log
// line of its exact curl, on a route of each kind.
func TestLambdaHostilePaths(t *testing.T) {
	served := false
	h := function.Routes(function.Path{Method: "GET", Pattern: "GET /api/things/{id}", Serve: func(r *http.Request) (any, error) {
		served = true
		return map[string]string{"id": r.PathValue("id")}, nil
	}})
	notFound := errorBody(stampduty.Errorf(stampduty.ENOTFOUND, "Not Found"))
	for _, seg := range []string{"x\n{\"level\":\"INFO\",\"msg\":\"FORGED\"}\n", "x\x00", "x\x01", "x\r", "x\x7f", "x%zz", "x%41", "x?a=b", "x#frag"} {
		for _, method := range []string{"GET", "POST", "HEAD"} {
			var logs bytes.Buffer
			handler := function.Lambda(logged(h, &logs), slog.New(slog.NewJSONHandler(&logs, nil)))
			var resp events.APIGatewayV2HTTPResponse
			var err error
			out := functest.Printed(t, func() { resp, err = handler(context.Background(), event(method, "/api/things/"+seg, "")) })
			if err != nil {
				t.Errorf("%s %q: the handler returned %v", method, seg, err)
			}
			want := notFound
			if method == "HEAD" {
				want = ""
			}
			if resp.StatusCode != http.StatusNotFound || resp.Body != want {
				t.Errorf("%s %q: %d %s, want 404 %s", method, seg, resp.StatusCode, resp.Body, want)
			}
			if out != "" {
				t.Errorf("%s %q: the adapter printed %q", method, seg, out)
			}
			if !strings.Contains(logs.String(), `"status":404`) {
				t.Errorf("%s %q: no request line: %q", method, seg, logs.String())
			}
			checkLog(t, logs.String())
		}
	}
	if served {
		t.Error("a hostile path reached the handler")
	}
}

// logged is function.Logged over a JSON logger writing to w.
func logged(h http.Handler, w io.Writer) http.Handler {
	return function.Logged(slog.New(slog.NewJSONHandler(w, nil)), h)
}

func TestLambdaRefusesWhatTheAdapterCannotRead(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("served %s %q", r.Method, r.URL) })
	invalid := func(msg string) string { return errorBody(stampduty.Errorf(stampduty.EINVALID, "%s", msg)) }
	for name, tc := range map[string]struct {
		ev   func(ev *events.APIGatewayV2HTTPRequest)
		want string
	}{
		"ControlCharacterInQuery": {func(ev *events.APIGatewayV2HTTPRequest) { ev.RawQueryString = "a=\n{}" }, invalid("Invalid data. The query string has a character a URL cannot carry")},
		"FragmentInQuery":         {func(ev *events.APIGatewayV2HTTPRequest) { ev.RawQueryString = "a=1#%zz" }, invalid("Invalid data. The query string has a character a URL cannot carry")},
		"MethodNotAToken":         {func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = "G T" }, invalid("Invalid data. The method is not an HTTP method")},
		"HostWithAPath":           {func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.DomainName = "a/b" }, invalid("Invalid data. The host is not a host name")},
		"HostWithBadPort":         {func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.DomainName = "a:b" }, invalid("Invalid data. The host is not a host name")},
		"BodyNotBase64": {func(ev *events.APIGatewayV2HTTPRequest) {
			ev.Body, ev.IsBase64Encoded = "not base64!", true
		}, invalid("Invalid data. The body is not base64")},
	} {
		t.Run(name, func(t *testing.T) {
			ev := event("GET", "/api/things/1", "")
			tc.ev(&ev)
			var logs bytes.Buffer
			var resp events.APIGatewayV2HTTPResponse
			var err error
			out := functest.Printed(t, func() {
				resp, err = function.Lambda(h, slog.New(slog.NewJSONHandler(&logs, nil)))(context.Background(), ev)
			})
			if err != nil {
				t.Errorf("the handler returned %v", err)
			}
			if resp.StatusCode != http.StatusBadRequest || resp.Body != tc.want {
				t.Errorf("%d %s, want 400 %s", resp.StatusCode, resp.Body, tc.want)
			}
			if out != "" {
				t.Errorf("the adapter printed %q", out)
			}
			checkLog(t, logs.String())
		})
	}
}

func TestLambdaNeverReturnsAnError(t *testing.T) {
	t.Run("HandlerPanics", func(t *testing.T) {
		h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom\n{\"msg\":\"FORGED\"}") })
		var logs bytes.Buffer
		resp, err := function.Lambda(h, slog.New(slog.NewJSONHandler(&logs, nil)))(context.Background(), event("GET", "/api/things/1", ""))
		if err != nil {
			t.Errorf("the handler returned %v", err)
		}
		if want := errorBody(stampduty.Internal(nil)); resp.StatusCode != 500 || resp.Body != want {
			t.Errorf("%d %s, want 500 %s", resp.StatusCode, resp.Body, want)
		}
		checkLog(t, logs.String())
		if !strings.Contains(logs.String(), `panic: boom\n{\"msg\":\"FORGED\"}`) {
			t.Errorf("the cause is not logged, escaped: %s", logs.String())
		}
	})
	t.Run("HandlerWritesNothing", func(t *testing.T) {
		// The adapter fails on an answer with no status: still an envelope.
		h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		var logs bytes.Buffer
		var resp events.APIGatewayV2HTTPResponse
		var err error
		functest.Printed(t, func() {
			resp, err = function.Lambda(h, slog.New(slog.NewJSONHandler(&logs, nil)))(context.Background(), event("GET", "/api/things/1", ""))
		})
		if err != nil || resp.StatusCode != 500 {
			t.Errorf("%d, %v; want 500 and no error", resp.StatusCode, err)
		}
		checkLog(t, logs.String())
	})
}

// FuzzLambda: for any event, the Lambda handler returns no error; for any
// event CheckEvent admits, the adapter itself (as Main's handler calls it)
// returns no error and prints nothing; an event CheckEvent refuses is
// answered 400 or 404 in the envelope, printing nothing either.
func FuzzLambda(f *testing.F) {
	f.Add("/api/live-orders/x\n{\"level\":\"INFO\",\"msg\":\"FORGED\"}\n", "", "GET", "api.example.com", "", false, "x-h", "v", "c=1")
	for _, s := range []string{"\x00", "\x01", "\r", "\x7f", "%zz", "%41", "?", "#", " ", "\u00e9", "\xff"} {
		f.Add("/api/webhook-events/evt_"+s+"/redeliver", "a="+s, "POST", "api.example.com", s, false, "x-h", s, s)
	}
	f.Add("", "a=1#%zz", "G T", "a/b", "bm90IGJhc2U2NA", true, "", "", "")
	f.Add("relative", "", "", "[::1", "", false, "Cookie", "\n", "")
	f.Add("/x", "", "get", "a:b", "aGk=", true, "host", "", "")
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	adapter := httpadapter.NewV2(ok)
	handler := function.Lambda(ok, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	f.Fuzz(func(t *testing.T, path, query, method, domain, body string, b64 bool, header, value, cookie string) {
		ev := event(method, path, query)
		ev.RequestContext.DomainName = domain
		ev.Body, ev.IsBase64Encoded = body, b64
		ev.Headers[header] = value
		ev.Cookies = []string{cookie}
		admitted := function.CheckEvent(ev) == nil
		var resp events.APIGatewayV2HTTPResponse
		var err error
		out := functest.Printed(t, func() {
			if admitted {
				resp, err = adapter.ProxyWithContext(context.Background(), ev)
			} else {
				resp, err = handler(context.Background(), ev)
			}
		})
		if err != nil {
			t.Fatalf("admitted %v: %v", admitted, err)
		}
		if out != "" {
			t.Fatalf("admitted %v: printed %q", admitted, out)
		}
		if !admitted && resp.StatusCode != 400 && resp.StatusCode != 404 {
			t.Fatalf("refused with %d", resp.StatusCode)
		}
		if admitted && resp.StatusCode != http.StatusNoContent {
			t.Fatalf("admitted, answered %d", resp.StatusCode)
		}
	})
}

// The links made while serving a request point back to the API it came to:
// https unless the gateway says plain http, and the stage's path unless it
// is the default stage.
func TestBase(t *testing.T) {
	for _, tc := range []struct {
		name, proto, domain, stage, want string
	}{
		{"DefaultStage", "https", "abc.execute-api.ap-south-1.amazonaws.com", "$default", "https://abc.execute-api.ap-south-1.amazonaws.com"},
		{"NamedStage", "https", "abc.execute-api.ap-south-1.amazonaws.com", "prod", "https://abc.execute-api.ap-south-1.amazonaws.com/prod"},
		{"CustomDomain", "", "stamps.example.in", "$default", "https://stamps.example.in"},
		{"LocalHTTP", "http", "127.0.0.1:3000", "$default", "http://127.0.0.1:3000"},
		{"AnythingElseIsHTTPS", "gopher", "stamps.example.in", "", "https://stamps.example.in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := events.APIGatewayV2HTTPRequest{Headers: map[string]string{"x-forwarded-proto": tc.proto}}
			ev.RequestContext.DomainName, ev.RequestContext.Stage = tc.domain, tc.stage
			if got := function.Base(ev); got != tc.want {
				t.Errorf("Base = %q, want %q", got, tc.want)
			}
		})
	}
}
