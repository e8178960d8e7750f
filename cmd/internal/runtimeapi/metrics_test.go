package runtimeapi

import (
	"strings"
	"testing"
	"time"

	"stampduty/shared/metrics"
)

// lambdaMetrics returns the AWS/Lambda Invocations and Errors that the
// EMF lines of name's log (logs) add up to, and how many lines carry them.
func lambdaMetrics(t *testing.T, logs, name string) (invocations, errors float64, lines int) {
	t.Helper()
	for line := range strings.Lines(logs) {
		rest, ok := strings.CutPrefix(line, "["+name+"] ")
		if !ok {
			t.Errorf("line without the function's prefix: %q", line)
			continue
		}
		ps, ok, err := metrics.Read([]byte(rest))
		if err != nil || !ok {
			continue
		}
		lines++
		for _, p := range ps {
			if p.Namespace != LambdaNamespace || p.Dimensions["FunctionName"] != name || p.Unit != metrics.Count {
				t.Errorf("point %+v, want a Count in %s for FunctionName %s", p, LambdaNamespace, name)
			}
			for _, v := range p.Values {
				switch p.Name {
				case "Invocations":
					invocations += v
				case "Errors":
					errors += v
				default:
					t.Errorf("metric %s, want Invocations and Errors only", p.Name)
				}
			}
		}
	}
	return invocations, errors, lines
}

// TestLambdaMetrics: each invocation writes AWS/Lambda's Invocations and
// Errors for its FunctionName into the function's log stream, as the
// Lambda service counts them: a function error, a panic, a crash, a
// timeout and an init failure are Errors, a success is an invocation with
// Errors 0, and an event refused before the function's code (a payload
// over the limit) is neither. The alarms on the scheduled functions watch
// Errors; this is their local twin.
func TestLambdaMetrics(t *testing.T) {
	for _, tc := range []struct {
		name        string
		event       map[string]any
		env         string
		invocations float64
		errors      float64
	}{
		{"a success is an invocation and no error", map[string]any{"action": "echo"}, "", 1, 0},
		{"a function error is an error", map[string]any{"action": "error", "value": "no table"}, "", 1, 1},
		{"a panic is an error", map[string]any{"action": "panic", "value": "boom"}, "", 1, 1},
		{"a crash is an error", map[string]any{"action": "exit", "code": 3}, "", 1, 1},
		{"a timeout is an error", map[string]any{"action": "sleep", "sleep": "5s"}, "", 1, 1},
		{"an init failure is an error", map[string]any{"action": "echo"}, "TEST_INIT=error", 1, 1},
		{"a payload over the limit is no invocation", map[string]any{"action": "echo", "result": strings.Repeat("x", MaxPayload)}, "", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "metricsfn"
			fn, logs := testFunction(t, name)
			fn.Timeout = 500 * time.Millisecond
			if tc.env != "" {
				fn.Env = append(fn.Env, tc.env)
			}
			p := newPool(t, fn)
			err := call(t, p, tc.event, nil)
			if (err != nil) != (tc.errors > 0 || tc.invocations == 0) {
				t.Fatalf("invoke: %v", err)
			}
			if err := p.Close(); err != nil { // waits for the output to be copied
				t.Fatalf("Close: %v", err)
			}
			inv, errs, lines := lambdaMetrics(t, logs.String(), name)
			if inv != tc.invocations || errs != tc.errors {
				t.Errorf("AWS/Lambda Invocations %v, Errors %v; want %v, %v", inv, errs, tc.invocations, tc.errors)
			}
			if want := int(tc.invocations); lines != want {
				t.Errorf("%d metric lines, want %d (one per invocation)", lines, want)
			}
		})
	}
}
