// Package apigw emulates an API Gateway HTTP API with Lambda proxy
// integrations (payload format 2.0): it routes HTTP requests, turns each into
// the event API Gateway would send, invokes the route's function and turns the
// function's response, or its failure, into the HTTP response API Gateway
// would give.
package apigw

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/cmd/internal/runtimeapi"
)

// Limits of API Gateway HTTP APIs: a request body, the integration
// timeout, and the quota "Total combined size of request line and header
// values" (not adjustable: the method, the target as sent and the protocol,
// and header values, not their names).
const (
	DefaultMaxBody   = 10 << 20
	DefaultTimeout   = 30 * time.Second
	MaxRequestHeader = 10240
)

// AWS's answers to requests it refuses before any function runs. AWS
// documents the quotas, not these answers; they are what clients of
// deployed APIs report, and the status is the part every report agrees on:
//   - over MaxRequestHeader: 431 "HTTP header is larger than 10240 bytes."
//     (https://ntsblog.homedev.com.au/index.php/2021/03/09/aws-api-gateway-http-header-is-larger-than-10240-bytes/,
//     http://Backbencher.dev/solved-431-status-code-with-request-header-fields-too-large),
//     with the Content-Type of API Gateway's other front-end refusal seen on
//     the wire, "text; charset=utf-8" (github.com/koki-develop/lgtm-generator
//     issue 10);
//   - an event over Lambda's synchronous payload limit
//     (runtimeapi.MaxPayload), which Lambda refuses before the function
//     runs: 413 {"message":"Request Too Long"} (the same issue, a REST API;
//     written without the space, as HTTP APIs write their JSON messages).
const (
	headerTooLargeText = "HTTP header is larger than 10240 bytes."
	payloadTooLarge    = "Request Too Long"
)

// Invoker runs one Lambda invocation.
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// Route sends the requests matching a method and a path to a function.
type Route struct {
	// Method is an HTTP method, matched exactly (HEAD is not GET), or ANY.
	Method string
	// Path is the resource path. A {name} segment matches any one segment and
	// becomes a path parameter; a final {name+} matches the rest of the path.
	// "$default" catches the requests no other route matches.
	Path   string
	Target Invoker
	// IAM authorizes the route with AWS_IAM: requests must be signed with
	// Options.IAM's key pair.
	IAM bool
	// JWT, when set, authorizes the route with that JWT authorizer:
	// requests without a token it accepts are refused with 401 before the
	// function runs, and the token's claims are passed to it.
	JWT *JWT
}

// Options configures the emulated API: Log receives an access log line per
// request (nil: none); MaxBody (DefaultMaxBody when 0) bounds request
// bodies, answering 413 past it; Timeout (DefaultTimeout when 0) bounds each
// integration, answering 503 while the function runs on; IAM checks the
// signatures of the AWS_IAM routes (nil: every request to them is refused).
type Options struct {
	Log     io.Writer
	MaxBody int64
	Timeout time.Duration
	IAM     *IAM
	// Metrics, when set, receives per request the EMF line of API
	// Gateway's own metrics for the API ApiID ("local" when empty): the
	// local twin of what AWS publishes (metrics.go).
	Metrics io.Writer
	ApiID   string
}

// handler is the emulated API.
type handler struct {
	routes  []route
	iam     *IAM
	maxBody int64
	timeout time.Duration
	log     io.Writer // nil, or a runtimeapi.LockedWriter
	metrics io.Writer // nil, or a runtimeapi.LockedWriter
	apiID   string
}

// NewHandler returns an http.Handler serving routes like an API Gateway HTTP
// API's $default stage. When several routes match a request, the most
// specific one wins, as on API Gateway.
func NewHandler(routes []Route, opts Options) http.Handler {
	h := &handler{maxBody: cmp.Or(opts.MaxBody, DefaultMaxBody), timeout: cmp.Or(opts.Timeout, DefaultTimeout), iam: opts.IAM}
	if opts.Log != nil {
		h.log = runtimeapi.LockedWriter(opts.Log)
	}
	if opts.Metrics != nil {
		h.metrics, h.apiID = runtimeapi.LockedWriter(opts.Metrics), cmp.Or(opts.ApiID, "local")
	}
	for _, r := range routes {
		h.routes = append(h.routes, newRoute(r))
	}
	return h
}

// noRoute is the routeKey of a request no route matched, as API
// Gateway's access log writes it.
const noRoute = "-"

// ServeHTTP handles one request like API Gateway.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	requestID := base64.StdEncoding.EncodeToString(random(11)) // shaped like API Gateway's: "JKJaXmPLvHcESHA="
	w.Header().Set("Apigw-Requestid", requestID)
	routeKey := noRoute
	status, err := h.serve(w, r, requestID, start, &routeKey)
	d := time.Since(start)
	h.logRequest(routeKey, status, d, requestID, r.Context().Err() != nil, err)
	if h.metrics != nil {
		_, _ = h.metrics.Write(apiMetrics(h.apiID, status, d, time.Now()))
	}
}

