// Package runtimeapi runs Lambda functions locally from their built bootstrap
// binaries. Each Instance is one OS process with its own implementation of the
// Lambda Runtime API (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html)
// on 127.0.0.1, so an instance only ever receives the events meant for it. A
// Pool keeps instances warm between invocations and starts new ones (cold
// starts) when all are busy, up to a limit, like the Lambda service does.
//
// Why not AWS's own emulator. aws-lambda-runtime-interface-emulator
// (cmd/aws-lambda-rie at v0.0.0-20261030222936-bef5c4ba774d, the module
// proxy's latest; no tagged versions) runs our binaries unchanged: started as
// `aws-lambda-rie --runtime-interface-emulator-address A --runtime-api-address
// B ./bootstrap`, it starts the bootstrap on the first invoke, answers
// /2015-03-31/functions/function/invocations and keeps that one process warm.
// It was measured against this package on functions/not-found (host build,
// 2-core shared machine, a scratch test run three times; ranges are over
// the runs):
//   - Concurrency: one RIE serves one invocation at a time and does not queue
//     the next. Two concurrent invokes on a warm RIE crashed it in 8–10 trials
//     of 10 (nil pointer panic in rapidcore.(*Server).Invoke after
//     "ReserveFailed: AlreadyReserved"), losing both requests. The local stack
//     therefore needs one RIE per instance, i.e. this package's Pool anyway.
//   - Parallel starts: 100 cold starts at once, one request each: all
//     answered after 0.36–0.44 s here, 1.7 s with 100 RIEs. In one run
//     an RIE never answered (connection refused for 10 s): an RIE must be
//     given port numbers, picked free and released before it binds them, so
//     parallel starts can collide, where Start listens first and hands the
//     address over.
//   - Cold start, start to first response, median of 20: 4.6–6.6 ms here,
//     17–21 ms with the RIE. Warm invoke, median of 200: 0.35–0.45 ms here,
//     1.0–1.4 ms through the RIE.
//   - Memory: each RIE is a second process of 13 MB RSS beside its 8.3 MB
//     bootstrap: 100 instances (TestLocalStack/ConcurrentCreates) would add 1.3 GB.
//   - Init duration, which make bench reports: the RIE's REPORT line says
//     "Init Duration: 0.02 ms" whatever the init took; the true figure
//     (4.3–5.3 ms, as InitDuration's 3.6–5.1 ms) is only in its debug log,
//     "INIT REPORT(durationMs: …)", which is not an interface.
//   - Errors: a function error comes back as 200 with the error's JSON as the
//     body, a timeout as 200 with the text "Task timed out after 1.00
//     seconds"; only a crash is a 502. The local HTTP API maps a function
//     error to 500 and a timeout to 503 (cmd/internal/apigw), which with the
//     RIE means guessing from the body.
//
// Keeping the concurrency, the errors and the init figure means keeping the
// Pool and Instance of this package; the RIE would replace only its Runtime
// API handlers (server.go, 138 lines) at the costs above, so the twin stays.
package runtimeapi

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Limits and defaults of the Lambda service that the local runtime applies.
const (
	// DefaultTimeout is Lambda's default function timeout.
	DefaultTimeout = 3 * time.Second
	// DefaultInitTimeout is Lambda's limit for the init phase of an instance.
	DefaultInitTimeout = 10 * time.Second
	// DefaultMemoryMB is Lambda's default memory size.
	DefaultMemoryMB = 128
	// DefaultMaxInstances bounds a Pool when Function.MaxInstances is 0.
	DefaultMaxInstances = 100
	// MaxPayload is the largest event and response of a synchronous invocation.
	MaxPayload = 6 * 1024 * 1024
)

// ErrTimeout reports an invocation (or an init) that ran past its timeout; the
// instance that ran it has been killed.
var ErrTimeout = errors.New("task timed out")

// ErrExited reports an instance whose process exited, during init or in the
// middle of an invocation.
var ErrExited = errors.New("runtime exited")

// ErrClosed reports the use of an Instance or Pool after Close.
var ErrClosed = errors.New("closed")

// errNotDelivered marks an invocation whose event never reached the function
// because its instance died first; a Pool retries it on another instance.
var errNotDelivered = errors.New("event not delivered")

