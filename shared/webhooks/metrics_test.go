package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// TestAttemptOutcome: every attempt is exactly one of the five outcomes of
// the Attempts metric, as metrics.go documents: the status's class when
// there is one (3xx and 410 with the 4xx, anything from 500 with the
// 5xx), else timeout when time ran out at any step (DNS included), else
// refused (the guard, a name that does not resolve, a refused or reset
// connection, TLS).
func TestAttemptOutcome(t *testing.T) {
	refusedConn := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"200", Result{Status: 200}, Outcome2xx},
		{"204", Result{Status: 204}, Outcome2xx},
		{"299", Result{Status: 299, Err: nil}, Outcome2xx},
		{"307 not followed", Result{Status: 307, Err: errors.New("receiver answered 307")}, Outcome4xx},
		{"404", Result{Status: 404, Err: errors.New("receiver answered 404")}, Outcome4xx},
		{"410 disables", Result{Status: 410, Disabled: true, Err: errors.New("gone")}, Outcome4xx},
		{"500", Result{Status: 500, Err: errors.New("receiver answered 500")}, Outcome5xx},
		{"503", Result{Status: 503, Err: errors.New("receiver answered 503")}, Outcome5xx},
		{"a status past 599", Result{Status: 600, Err: errors.New("receiver answered 600")}, Outcome5xx},
		{"cut at the timeout", Result{Err: fmt.Errorf("deliver event x: %w", context.DeadlineExceeded)}, OutcomeTimeout},
		{"a DNS timeout", Result{Err: stampduty.Unavailable(fmt.Errorf("resolve webhook host: %w", &net.DNSError{IsTimeout: true}))}, OutcomeTimeout},
		{"a dial timeout", Result{Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ETIMEDOUT)}}, OutcomeTimeout},
		{"connection refused", Result{Err: fmt.Errorf("deliver event x: %w", refusedConn)}, OutcomeRefused},
		{"a private address", Result{Err: fmt.Errorf("dial: %w", &BlockedError{Addr: netip.MustParseAddr("10.0.0.1"), Kind: "private"})}, OutcomeRefused},
		{"a name that does not resolve", Result{Err: &net.DNSError{IsNotFound: true}}, OutcomeRefused},
		{"closed without an answer", Result{Err: errors.New("EOF")}, OutcomeRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := attemptOutcome(tc.r); got != tc.want {
				t.Errorf("attemptOutcome(%+v) = %s, want %s", tc.r, got, tc.want)
			}
		})
	}
}

// TestDueAge: the age is of the earliest due delivery, whatever order the
// jobs come in, not counting test orders' steps; none when no delivery is
// due (an idle dispatcher writes no metric), 0 when the earliest is due now.
func TestDueAge(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return stampduty.FormatTime(now.Add(-d)) }
	job := func(hook string, ago time.Duration) Job { return Job{Owner: "o", Webhook: hook, Next: at(ago)} }
	for _, tc := range []struct {
		name   string
		due    []Job
		want   float64
		wantOK bool
	}{
		{"none due", nil, 0, false},
		{"the earliest, out of order", []Job{job("a", time.Minute), job("b", 11*time.Minute), job("a", 2*time.Second)}, 660, true},
		{"steps are not deliveries", []Job{job(orders.StepsHook, time.Hour), job("a", 90*time.Second)}, 90, true},
		{"only steps", []Job{job(orders.StepsHook, time.Hour)}, 0, false},
		{"due right now", []Job{job("a", 0)}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := dueAge(tc.due, now); got != tc.want || ok != tc.wantOK {
				t.Errorf("dueAge = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
