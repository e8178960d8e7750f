// Package tracing is the one switch between a function's AWS SDK clients and
// AWS X-Ray. It is chosen when the functions are built, not when they run:
//
//   - the default build (off.go) adds nothing to a client and links no
//     tracing code: a function's binary, its init and its size are what they
//     are without tracing;
//   - a build with -tags tracing (xray.go; `make build TRACING=on`, `make
//     deploy TRACING=on`) adds package xray's middleware to every client
//     built through Instrument: each DynamoDB, S3 or Cognito call becomes a
//     subsegment of the invocation's trace, sent over UDP to the X-Ray
//     daemon Lambda runs beside the function (AWS_XRAY_DAEMON_ADDRESS) when
//     the stack's Tracing parameter is Active.
//
// A template parameter cannot change a binary that is already built, so the
// Makefile sets both from one variable, TRACING: `-tags tracing` with
// Tracing=Active, none with Tracing=PassThrough. Should they disagree
// (a deploy by hand), nothing breaks: an untraced binary under Active gives
// Lambda's own segments without the SDK's subsegments, and a traced one
// under PassThrough sends nothing, as package xray records only sampled
// invocations and Lambda samples none then.
//
// Why package xray writes the subsegments itself rather than the X-Ray SDK
// for Go or OpenTelemetry: package xray's doc says.
package tracing
