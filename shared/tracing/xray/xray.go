// Package xray records a Lambda function's AWS SDK calls in AWS X-Ray: each
// call of a client whose options went through Middleware is one subsegment
// (service, operation, region, request id, HTTP status, retries; error,
// throttle or fault as X-Ray marks them) of the invocation's trace, sent as
// a segment document over UDP to the X-Ray daemon Lambda runs beside the
// function when its tracing is Active (AWS_XRAY_DAEMON_ADDRESS).
//
// Only the tracing build links it (package tracing, -tags tracing). It is
// written here, on the documented segment document and daemon protocol,
// rather than taken from the X-Ray SDK for Go: that SDK links gRPC,
// fasthttp and the whole AWS SDK v1, which made a function 2.4 to 2.9
// times its size (GetOrderFunction 8.75 to 25.38 MiB) and its init 2 to 3
// times longer, and it is in maintenance mode since February 2026.
// OpenTelemetry would need a collector beside the function (the ADOT
// layer) to reach X-Ray. Nothing is set up until a traced call is made.
package xray

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TraceHeaderKey is the context key under which Lambda's Go runtime
// (aws-lambda-go) puts the invocation's trace header: a plain string, as it
// does.
const TraceHeaderKey = "x-amzn-trace-id"

// DefaultDaemon is the daemon's address when AWS_XRAY_DAEMON_ADDRESS is
// unset.
const DefaultDaemon = "127.0.0.1:2000"

// Header is what a trace header (Root=...;Parent=...;Sampled=1) says.
type Header struct {
	Root, Parent string
	Sampled      bool
}

// ParseHeader reads a trace header; ok is false when it names no trace
// and parent.
func ParseHeader(s string) (h Header, ok bool) {
	for part := range strings.SplitSeq(s, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Root":
			h.Root = v
		case "Parent":
			h.Parent = v
		case "Sampled":
			h.Sampled = v == "1"
		}
	}
	return h, h.Root != "" && h.Parent != ""
}

// Daemon is where subsegments go: the X-Ray daemon's UDP address, dialled
// at the first subsegment sent.
type Daemon struct {
	addr string
	once sync.Once
	conn net.Conn
}

// NewDaemon returns the daemon at address, as AWS_XRAY_DAEMON_ADDRESS gives
// it ("host:port", or "tcp:host:port udp:host:port", of which the UDP one);
// DefaultDaemon when it is "".
func NewDaemon(address string) *Daemon {
	addr := DefaultDaemon
	for f := range strings.FieldsSeq(address) {
		if a, ok := strings.CutPrefix(f, "udp:"); ok {
			addr = a
		} else if !strings.HasPrefix(f, "tcp:") {
			addr = f
		}
	}
	return &Daemon{addr: addr}
}

// send sends one segment document, best effort: the daemon's protocol has
// no answer, and a trace is never worth failing a call for.
func (d *Daemon) send(doc []byte) {
	d.once.Do(func() { d.conn, _ = net.Dial("udp", d.addr) })
	if d.conn != nil {
		_, _ = d.conn.Write(append([]byte(`{"format": "json", "version": 1}`+"\n"), doc...))
	}
}

// subsegment is the segment document of one SDK call.
type subsegment struct {
	Name      string  `json:"name"`
	ID        string  `json:"id"`
	TraceID   string  `json:"trace_id"`
	ParentID  string  `json:"parent_id"`
	StartTime float64 `json:"start_time"`
	EndTime   float64 `json:"end_time"`
	Type      string  `json:"type"`
	Namespace string  `json:"namespace"`
	Error     bool    `json:"error,omitempty"`
	Throttle  bool    `json:"throttle,omitempty"`
	Fault     bool    `json:"fault,omitempty"`
	AWS       struct {
		Operation string `json:"operation"`
		Region    string `json:"region"`
		RequestID string `json:"request_id,omitempty"`
		Retries   int    `json:"retries"`
	} `json:"aws"`
	HTTP struct {
		Response struct {
			Status int `json:"status,omitempty"`
		} `json:"response"`
	} `json:"http"`
}

// attemptsKey is the stack value of the call's attempts, which the
// deserialize step counts.
type attemptsKey struct{}

// attempts are an SDK call's HTTP attempts: how many, and the last one's
// status.
type attempts struct {
	n, status int
}

// Middleware returns the SDK client option (for Options.APIOptions) that
// sends a subsegment of each call made within a sampled trace to d.
func Middleware(d *Daemon) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("XRaySubsegment", func(
			ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler,
		) (middleware.InitializeOutput, middleware.Metadata, error) {
			raw, _ := ctx.Value(TraceHeaderKey).(string)
			h, ok := ParseHeader(raw)
			if !ok || !h.Sampled {
				return next.HandleInitialize(ctx, in)
			}
			a := &attempts{}
			ctx = middleware.WithStackValue(ctx, attemptsKey{}, a)
			start := time.Now()
			out, md, err := next.HandleInitialize(ctx, in)
			d.send(document(ctx, h, start, time.Now(), a, md, err))
			return out, md, err
		}), middleware.After)
		if err != nil {
			return err
		}
		return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("XRayAttempt", func(
			ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler,
		) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			if a, ok := middleware.GetStackValue(ctx, attemptsKey{}).(*attempts); ok {
				a.n++
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok {
					a.status = resp.StatusCode
				}
			}
			return out, md, err
		}), middleware.Before)
	}
}

// throttles are the error codes AWS services throttle with.
var throttles = map[string]bool{"ThrottlingException": true, "Throttling": true, "ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded": true, "TooManyRequestsException": true, "SlowDown": true, "RequestThrottled": true}

// document returns the subsegment of the call that ran from start to end.
func document(ctx context.Context, h Header, start, end time.Time, a *attempts, md middleware.Metadata, err error) []byte {
	var id [8]byte
	rand.Read(id[:])
	s := subsegment{Name: awsmiddleware.GetServiceID(ctx), ID: hex.EncodeToString(id[:]), TraceID: h.Root, ParentID: h.Parent,
		StartTime: seconds(start), EndTime: seconds(end), Type: "subsegment", Namespace: "aws"}
	s.AWS.Operation, s.AWS.Region = awsmiddleware.GetOperationName(ctx), awsmiddleware.GetRegion(ctx)
	s.AWS.RequestID, _ = awsmiddleware.GetRequestIDMetadata(md)
	s.AWS.Retries = max(a.n-1, 0)
	status := a.status
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
		if s.AWS.RequestID == "" {
			var withID interface{ ServiceRequestID() string }
			if errors.As(err, &withID) {
				s.AWS.RequestID = withID.ServiceRequestID()
			}
		}
	}
	s.HTTP.Response.Status = status
	var ae smithy.APIError
	switch {
	case err == nil:
	case status == 429 || errors.As(err, &ae) && throttles[ae.ErrorCode()]:
		s.Error, s.Throttle = true, true
	case status >= 400 && status < 500:
		s.Error = true
	default: // 5xx, or no answer at all (a timeout, the network)
		s.Fault = true
	}
	doc, _ := json.Marshal(s) // a struct of strings and numbers: never fails
	return doc
}

// seconds is t as X-Ray's times are: seconds since the epoch.
func seconds(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }
