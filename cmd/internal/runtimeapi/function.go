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
// Measured against this package on functions/not-found (host build, 2-core
// shared machine, a scratch test run three times; ranges are over the runs):
//   - Concurrency: one RIE serves one invocation at a time and does not queue
//     the next. Two concurrent invokes on a warm RIE crashed it in 8–10 trials
//     of 10 (nil pointer panic in rapidcore.(*Server).Invoke after
//     "ReserveFailed: AlreadyReserved"), losing both requests. The local stack
//     therefore needs one RIE per instance, i.e. this package's Pool anyway.
//   - Parallel starts: 100 cold starts at once, one request each: all
//     answered after 0.36–0.44 s here, 1.7 s with 100 RIEs. In one run an RIE
//     never answered (connection refused for 10 s): an RIE must be given
//     ports, picked free and released before it binds them, so parallel
//     starts can collide, where Start listens first and hands the address over.
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
// API handlers (server.go) at the costs above, so the twin stays.
package runtimeapi

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Lambda's defaults and limits, applied locally.
const (
	defaultTimeout      = 3 * time.Second
	defaultInitTimeout  = 10 * time.Second // Lambda's limit of an instance's init
	defaultMemoryMB     = 128
	defaultMaxInstances = 100
	// MaxPayload is the largest event and response of a synchronous invocation.
	MaxPayload = 6 * 1024 * 1024
)

var (
	// ErrTimeout reports an invocation (or an init) that ran past its
	// timeout; the instance that ran it has been killed.
	ErrTimeout = errors.New("task timed out")
	// ErrExited reports an instance whose process exited, during init or in
	// the middle of an invocation.
	ErrExited = errors.New("runtime exited")
	// ErrClosed reports the use of an Instance or Pool after Close.
	ErrClosed = errors.New("closed")
	// errNotDelivered marks an invocation whose event never reached the
	// function because its instance died first; a Pool retries it elsewhere.
	errNotDelivered = errors.New("event not delivered")
)

// FunctionError is an error the function reported itself, through
// /invocation/{id}/error or /init/error.
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// Function describes a Lambda function run locally from a built binary.
type Function struct {
	// Name is the logical id, used in logs, the ARN and the log group.
	Name string
	// Path is the built bootstrap binary.
	Path string
	// Env holds KEY=VALUE pairs: the function's own environment. The process
	// gets only these plus the runtime variables, never the parent's
	// environment, like on Lambda. PATH and TZ get Lambda's values unless Env
	// sets them; the reserved AWS_LAMBDA_* variables, _HANDLER and
	// LAMBDA_TASK_ROOT cannot be overridden.
	Env []string
	// Timeout bounds each invocation (3 s when 0): on expiry the instance is
	// killed and the invocation fails with ErrTimeout. InitTimeout bounds an
	// instance's init, from process start to its first /invocation/next (10 s
	// when 0). MemoryMB is only reported (128 when 0). MaxInstances bounds a
	// Pool (100 when 0): invocations beyond it wait for a free instance.
	Timeout, InitTimeout   time.Duration
	MemoryMB, MaxInstances int
	// Log receives each line the instances write to stdout or stderr, whole and
	// prefixed with "[Name] ", and a line when an invocation times out. Nil
	// discards them. Share a writer between pools, or between instances you
	// Start yourself, only through LockedWriter.
	Log io.Writer
}

// withDefaults returns fn with its zero fields defaulted and Path made absolute.
func (fn Function) withDefaults() (Function, error) {
	if fn.Name == "" || fn.Path == "" {
		return fn, fmt.Errorf("function %q has no name or no binary path", fn.Name)
	}
	abs, err := filepath.Abs(fn.Path)
	if err != nil {
		return fn, fmt.Errorf("function %s: %w", fn.Name, err)
	}
	fn.Path = abs
	fn.Timeout = cmp.Or(fn.Timeout, defaultTimeout)
	fn.InitTimeout = cmp.Or(fn.InitTimeout, defaultInitTimeout)
	fn.MemoryMB = cmp.Or(fn.MemoryMB, defaultMemoryMB)
	fn.MaxInstances = cmp.Or(fn.MaxInstances, defaultMaxInstances)
	fn.Log = LockedWriter(cmp.Or(fn.Log, io.Discard))
	return fn, nil
}

// arn returns the function's ARN in the local account, in AWS_REGION
// (us-east-1 when unset).
func (fn Function) arn() string {
	region := "us-east-1"
	for _, kv := range fn.Env {
		if v, ok := strings.CutPrefix(kv, "AWS_REGION="); ok && v != "" {
			region = v
		}
	}
	return "arn:aws:lambda:" + region + ":000000000000:function:" + fn.Name
}

// environ returns the environment of a process talking to the Runtime API at
// api: Lambda's overridable defaults, then fn.Env, then the reserved runtime
// variables (exec.Cmd keeps the last value of a duplicated key).
func (fn Function) environ(api string, now time.Time) []string {
	env := append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "TZ=:UTC"}, fn.Env...)
	return append(env,
		"AWS_LAMBDA_RUNTIME_API="+api,
		"AWS_LAMBDA_FUNCTION_NAME="+fn.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(fn.MemoryMB),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+fn.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME="+now.UTC().Format("2006/01/02")+"/[$LATEST]"+randomHex(16),
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT="+filepath.Dir(fn.Path),
	)
}

// newRequestID returns a random UUID (version 4), like Lambda's request ids.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
