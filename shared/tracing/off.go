//go:build !tracing

package tracing

import "github.com/aws/smithy-go/middleware"

// Enabled reports whether this build traces the SDK's calls: false, as it
// was built without -tags tracing.
const Enabled = false

// Instrument would add X-Ray's middleware to the SDK client options
// apiOptions belongs to (a client's Options.APIOptions); in this build it
// leaves them as they are.
func Instrument(apiOptions *[]func(*middleware.Stack) error) {}
