// Package function runs a Lambda function whose work is a net/http handler
// behind an API Gateway HTTP API (payload 2.0): the part every
// functions/*/main.go and handler.go would otherwise repeat.
package function

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
)

// Deps are what a function's handler is built from: its settings (Env:
// d.Require("ORDERS_TABLE")) and its DynamoDB store (DB: d.Orders(table)).
type Deps struct {
	*config.Env
	*store.DB
}

// Wire builds a function's handler from its Deps. What it finds missing or
// unusable in the settings, the Env reports (see Build).
type Wire func(d Deps) http.Handler

// Build reads the environment through getenv, opens the store, builds the
// handler with wire and logs one line per request to logger. Its error
// names every required variable found empty and every unusable setting.
func Build(wire Wire, getenv func(string) string, logger *slog.Logger) (http.Handler, error) {
	h, err := build(wire, getenv)
	if err != nil {
		return nil, err
	}
	return Logged(logger, h), nil
}

// build reads the environment through getenv, opens the store and builds
// what wire makes of them, or the Env's error: the part of Build and
// BuildRun they share.
func build[T any](wire func(d Deps) T, getenv func(string) string) (T, error) {
	env := config.New(getenv)
	v := wire(Deps{Env: env, DB: store.Open(env)})
	if err := env.Err(); err != nil {
		var none T
		return none, err
	}
	return v, nil
}

// Main builds the handler (Build) from the process environment, logging
// JSON lines to standard output, and serves the Lambda runtime's events with
// it (through Lambda, which answers itself the events the adapter cannot
// take) until the runtime ends the process. When wiring fails it logs why and
// exits with status 1, which Lambda reports as a failed init.
func Main(wire Wire) {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	h, err := Build(wire, os.Getenv, logger)
	if err != nil {
		logger.Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	lambda.Start(Lambda(h, logger))
}

// Status is an answer with a status other than 200 (202 Accepted, say):
// Route answers Code with Body as JSON.
type Status struct {
	Code int
	Body any
}

// Route serves one method with serve: within Budget's time, it
// answers 200 with serve's answer as JSON (a Status: its Code and Body), or
// serve's error in the Strapi envelope; any other method is answered 405.
func Route[T any](method string, serve func(r *http.Request) (T, error)) http.Handler {
	return Method(method, Budget(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := serve(r)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if s, ok := any(resp).(Status); ok {
			WriteJSON(w, s.Code, s.Body)
			return
		}
		WriteJSON(w, http.StatusOK, resp)
	})))
}

// Authenticator returns the function's token checker (auth.FromEnv) over
// the tokens table TOKENS_TABLE names.
func (d Deps) Authenticator() *auth.Authenticator {
	return auth.FromEnv(d.Env, d.Tokens(d.Require("TOKENS_TABLE")))
}

// AsCaller serves a route of the caller's own (as in Route): serve is
// given the owner of the bearer token r carries, whom r's request log line
// then names. Without a token the answer is 403; with an unknown, revoked
// or malformed one, 401.
func AsCaller[T any](a *auth.Authenticator, serve func(r *http.Request, owner string) (T, error)) func(r *http.Request) (T, error) {
	return func(r *http.Request) (T, error) {
		owner, err := a.Owner(r.Context(), r.Header.Get("Authorization"))
		if err != nil {
			var none T
			return none, err
		}
		SetCaller(r.Context(), owner)
		return serve(r, owner)
	}
}

// Path is one route of a function with several: a method, a path pattern
// of net/http.ServeMux (its {name} segments are r.PathValue(name)), and
// what serves it (as in Route).
type Path struct {
	Method, Pattern string
	Serve           func(r *http.Request) (any, error)
}

// Routes serves each path as Route serves its one; a request no pattern
// matches is answered 404 NotFoundError in the Strapi envelope. A pattern
// may have several methods (one Path each); a method it does not have is
// answered 405 with an Allow header naming those it has.
func Routes(paths ...Path) http.Handler {
	mux := http.NewServeMux()
	methods := map[string]map[string]http.Handler{}
	for _, p := range paths {
		if methods[p.Pattern] == nil {
			methods[p.Pattern] = map[string]http.Handler{}
		}
		methods[p.Pattern][p.Method] = Route(p.Method, p.Serve)
	}
	for pattern, hs := range methods {
		allow := strings.Join(slices.Sorted(maps.Keys(hs)), ", ")
		mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h, ok := hs[r.Method]; ok {
				h.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Allow", allow)
			WriteError(w, r, stampduty.Errorf(stampduty.ENOTALLOWED, "Method %s is not allowed here", r.Method))
		}))
	}
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, stampduty.Errorf(stampduty.ENOTFOUND, "Not Found"))
	}))
	return mux
}

// Run is the work of a scheduled function: one invocation.
type Run func(ctx context.Context) error

// BuildRun is Build for a scheduled function: it reads the environment
// through getenv, opens the store and builds the run with wire.
func BuildRun(wire func(d Deps) Run, getenv func(string) string) (Run, error) {
	return build(wire, getenv)
}

// Scheduled is Main for a function that EventBridge invokes on a schedule
// rather than API Gateway: it builds the run (BuildRun) from the process
// environment (a missing or unusable setting fails the init, as in Main)
// and serves each invocation, whatever its payload, with it.
func Scheduled(wire func(d Deps) Run) {
	run, err := BuildRun(wire, os.Getenv)
	if err != nil {
		slog.New(slog.NewJSONHandler(os.Stdout, nil)).Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	lambda.Start(func(ctx context.Context, _ json.RawMessage) error { return run(ctx) })
}
