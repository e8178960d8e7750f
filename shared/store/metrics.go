package store

// This file holds what the store adds to the invocation's metrics
// (package metrics, through the call's context): DynamoDB's throttling,
// for its alarm, and the SDK's retries.

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"stampduty/shared/metrics"
)

// throttleCodes are the error codes with which DynamoDB refuses a request
// for want of capacity: a table's or index's provisioned or on-demand
// throughput (ProvisionedThroughputExceededException,
// ThrottlingException) or the account's request rate
// (RequestLimitExceeded).
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
}

// countAttempts adds each DynamoDB call's throttled attempts to
// metrics.DynamoDBThrottles and its retries to metrics.DynamoDBRetries,
// in the Set the call's context carries (none: nothing is counted). It
// wraps the SDK's retry loop (the Finalize step's "Retry"), whose
// metadata lists every attempt once the call is over: a throttled answer
// counts whether the SDK retried it or gave up (out of attempts, or its
// retry quota spent: a retry the quota refuses is no retry, and the
// throttle before it counts once), and a retry counts whatever its cause
// (a throttle, a 5xx, a timeout, a lost connection).
var countAttempts = middleware.FinalizeMiddlewareFunc("CountAttempts", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
	middleware.FinalizeOutput, middleware.Metadata, error,
) {
	out, md, err := next.HandleFinalize(ctx, in)
	if results, ok := retry.GetAttemptResults(md); ok {
		var throttles, retries float64
		for _, r := range results.Results {
			if r.Retried {
				retries++
			}
			var api smithy.APIError
			if errors.As(r.Err, &api) && throttleCodes[api.ErrorCode()] {
				throttles++
			}
		}
		if throttles > 0 {
			metrics.Add(ctx, metrics.DynamoDBThrottles, throttles)
		}
		if retries > 0 {
			metrics.Add(ctx, metrics.DynamoDBRetries, retries)
		}
	}
	return out, md, err
})

// addCountAttempts puts countAttempts around the SDK's retry loop, or
// first in the Finalize step when a stack has none.
func addCountAttempts(stack *middleware.Stack) error {
	if _, ok := stack.Finalize.Get("Retry"); ok {
		return stack.Finalize.Insert(countAttempts, "Retry", middleware.Before)
	}
	return stack.Finalize.Add(countAttempts, middleware.Before)
}
