// Package store is the DynamoDB access layer: the only code of the functions
// that talks to DynamoDB. It keeps articles, orders, tokens and id counters,
// each in its own table (see template.yaml and the table design, README.md
// beside this file: keys, indexes, each access pattern and its units), and
// turns DynamoDB failures into rules errors: EUNAVAILABLE for what a retry may
// cure (throttling, timeouts, network), EINTERNAL for the rest. Each table's
// items are a tagged struct read and written with attributevalue. The store
// carries no test hooks: tests and the bench watch its calls from outside,
// through storetest.Proxy.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"stampduty/shared/config"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/tracing"
)

// AttemptTimeout bounds one HTTP attempt to DynamoDB, whose requests take
// milliseconds when it is well.
const AttemptTimeout = 1200 * time.Millisecond

// DB is a DynamoDB client with the service's conventions.
type DB struct {
	client *dynamodb.Client
}

// Open returns a DB for a Lambda function: the client is built from the
// Lambda environment (AWS_REGION and the AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN credentials the runtime sets), not
// from the SDK's default chain, which would add seconds of work and megabytes
// of STS and SSO clients a function never needs. DYNAMODB_ENDPOINT, when set
// in a local Lambda runtime, points it at a local engine (set elsewhere, it
// fails the init: config.Env.Endpoint). Its calls add their throttled
// attempts and retries to the invocation's metrics (countAttempts), and are
// traced when the function is built with tracing (package tracing).
func Open(env *config.Env) *DB {
	creds := credentials.NewStaticCredentialsProvider(
		env.Require("AWS_ACCESS_KEY_ID"), env.Require("AWS_SECRET_ACCESS_KEY"), env.Get("AWS_SESSION_TOKEN"))
	opts := dynamodb.Options{
		Region:      env.Require("AWS_REGION"),
		Credentials: aws.NewCredentialsCache(creds),
		// Bounded: 3 attempts of at most AttemptTimeout each, at most
		// 300 ms apart, so a DynamoDB in trouble costs a request about 4 s at
		// worst, well inside the function's 10 s and the request budget.
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.MaxBackoff = 300 * time.Millisecond
		}),
		HTTPClient: &http.Client{Timeout: AttemptTimeout},
		// Throttled attempts and retries go to the invocation's metrics.
		APIOptions: []func(*middleware.Stack) error{addCountAttempts},
	}
	if ep := env.Endpoint("DYNAMODB_ENDPOINT"); ep != "" {
		opts.BaseEndpoint = aws.String(ep)
	}
	tracing.Instrument(&opts.APIOptions)
	return New(dynamodb.New(opts))
}

// New returns a DB over client.
func New(client *dynamodb.Client) *DB { return &DB{client: client} }

// Client returns the underlying DynamoDB client.
func (db *DB) Client() *dynamodb.Client { return db.client }

// avS and avN are a string and a number as attribute values, for the keys
// and expression values of requests. Items go through attributevalue.
func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func avN(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// scan reads every item of table with a paginated Scan (for the small tables
// read whole) and hands each page's items to f, stopping at f's first error.
func (db *DB) scan(ctx context.Context, table string, f func(items []map[string]types.AttributeValue) error) error {
	return db.scanWith(ctx, &dynamodb.ScanInput{TableName: aws.String(table)}, f)
}

// scanWith is scan with the request in (its table, and a filter or
// projection if it has one).
func (db *DB) scanWith(ctx context.Context, in *dynamodb.ScanInput, f func(items []map[string]types.AttributeValue) error) error {
	p := dynamodb.NewScanPaginator(db.client, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return fail("Scan", err)
		}
		if err := f(out.Items); err != nil {
			return err
		}
	}
	return nil
}

// fail wraps a DynamoDB error of operation op as a rules error. What a retry
// may cure (throttling, server faults, timeouts, the network) is
// EUNAVAILABLE; a request DynamoDB refuses for what it is (a missing table,
// access denied, a malformed request) is EINTERNAL. The caller sees neither
// cause. The logs see the operation and the error's code or kind, never the
// SDK's message, which can quote request values.
func fail(op string, err error) error {
	code := stampduty.EUNAVAILABLE
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"LimitExceededException", "InternalServerError", "ServiceUnavailable", "TransactionConflictException":
		default:
			if api.ErrorFault() != smithy.FaultServer {
				code = stampduty.EINTERNAL
			}
		}
	}
	if code == stampduty.EINTERNAL {
		return stampduty.Internal(&dbError{op: op, err: err})
	}
	return stampduty.Unavailable(&dbError{op: op, err: err})
}

// dbError is a failed DynamoDB call. Its text names the operation and the
// kind of failure only; the SDK's error stays reachable with errors.As.
type dbError struct {
	op  string
	err error
}

func (e *dbError) Error() string { return "dynamodb " + e.op + ": " + kind(e.err) }
func (e *dbError) Unwrap() error { return e.err }

// kind names what went wrong in err without quoting it: the API error code,
// or the kind of transport failure.
func kind(err error) string {
	var api smithy.APIError
	var netErr net.Error
	switch {
	case errors.As(err, &api):
		return api.ErrorCode()
	case errors.Is(err, context.DeadlineExceeded):
		return "request deadline exceeded"
	case errors.Is(err, context.Canceled):
		return "request canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	}
	return "transport error"
}

// writeFail is fail for a write: unless DynamoDB refused it (a client-fault
// error such as throttling), the write may have happened — the answer was
// lost or was a server fault — and the error says so.
func writeFail(op string, err error) error {
	e := fail(op, err).(*stampduty.Error)
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorFault() == smithy.FaultServer {
		e.Err = fmt.Errorf("%w (%w)", e.Err, orders.ErrOutcomeUnknown)
	}
	return e
}

// conditionFailed reports whether err is a failed ConditionExpression.
func conditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