// FunctionError is an error the function reported itself, through
// /invocation/{id}/error or /init/error (errorType and errorMessage).
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

// Error returns "Type: Message".
func (e *FunctionError) Error() string {
	return e.Type + ": " + e.Message
}

// Function describes a Lambda function run locally from a built binary.
type Function struct {
	// Name is the logical id, used in logs, the ARN and the log group.
	Name string
	// Path is the built bootstrap binary.
	Path string
	// Env holds KEY=VALUE pairs: the function's own environment (template
	// variables, AWS_REGION, credentials...). The process gets only these plus
	// the runtime variables (AWS_LAMBDA_RUNTIME_API, AWS_LAMBDA_FUNCTION_NAME,
	// ...), never the parent's environment, like on Lambda. PATH and TZ get
	// Lambda's values unless Env sets them; the reserved AWS_LAMBDA_* variables,
	// _HANDLER and LAMBDA_TASK_ROOT cannot be overridden.
	Env []string
	// Timeout bounds each invocation (DefaultTimeout when 0). On expiry the
	// instance is killed and the invocation fails with ErrTimeout.
	Timeout time.Duration
	// InitTimeout bounds the init phase of an instance, from process start to
	// its first /invocation/next (DefaultInitTimeout when 0).
	InitTimeout time.Duration
	// MemoryMB is reported in AWS_LAMBDA_FUNCTION_MEMORY_SIZE (DefaultMemoryMB
	// when 0); it is not enforced.
	MemoryMB int
	// MaxInstances bounds the concurrent instances of a Pool
	// (DefaultMaxInstances when 0). Invocations beyond it wait for a free
	// instance or for their context.
	MaxInstances int
	// Log receives each line the instances write to stdout or stderr, whole and
	// prefixed with "[Name] ", and a line when an invocation times out. Nil
	// discards them. A Pool serialises the writes of its instances; share a
	// writer between pools, or between instances you Start yourself, only
	// through LockedWriter.
	Log io.Writer
}

// withDefaults returns fn with its zero fields defaulted and Path made absolute.
func (fn Function) withDefaults() (Function, error) {
	if fn.Name == "" {
		return fn, errors.New("function has no name")
	}
	if fn.Path == "" {
		return fn, fmt.Errorf("function %s has no binary path", fn.Name)
	}
	abs, err := filepath.Abs(fn.Path)
	if err != nil {
		return fn, fmt.Errorf("function %s: %w", fn.Name, err)
	}
	fn.Path = abs
	fn.Timeout = cmp.Or(fn.Timeout, DefaultTimeout)
	fn.InitTimeout = cmp.Or(fn.InitTimeout, DefaultInitTimeout)
	fn.MemoryMB = cmp.Or(fn.MemoryMB, DefaultMemoryMB)
	fn.MaxInstances = cmp.Or(fn.MaxInstances, DefaultMaxInstances)
	fn.Log = LockedWriter(cmp.Or(fn.Log, io.Discard))
	return fn, nil
}

// region returns AWS_REGION from the function's environment, us-east-1 when unset.
func (fn Function) region() string {
	region := "us-east-1"
	for _, kv := range fn.Env {
		if v, ok := strings.CutPrefix(kv, "AWS_REGION="); ok && v != "" {
			region = v
		}
	}
	return region
}

// arn returns the function's ARN in the local account.
func (fn Function) arn() string {
	return "arn:aws:lambda:" + fn.region() + ":000000000000:function:" + fn.Name
}

// environ returns the environment of a process talking to the Runtime API at
// api: Lambda's overridable defaults, then fn.Env, then the reserved runtime
// variables (exec.Cmd keeps the last value of a duplicated key).
func (fn Function) environ(api, logStream string) []string {
	env := make([]string, 0, len(fn.Env)+10)
	env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin", "TZ=:UTC")
	env = append(env, fn.Env...)
	return append(env,
		"AWS_LAMBDA_RUNTIME_API="+api,
		"AWS_LAMBDA_FUNCTION_NAME="+fn.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(fn.MemoryMB),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+fn.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME="+logStream,
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT="+filepath.Dir(fn.Path),
	)
}
