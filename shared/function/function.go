// Package function is the service's edge: all that lies between API
// Gateway (HTTP API, payload 2.0) or EventBridge and a function's work, which
// every functions/*/main.go and handler.go would otherwise repeat.
//
//   - function.go: Main and Scheduled, which read the settings, open the
//     store and hand both (Deps) to a function's wiring;
//   - lambda.go: Lambda, which serves API Gateway's events with a net/http
//     handler and answers itself those the adapter cannot read (CheckEvent);
//   - route.go: Route and Routes, which serve a function's methods and
//     paths within the request budget, and AsCaller, a caller's own routes;
//   - errors.go: the one table from error kinds to HTTP status, Strapi
//     error name and Retry-After, and Strapi's error envelope (WriteError);
//   - json.go: JSON answers (WriteJSON);
//   - body.go: request bodies: Content-Type and size (ReadJSONBody,
//     ReadUpload), one JSON object (DecodeObject), Strapi's create shape
//     {"data": ...} (DecodeData), the bodies of uploads and attaches;
//   - log.go: each request's one log line (Logged, SetCaller);
//   - metrics.go: each invocation's metrics (Measured, MeasuredRun), to
//     which the workflows and the store add theirs (package metrics).
//
// Strapi's query language (sort, pagination, fields, filters) is package
// strapiquery's. Where the contract is silent, DECISIONS.md beside this file
// says what the edge decides.
package function

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"stampduty/shared/accounts"
	"stampduty/shared/auth"
	"stampduty/shared/config"
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
	logger := NewLogger(os.Getenv, os.Stdout)
	h, err := Build(wire, os.Getenv, logger)
	if err != nil {
		logger.Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	lambda.Start(Measured(MeterFromEnv(os.Getenv, os.Stdout), Lambda(h, logger)))
}

// Accounts returns the callers' accounts (accounts.md) over the ledger
// table LEDGER_TABLE names.
func (d Deps) Accounts() *accounts.Ledger {
	return &accounts.Ledger{Store: d.Ledger(d.Require("LEDGER_TABLE")), Now: time.Now}
}

// Authenticator returns the function's token checker (auth.FromEnv) over
// the tokens table TOKENS_TABLE names.
func (d Deps) Authenticator() *auth.Authenticator {
	return auth.FromEnv(d.Env, d.Tokens(d.Require("TOKENS_TABLE")))
}

// Run is the work of a scheduled function: one invocation, given its
// payload as Lambda received it. EventBridge sends a schedule's Input when
// the rule has one, else its Scheduled Event; a function that needs no
// input ignores it.
type Run func(ctx context.Context, payload json.RawMessage) error

// BuildRun is Build for a scheduled function: it reads the environment
// through getenv, opens the store and builds the run with wire.
func BuildRun(wire func(d Deps) Run, getenv func(string) string) (Run, error) {
	return build(wire, getenv)
}

// Scheduled is Main for a function that EventBridge invokes on a schedule
// rather than API Gateway: it builds the run (BuildRun) from the process
// environment (a missing or unusable setting fails the init, as in Main)
// and serves each invocation with it, handing it the payload.
func Scheduled(wire func(d Deps) Run) {
	run, err := BuildRun(wire, os.Getenv)
	if err != nil {
		NewLogger(os.Getenv, os.Stdout).Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	m := MeterFromEnv(os.Getenv, os.Stdout)
	m.Every = RunFlushEvery
	run = MeasuredRun(m, run)
	lambda.Start(func(ctx context.Context, payload json.RawMessage) error { return run(ctx, payload) })
}
