package runtimeapi

// This file is the local twin of the metrics Lambda itself publishes per
// function in the AWS/Lambda namespace, which the stack's alarms on the
// scheduled functions watch (Errors by FunctionName): on AWS they come
// from the Lambda service, not from the function's log, so a local stack
// would otherwise have nothing to show for them. After each invocation the
// runtime writes one line in CloudWatch's embedded metric format into the
// function's log stream (Function.Log, with the function's prefix), in
// namespace AWS/Lambda with the dimension FunctionName (the function's
// AWS_LAMBDA_FUNCTION_NAME, as Lambda's own), as Lambda counts them:
//   - Invocations 1 for every invocation that reached the function's code
//     (the event was handed to the function, or it ran out of time waiting
//     for it); none for an event refused before (a payload over the limit,
//     a caller that gave up, a closed pool), as Lambda counts no
//     invocation for an invocation error.
//   - Errors 1 for a function error (the function reported one: a
//     returned error, a panic, a response over the limit), a timeout, a
//     crash, or an instance that failed its init for this invocation
//     (Lambda's Runtime.InitError or Sandbox.Timedout); else 0, so that
//     the Average of Errors is the error rate, as on AWS.
//
// Throttles are not twinned: the local pool queues an invocation for a
// free instance instead of refusing it, so it never throttles. Only this
// local runtime writes the line: on AWS the Lambda service publishes these
// metrics itself, and the functions never write a record in AWS/Lambda.

import (
	"time"

	"stampduty/shared/metrics"
)

// LambdaNamespace is the namespace of Lambda's own metrics.
const LambdaNamespace = "AWS/Lambda"

// record writes the AWS/Lambda metrics of one invocation that reached the
// function's code, failed or not, at now, as one prefixed line of fn.Log.
func (fn Function) record(failed bool, now time.Time) {
	errs := 0.0
	if failed {
		errs = 1
	}
	line, err := metrics.Record(LambdaNamespace, []metrics.Dimension{{Name: metrics.FunctionName, Value: fn.Name}},
		[]metrics.Value{{Name: "Invocations", Unit: metrics.Count, Values: []float64{1}}, {Name: "Errors", Unit: metrics.Count, Values: []float64{errs}}}, now)
	if err != nil { // strings and numbers: never
		return
	}
	_, _ = fn.Log.Write(append(append([]byte("["+fn.Name+"] "), line...), '\n'))
}
