//go:build tracing

package tracing

import (
	"os"

	"github.com/aws/smithy-go/middleware"

	"stampduty/shared/tracing/xray"
)

// Enabled reports whether this build traces the SDK's calls: true, as it
// was built with -tags tracing.
const Enabled = true

// Instrument adds X-Ray's middleware to the SDK client options apiOptions
// belongs to (a client's Options.APIOptions): each call is a subsegment
// (service, operation, region, request id, status) of the trace the
// invocation's context carries (Lambda's runtime puts its trace header
// there), sent to the X-Ray daemon at AWS_XRAY_DAEMON_ADDRESS, which Lambda
// sets before the function starts (dialled at the first traced call). A
// call outside a sampled trace is not recorded.
func Instrument(apiOptions *[]func(*middleware.Stack) error) {
	*apiOptions = append(*apiOptions, xray.Middleware(xray.NewDaemon(os.Getenv("AWS_XRAY_DAEMON_ADDRESS"))))
}
