// Package tracing is the one switch between a function's AWS SDK clients and
// AWS X-Ray. It is chosen when the functions are built, not when they run:
//
//   - the default build (off.go) adds nothing to a client and links no
//     tracing code: a function's binary, its init and its size are what they
//     are without tracing;
//   - a build with -tags tracing (xray.go; `make build TRACING=on`, `make
//     deploy TRACING=on`) adds AWS X-Ray's middleware to every client built
//     through Instrument: each DynamoDB, S3 or Cognito call becomes a
//     subsegment of the invocation's trace, sent over UDP to the X-Ray
//     daemon Lambda runs beside the function (AWS_XRAY_DAEMON_ADDRESS) when
//     the stack's Tracing parameter is Active.
//
// A template parameter cannot change a binary that is already built, so the
// Makefile sets both from one variable, TRACING: `-tags tracing` with
// Tracing=Active, none with Tracing=PassThrough. Should they disagree
// (a deploy by hand), nothing breaks: an untraced binary under Active gives
// Lambda's own segments without the SDK's subsegments, and a traced one
// under PassThrough sends nothing, as the X-Ray SDK records only sampled
// requests and Lambda samples none then.
//
// The X-Ray SDK for Go (github.com/aws/aws-xray-sdk-go, instrumentation/awsv2)
// rather than OpenTelemetry: it writes straight to the daemon Lambda already
// runs, where OpenTelemetry needs a collector (the ADOT Lambda layer, an
// extension started with every cold start) or a signed OTLP export at the
// end of each invocation. The SDK is in maintenance mode since 25 February
// 2026 (security fixes only); moving to OpenTelemetry changes xray.go alone.
package tracing
