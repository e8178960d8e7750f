package function

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"stampduty/shared/stampduty"
)

// entry is what a request's log line says beyond its route and timing: the
// caller once authenticated, the order it created, and the error it ended
// with.
type entry struct {
	caller string
	order  string
	err    error
}

type entryKey struct{}

// SetCaller records the authenticated caller of the request for its log line.
func SetCaller(ctx context.Context, caller string) {
	if e, ok := ctx.Value(entryKey{}).(*entry); ok {
		e.caller = caller
	}
}

// SetOrder records the documentId of the order the request created, for
// its log line's "order" (a request to an order's own path names it
// there already: pathIDs).
func SetOrder(ctx context.Context, documentID string) {
	if e, ok := ctx.Value(entryKey{}).(*entry); ok {
		e.order = documentID
	}
}

func setError(ctx context.Context, err error) {
	if e, ok := ctx.Value(entryKey{}).(*entry); ok {
		e.err = err
	}
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records status, then writes it.
func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// Logged wraps h so that each request writes one structured line to logger:
// the Lambda request id, the route (the event's routeKey), the status, the
// latency, the caller, the ids its path names (order, webhook, event:
// pathIDs) or the order it created (SetOrder), and, on failure, the error
// kind (and the cause for faults). It never logs headers, query values or
// bodies, which carry tokens and personal data.
func Logged(logger *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		e := &entry{}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), entryKey{}, e)))
		route := r.Method + " " + r.URL.Path
		if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.RouteKey != "" {
			route = rc.RouteKey
		}
		attrs := []slog.Attr{
			slog.String("route", route),
			slog.Int("status", sw.status),
			slog.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000),
		}
		if lc, ok := lambdacontext.FromContext(r.Context()); ok {
			attrs = append(attrs, slog.String("request_id", lc.AwsRequestID))
		}
		if e.caller != "" {
			attrs = append(attrs, slog.String("caller", e.caller))
		}
		ids := pathIDs(route, r.URL.Path)
		if e.order != "" && ids["order"] == "" {
			ids["order"] = e.order
		}
		for _, k := range []string{"order", "webhook", "event"} {
			if ids[k] != "" {
				attrs = append(attrs, slog.String(k, ids[k]))
			}
		}
		level := slog.LevelInfo
		if e.err != nil {
			attrs = append(attrs, slog.String("error", string(stampduty.ErrorCode(e.err))))
			if sw.status >= 500 {
				level = slog.LevelError
				attrs = append(attrs, slog.String("cause", e.err.Error()))
			}
		}
		logger.LogAttrs(r.Context(), level, "request", attrs...)
	})
}

// idLike is what a logged id may be: the service's documentIds and event
// ids are 24 to 40 characters of these; anything else in their place is
// a caller's text and is not logged.
//
// A loop rather than the regexp `^[A-Za-z0-9_-]{1,64}$` it was: compiling
// that at package init (its {1,64} is 64 copies of the class) took 0.2–0.5
// ms and 864 allocations of every function's cold start
// (GODEBUG=inittrace=1), the largest init of the service's own code.
func idLike(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// pathIDs returns the ids that path carries where route, a route key
// ("GET /api/live-orders/{documentId}"), names them, by the log field
// each goes to, so that a Logs Insights query finds every request about
// one order or webhook: {documentId} after live-orders or orders is an
// order's ("order"), after webhooks a webhook's ("webhook"), {eventId} an
// event's ("event"). No other parameter is logged: a download link's
// {token} is a credential, and the rest (a paper, an article, a caller)
// are not what the queries look for.
func pathIDs(route, path string) map[string]string {
	ids := map[string]string{}
	_, pattern, ok := strings.Cut(route, " ")
	segs, parts := strings.Split(pattern, "/"), strings.Split(path, "/")
	if !ok || len(segs) != len(parts) {
		return ids
	}
	for i, seg := range segs {
		var field string
		switch prev := segs[max(i-1, 0)]; {
		case seg == "{documentId}" && (prev == "live-orders" || prev == "orders"):
			field = "order"
		case seg == "{documentId}" && prev == "webhooks":
			field = "webhook"
		case seg == "{eventId}":
			field = "event"
		}
		if field != "" && idLike(parts[i]) {
			ids[field] = cmp.Or(ids[field], parts[i])
		}
	}
	return ids
}
