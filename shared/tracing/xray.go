//go:build tracing

package tracing

import (
	"github.com/aws/aws-xray-sdk-go/instrumentation/awsv2"
	"github.com/aws/smithy-go/middleware"
)

// Enabled reports whether this build traces the SDK's calls: true, as it
// was built with -tags tracing.
const Enabled = true

// Instrument adds X-Ray's middleware to the SDK client options apiOptions
// belongs to (a client's Options.APIOptions): each call is a subsegment
// (service, operation, region, request id, status) of the trace the
// invocation's context carries (Lambda puts its trace header there), sent
// to the X-Ray daemon at AWS_XRAY_DAEMON_ADDRESS. A call made outside a
// traced invocation is not recorded.
func Instrument(apiOptions *[]func(*middleware.Stack) error) {
	awsv2.AWSV2Instrumentor(apiOptions)
}
