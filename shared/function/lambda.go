package function

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"stampduty/shared/links"
	"stampduty/shared/stampduty"
)

// Handler is a function's Lambda handler: what Main hands to lambda.Start.
type Handler func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Lambda returns the Lambda handler that serves API Gateway's events with
// h, through aws-lambda-go-api-proxy's payload 2.0 adapter.
//
// That adapter cannot be handed every event: it builds a URL from the
// event's (percent-decoded) rawPath, and when url.Parse refuses it — a
// control character, a stray "%" — it fmt.Printf's the raw path to standard
// output (where a "\n{...}" in the path becomes a log line of the caller's
// choosing) and returns an error, which API Gateway answers with a bare
// 500. So each event is first checked (CheckEvent): one the adapter would
// misread or refuse is answered here in the Strapi envelope, and the
// adapter is never called with it. FuzzLambda shows that the adapter, given
// any event CheckEvent admits, neither fails nor prints.
//
// The handler never returns an error, whatever the event: should the
// adapter still fail, or h panic, the answer is the enveloped 500 and the
// cause goes to logger, as one JSON line, escaped.
func Lambda(h http.Handler, logger *slog.Logger) Handler {
	adapter := httpadapter.NewV2(h)
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (resp events.APIGatewayV2HTTPResponse, err error) {
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				cause := fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				resp, err = refuse(ctx, logger, ev, stampduty.Internal(cause), start), nil
			}
		}()
		if err := CheckEvent(ev); err != nil {
			return refuse(ctx, logger, ev, err, start), nil
		}
		resp, err = adapter.ProxyWithContext(links.WithBase(ctx, Base(ev)), ev)
		if err != nil {
			return refuse(ctx, logger, ev, stampduty.Internal(fmt.Errorf("aws-lambda-go-api-proxy: %w", err)), start), nil
		}
		return resp, nil
	}
}

// Base returns the address of the API that ev came to, which the links made
// while serving it point back to: https:// (http:// only when API Gateway,
// or the local one, says the request came so: x-forwarded-proto), the
// domain name the caller used (API Gateway's, or a custom domain), and the
// stage's path unless it is the default stage.
func Base(ev events.APIGatewayV2HTTPRequest) string {
	scheme := "https://"
	if ev.Headers["x-forwarded-proto"] == "http" {
		scheme = "http://"
	}
	base := scheme + ev.RequestContext.DomainName
	if st := ev.RequestContext.Stage; st != "" && st != "$default" {
		base += "/" + st
	}
	return base
}

// CheckEvent returns the error to answer an event with that the adapter
// would refuse, or read as another request than API Gateway received:
//
//   - a path (rawPath, and requestContext.http.path, which the adapter
//     prints when it fails) with a control character (U+0000–U+001F,
//     U+007F: url.Parse refuses them), or "%", "?" or "#": API Gateway hands
//     the path over percent-decoded, and the adapter parses it again as a
//     URL, so a "%" would be decoded twice (or refused: "%zz") and a "?" or
//     "#" would cut the path short. No resource of the service has such a
//     name, so the answer is 404 NotFoundError, the service's answer for a
//     path that names nothing — the same before and after authentication,
//     so it tells a caller without a token nothing;
//   - a raw query string with a control character, or a "#" (the adapter
//     would take the rest for a fragment, and refuse a malformed one);
//   - a method that is not an HTTP token, a domain name that is not one
//     host, a body marked base64 that is not base64 — none of which API
//     Gateway sends;
//
// the other two kinds are 400 ValidationError: the request, not a resource,
// is at fault. Headers, cookies and other parameters cannot make the
// adapter fail and are not looked at.
func CheckEvent(ev events.APIGatewayV2HTTPRequest) error {
	notFound := stampduty.Errorf(stampduty.ENOTFOUND, "Not Found")
	if !pathOK(ev.RawPath) || !pathOK(ev.RequestContext.HTTP.Path) {
		return notFound
	}
	if strings.IndexFunc(ev.RawQueryString, func(r rune) bool { return isCTL(r) || r == '#' }) >= 0 {
		return stampduty.Errorf(stampduty.EINVALID, "Invalid data. The query string has a character a URL cannot carry")
	}
	if m := ev.RequestContext.HTTP.Method; strings.IndexFunc(m, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return stampduty.Errorf(stampduty.EINVALID, "Invalid data. The method is not an HTTP method")
	}
	if _, custom := os.LookupEnv(core.CustomHostVariable); !custom && !hostOK(ev.RequestContext.DomainName) {
		return stampduty.Errorf(stampduty.EINVALID, "Invalid data. The host is not a host name")
	}
	if ev.IsBase64Encoded {
		// Streamed, so that a 4 MiB upload is not decoded twice into memory.
		if _, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, strings.NewReader(ev.Body))); err != nil {
			return stampduty.Errorf(stampduty.EINVALID, "Invalid data. The body is not base64")
		}
	}
	return nil
}

// pathOK reports whether the adapter reads p, a decoded path, as it is.
func pathOK(p string) bool {
	return strings.IndexFunc(p, func(r rune) bool { return isCTL(r) || r == '%' || r == '?' || r == '#' }) < 0
}

// hostOK reports whether url.Parse reads "https://"+host as a URL whose
// host is host and nothing else: no path, user, query or fragment.
func hostOK(host string) bool {
	u, err := url.Parse("https://" + host)
	return err == nil && u.Host == host && u.User == nil && u.Path == "" && !u.ForceQuery && u.RawQuery == "" && u.Fragment == ""
}

// isCTL reports whether r is an ASCII control character, which url.Parse
// refuses anywhere in a URL.
func isCTL(r rune) bool { return r < 0x20 || r == 0x7f }

// isTokenChar reports whether r may appear in an HTTP token (RFC 9110
// tchar), as a method must.
func isTokenChar(r rune) bool {
	return r < 0x7f && r > 0x20 && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
}

// refuse answers ev with err in the Strapi envelope, as WriteError
// answers any error of err's kind (byte for byte), and logs the request's
// one line: its route key (API Gateway's name for the route, never the
// path), status, latency, request id and error kind, and for a fault the
// cause — all as JSON strings, so no byte of the request can start a line.
func refuse(ctx context.Context, logger *slog.Logger, ev events.APIGatewayV2HTTPRequest, err error, start time.Time) events.APIGatewayV2HTTPResponse {
	method := http.MethodGet
	if ev.RequestContext.HTTP.Method == http.MethodHead {
		method = http.MethodHead // a HEAD answer has no body
	}
	r, _ := http.NewRequestWithContext(ctx, method, "/", nil) // a fixed, valid request: never fails
	w := core.NewProxyResponseWriterV2()
	WriteError(w, r, err)
	resp, _ := w.GetProxyResponse() // fails only when no status was written; WriteError writes one

	status := kindOf(err).status
	attrs := []slog.Attr{
		slog.String("route", cmp.Or(ev.RouteKey, ev.RequestContext.RouteKey)),
		slog.Int("status", status),
		slog.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000),
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		attrs = append(attrs, slog.String("request_id", lc.AwsRequestID))
	}
	attrs = append(attrs, slog.String("error", string(stampduty.ErrorCode(err))))
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
		attrs = append(attrs, slog.String("cause", err.Error()))
	}
	logger.LogAttrs(ctx, level, "request", attrs...)
	return resp
}
