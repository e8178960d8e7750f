package main

import (
	"strings"
	"testing"
	"time"
)

// TestDispatchPollers: with LOCAL_DISPATCH_POLLERS=2 the stack runs the
// dispatch function's first two schedules (the template's DispatchPollers
// set to 2), each sending its input as the payload, and the function runs
// them as pollers 0 and 1 of 2, side by side on two instances.
func TestDispatchPollers(t *testing.T) {
	s, out, stop := startStack(t, map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0",
		"LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0", "LOCAL_DISPATCH_POLLERS": "2"})
	var got []string
	for _, j := range s.schedules {
		if j.Function == dispatchFunction {
			got = append(got, j.Rule+" "+string(j.Input))
		}
	}
	if want := `Dispatch {"poller": 0, "pollers": 2}; Dispatch1 {"poller": 1, "pollers": 2}`; strings.Join(got, "; ") != want {
		t.Errorf("the dispatch schedules run = %q, want %s", got, want)
	}
	// Each poller's first line, a JSON record of the package webhooks.
	want := []string{`"msg":"polling as poller 0 of 2","source":"webhooks"`, `"msg":"polling as poller 1 of 2","source":"webhooks"`}
	logged := func(w string) bool {
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "["+dispatchFunction+"] {") && strings.Contains(line, w) {
				return true
			}
		}
		return false
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if logged(want[0]) && logged(want[1]) {
			break
		}
	}
	stop()
	logs := out.String()
	for _, w := range want {
		if !logged(w) {
			t.Errorf("output lacks a line of %s with %s", dispatchFunction, w)
		}
	}
	if strings.Contains(logs, "scheduled run of "+dispatchFunction) {
		t.Errorf("a run of the dispatch failed:\n%s", logs)
	}
	if got := s.pools[dispatchFunction].Started(); got != 2 {
		t.Errorf("the pollers ran on %d instances, want 2 (side by side)", got)
	}
}

// dispatchFunction is the webhook dispatch function's logical id.
const dispatchFunction = "WebhookDispatchFunction"
