package function

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"stampduty/shared/stampduty"
)

// entry is what a request's log line says beyond its route and timing: the
// caller once authenticated, and the error it ended with.
type entry struct {
	caller string
	err    error
}

type entryKey struct{}

// SetCaller records the authenticated caller of the request for its log line.
func SetCaller(ctx context.Context, caller string) {
	if e, ok := ctx.Value(entryKey{}).(*entry); ok {
		e.caller = caller
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
// the Lambda request id, the route (the event's routeKey), the status, the latency, the caller and,
// on failure, the error kind (and the cause for faults). It never logs
// headers, query values or bodies, which carry tokens and personal data.
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
