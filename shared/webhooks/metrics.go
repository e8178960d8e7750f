package webhooks

// This file holds what the dispatcher tells the dashboard and the alarms
// (metrics.Add with the run's context, which function.MeasuredRun gives a
// Set): the events relayed, each attempt by outcome, the events given up,
// and the age of the oldest due delivery. None costs a DynamoDB call: each
// is counted where the dispatcher learns it anyway.
//
// What counts, and what does not:
//   - EventsRelayed: an event removed from its order's outbox once the
//     jobs of its subscribed webhooks were stored (new or already there),
//     counted when the removal lands. A relay that dies between the puts
//     and the removal counts the event in the pass that removes it, so an
//     event counts once, except when a writer that read the order before
//     the removal puts it back (the relay hands it on again, putting no
//     job twice): then it counts twice. An event none of whose webhooks
//     listens any longer (deleted or disabled since the change) is removed
//     without a job and not counted.
//   - Attempts, by Outcome (attemptOutcome): every delivery attempt whose
//     POST was made or refused, counted when its result is known, before
//     its record is written: the receiver saw it even if the record is
//     lost (and the attempt, made again, counts again).
//   - EventsGivenUp: a job whose last attempt (MaxAttempts) failed, counted
//     once its record is stored (a lost record makes the attempt again,
//     which would count it again).
//   - OldestDueAge: at each read of the due jobs, now minus the Next of the
//     earliest due delivery it returned (they come soonest first, across
//     the poller's shards), in seconds; not written when none is due. A job waiting
//     on an earlier one of its order is postponed to when that one is due,
//     and a resting webhook's jobs to the end of its rest, so neither makes
//     the age grow; a leased job (another run is attempting it) still
//     counts, for a few seconds at most.
//   - Test orders' steps (steps.go) are not deliveries: they count in none
//     of these (their job is never an attempt, a give-up or a due
//     delivery's age). Their failures show in the log, and a step that
//     never comes makes its test order stall visibly to its caller.

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"stampduty/shared/metrics"
)

// The Outcome dimension's values of metrics.Attempts: every attempt is
// exactly one of them.
const (
	// Outcome2xx: the receiver answered 2xx in time (delivered).
	Outcome2xx = "2xx"
	// Outcome4xx: the receiver answered with a status that is neither 2xx
	// nor 5xx: a 4xx (410 Gone included, which disables the webhook), and
	// also a 3xx (a redirect is not followed) or a 1xx-only answer. All are
	// the receiver refusing the delivery as configured, which a retry will
	// not change until its owner acts; the dashboard's five outcomes stay
	// five.
	Outcome4xx = "4xx"
	// Outcome5xx: the receiver answered 5xx (or a status above 599).
	Outcome5xx = "5xx"
	// OutcomeTimeout: no status within the delivery's timeout (Timeout):
	// the receiver, or the way to it, was too slow, at any step
	// (resolving, connecting, TLS, waiting for the status line).
	OutcomeTimeout = "timeout"
	// OutcomeRefused: no status, and not for lack of time: the address
	// guard refused the address (a private one, the Runtime API), the name
	// did not resolve, the connection was refused or reset, TLS failed,
	// the receiver closed the connection without answering, or the URL
	// could not be used. Nothing reached a receiver's handler.
	OutcomeRefused = "refused"
)

// attemptOutcome returns the Outcome of an attempt that got r.
func attemptOutcome(r Result) string {
	switch {
	case r.Status >= http.StatusInternalServerError:
		return Outcome5xx
	case r.Status >= 200 && r.Status <= 299:
		return Outcome2xx
	case r.Status != 0:
		return Outcome4xx
	case timedOut(r.Err):
		return OutcomeTimeout
	}
	return OutcomeRefused
}

// timedOut reports whether err is a delivery that ran out of time.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// dueAge returns how long the earliest due delivery among due has been
// due at now, in seconds, and whether there is one: the jobs' Next,
// earliest first as Jobs.Due returns them, but each compared, so that an
// order of the shards' results is not relied on. Step jobs are not
// deliveries. With none, nothing is written: an idle dispatcher writes no
// metric, so its stack pays for no custom metric while idle, and its alarm
// reads the missing data as fine.
func dueAge(due []Job, now time.Time) (float64, bool) {
	var oldest time.Time
	for _, j := range due {
		if (hookKey{j.Owner, j.Webhook}).isStep() {
			continue
		}
		next, err := parseTime(j.Next)
		if err != nil {
			continue
		}
		if oldest.IsZero() || next.Before(oldest) {
			oldest = next
		}
	}
	if oldest.IsZero() {
		return 0, false
	}
	return max(now.Sub(oldest).Seconds(), 0), true
}

// countAttempt adds an attempt that got r to the run's Attempts.
func countAttempt(ctx context.Context, r Result) {
	metrics.Add(ctx, metrics.Attempts, 1, attemptOutcome(r))
}