// serve answers r and returns the status it sent, with the reason when the
// function was not reached or failed; it sets *routeKey to the key of the
// route that matched.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, requestID string, now time.Time, routeKey *string) (int, error) {
	if n := headerSize(r); n > MaxRequestHeader {
		return write(w, http.StatusRequestHeaderFieldsTooLarge, "text; charset=utf-8", []byte(headerTooLargeText)), fmt.Errorf("request line and header values of %d bytes exceed the limit of %d bytes", n, MaxRequestHeader)
	}
	rt, params := find(h.routes, r.Method, r.URL.Path)
	if rt == nil {
		return writeMessage(w, http.StatusNotFound, "Not Found"), nil
	}
	*routeKey = rt.key
	var claims map[string]string
	if rt.jwt != nil {
		var err error
		if claims, err = rt.jwt.verify(r, now); err != nil {
			return refuse(w, err), fmt.Errorf("JWT authorization: %w", err)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return writeMessage(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large"), nil
		}
		return writeMessage(w, http.StatusBadRequest, "Bad Request"), fmt.Errorf("read body: %w", err)
	}

	event := newEvent(r, rt, params, body, requestID, now)
	if rt.iam {
		// API Gateway refuses a request to an AWS_IAM route whose signature
		// does not check out before any function runs, with 403.
		if h.iam == nil {
			return writeMessage(w, http.StatusForbidden, "Forbidden"), errors.New("AWS_IAM route without credentials to check")
		}
		iam, err := h.iam.verify(r, body, now)
		if err != nil {
			return writeMessage(w, http.StatusForbidden, "Forbidden"), fmt.Errorf("IAM authorization: %w", err)
		}
		event.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: iam}
	}
	if claims != nil {
		// No route asks for scopes, and API Gateway passes none then.
		event.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims}}
	}
	payload, err := json.Marshal(event)
	if err != nil {
		return writeMessage(w, http.StatusInternalServerError, "Internal Server Error"), fmt.Errorf("marshal event: %w", err)
	}
	if len(payload) > runtimeapi.MaxPayload {
		// Lambda refuses the invoke; API Gateway answers for it, and the
		// function never runs.
		return writeMessage(w, http.StatusRequestEntityTooLarge, payloadTooLarge),
			fmt.Errorf("%s: event of %d bytes exceeds Lambda's limit of %d bytes", rt.key, len(payload), runtimeapi.MaxPayload)
	}
	// A client that hangs up does not stop the invocation: API Gateway
	// has invoked the function and waits for its answer (Lambda has no
	// way to cancel an invocation), then answers a connection that is
	// gone and logs the status it answered (DECISIONS.md, "a client that
	// hangs up"). Only the integration timeout bounds the wait.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), h.timeout)
	defer cancel()
	out, err := rt.target.Invoke(ctx, payload)
	switch {
	case err == nil:
	case errors.Is(err, runtimeapi.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return writeMessage(w, http.StatusServiceUnavailable, "Service Unavailable"), err
	default:
		return writeMessage(w, http.StatusInternalServerError, "Internal Server Error"), err
	}
	status, err := writeResponse(w, out)
	if err != nil {
		return writeMessage(w, http.StatusInternalServerError, "Internal Server Error"), err
	}
	return status, nil
}

// headerSize is what counts against MaxRequestHeader: the request line as
// sent ("GET /path?query HTTP/1.1") and every header value, Host's
// included.
func headerSize(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + len(r.Host)
	for _, values := range r.Header {
		for _, v := range values {
			n += len(v)
		}
	}
	return n
}

// newEvent builds the payload 2.0 event API Gateway sends for r.
func newEvent(r *http.Request, rt *route, params map[string]string, body []byte, requestID string, now time.Time) events.APIGatewayV2HTTPRequest {
	sourceIP := r.RemoteAddr
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		sourceIP = host
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: rt.key,
		// API Gateway HTTP APIs pass the path percent-decoded, unlike the query.
		RawPath:               r.URL.Path,
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies(r.Header),
		Headers:               headers(r, sourceIP),
		QueryStringParameters: queryParameters(r.URL.RawQuery),
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     rt.key,
			AccountID:    "000000000000",
			Stage:        "$default",
			RequestID:    requestID,
			APIID:        "local",
			DomainName:   r.Host,
			DomainPrefix: domainPrefix(r.Host),
			Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  sourceIP,
				UserAgent: r.UserAgent(),
			},
		},
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type")) && utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	return ev
}

