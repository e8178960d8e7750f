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
	"encoding/json"
	"time"
)

// LambdaNamespace is the namespace of Lambda's own metrics.
const LambdaNamespace = "AWS/Lambda"

// lambdaRecord is one EMF record of an invocation's AWS/Lambda metrics.
type lambdaRecord struct {
	AWS          lambdaMeta `json:"_aws"`
	FunctionName string     `json:"FunctionName"`
	Invocations  float64    `json:"Invocations"`
	Errors       float64    `json:"Errors"`
}

type lambdaMeta struct {
	Timestamp         int64             `json:"Timestamp"`
	CloudWatchMetrics []lambdaDirective `json:"CloudWatchMetrics"`
}

type lambdaDirective struct {
	Namespace  string         `json:"Namespace"`
	Dimensions [][]string     `json:"Dimensions"`
	Metrics    []lambdaMetric `json:"Metrics"`
}

type lambdaMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

// record writes the AWS/Lambda metrics of one invocation that reached the
// function's code, failed or not, at now, as one prefixed line of fn.Log.
func (fn Function) record(failed bool, now time.Time) {
	rec := lambdaRecord{
		AWS: lambdaMeta{Timestamp: now.UnixMilli(), CloudWatchMetrics: []lambdaDirective{{
			Namespace:  LambdaNamespace,
			Dimensions: [][]string{{"FunctionName"}},
			Metrics:    []lambdaMetric{{"Invocations", "Count"}, {"Errors", "Count"}},
		}}},
		FunctionName: fn.Name,
		Invocations:  1,
	}
	if failed {
		rec.Errors = 1
	}
	line, err := json.Marshal(rec)
	if err != nil { // a struct of strings and numbers: never
		return
	}
	_, _ = fn.Log.Write(append(append([]byte("["+fn.Name+"] "), line...), '\n'))
}