// headers returns the request's headers as API Gateway passes them: names in
// lower case, repeated headers joined with commas, cookies left out, and the
// headers API Gateway adds itself.
func headers(r *http.Request, sourceIP string) map[string]string {
	hs := make(map[string]string, len(r.Header)+5)
	for name, values := range r.Header {
		if name = strings.ToLower(name); name != "cookie" {
			hs[name] = strings.Join(values, ",")
		}
	}
	hs["host"] = r.Host
	if fwd := hs["x-forwarded-for"]; fwd != "" {
		hs["x-forwarded-for"] = fwd + ", " + sourceIP
	} else {
		hs["x-forwarded-for"] = sourceIP
	}
	hs["x-forwarded-proto"] = "http"
	if r.TLS != nil {
		hs["x-forwarded-proto"] = "https"
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(addr.String()); err == nil {
			hs["x-forwarded-port"] = port
		}
	}
	if hs["x-amzn-trace-id"] == "" {
		hs["x-amzn-trace-id"] = fmt.Sprintf("Root=1-%08x-%x", time.Now().Unix(), random(12))
	}
	return hs
}

// cookies returns the cookies of all Cookie headers, nil when there are none.
func cookies(h http.Header) []string {
	var out []string
	for _, line := range h.Values("Cookie") {
		for c := range strings.SplitSeq(line, ";") {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// queryParameters decodes a raw query string the way API Gateway does:
// repeated keys joined with commas, nil when there are no parameters. Each
// key's values are joined once, so its time is linear in the query's
// length however often a key repeats.
func queryParameters(raw string) map[string]string {
	values := map[string][]string{}
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k = unescape(k)
		values[k] = append(values[k], unescape(v))
	}
	params := make(map[string]string, len(values))
	for k, vs := range values {
		params[k] = strings.Join(vs, ",")
	}
	if len(params) == 0 {
		return nil // as API Gateway leaves out an empty map
	}
	return params
}

// unescape decodes a query component, keeping it as sent when it is malformed.
func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// domainPrefix returns the first label of host, without the port.
func domainPrefix(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	prefix, _, _ := strings.Cut(host, ".")
	return prefix
}

// isText reports whether API Gateway passes a body of this content type as
// text rather than base64.
func isText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") ||
		slices.Contains([]string{"application/json", "application/xml", "application/x-www-form-urlencoded", "application/javascript"}, mt))
}

// writeResponse sends the function's response: a payload 2.0 response object,
// or, when the payload is JSON but no object with a statusCode, the payload
// itself as a 200 application/json body.
func writeResponse(w http.ResponseWriter, payload []byte) (int, error) {
	var probe map[string]json.RawMessage
	if json.Unmarshal(payload, &probe) != nil || probe["statusCode"] == nil {
		if !json.Valid(payload) {
			// Not its bytes: the answer may hold what the log must not.
			return 0, fmt.Errorf("malformed Lambda response: %d bytes of no JSON", len(payload))
		}
		return write(w, http.StatusOK, "application/json", payload), nil
	}

	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		return 0, fmt.Errorf("malformed Lambda response: %w", err)
	}
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return 0, fmt.Errorf("malformed Lambda response: status code %d", resp.StatusCode)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return 0, fmt.Errorf("malformed Lambda response: body: %w", err)
		}
	}

	h := w.Header()
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		h.Add("Set-Cookie", c)
	}
	if h.Get("Content-Type") == "" {
		h["Content-Type"] = nil // send none rather than a sniffed one
	}
	if resp.StatusCode >= 200 && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	} else {
		h.Del("Content-Length")
		body = nil
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	return resp.StatusCode, nil
}

// writeMessage sends one of API Gateway's own answers, {"message":"..."}.
func writeMessage(w http.ResponseWriter, status int, msg string) int {
	body, _ := json.Marshal(map[string]string{"message": msg})
	return write(w, status, "application/json", body)
}

// write sends body as a response of the given content type.
func write(w http.ResponseWriter, status int, contentType string, body []byte) int {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}

// logRequest writes the access log line of a request: what the
// template's AccessLogSettings has API Gateway write on AWS, the route
// key ("GET /api/live-orders/{documentId}", "$default", or "-" when no
// route matched), the status, the latency and the request id, and never
// the path as sent, its query or a header (a token, a PAN, a mobile
// number). A client that hung up before the answer is said so; err is
// the reason the function was not reached or failed, and never holds
// the request's values or the function's answer.
func (h *handler) logRequest(routeKey string, status int, d time.Duration, requestID string, clientGone bool, err error) {
	if h.log == nil {
		return
	}
	line := fmt.Sprintf("%s %d %s %s", routeKey, status, d.Round(time.Microsecond), requestID)
	if clientGone {
		line += " client=closed" // it hung up before the answer: its own doing, whatever the status
	}
	if err != nil {
		line += fmt.Sprintf(" error=%q", err.Error())
	}
	_, _ = io.WriteString(h.log, line+"\n")
}

// random returns n random bytes.
func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}
