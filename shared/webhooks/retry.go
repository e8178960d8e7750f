package webhooks

import (
	"time"

	"stampduty/shared/stampduty"
)

// retryAfterFirst is when each retry is due, counted from the FIRST attempt
// (webhooks.md): attempt n+1 is due retryAfterFirst[n-1] after attempt 1.
var retryAfterFirst = [...]time.Duration{
	30 * time.Second,
	2 * time.Minute,
	10 * time.Minute,
	time.Hour,
	6 * time.Hour,
	24 * time.Hour,
}

// MaxAttempts is how many attempts the schedule makes for one event and one
// webhook: the first and six retries. After the last one it gives up.
const MaxAttempts = 1 + len(retryAfterFirst)

// NextAttempt returns when the attempt after attempt number attempt (1 for
// the first) is due, given when the first attempt was made; false when
// attempt was the last one (the delivery is given up). attempt 0 (none made
// yet) gives firstAt itself.
func NextAttempt(firstAt time.Time, attempt int) (time.Time, bool) {
	switch {
	case attempt <= 0:
		return firstAt, true
	case attempt >= MaxAttempts:
		return time.Time{}, false
	}
	return firstAt.Add(retryAfterFirst[attempt-1]), true
}

// Outcome is what an attempt leads to.
type Outcome int

// The outcomes of an attempt.
const (
	// Delivered: the receiver answered 2xx; nothing more to do.
	Delivered Outcome = iota + 1
	// Retry: the attempt failed and another is due (Attempt.NextAttemptAt).
	Retry
	// GiveUp: the attempt failed and it was the last one.
	GiveUp
	// Disable: the receiver answered 410 Gone; the webhook is disabled at
	// once and no retry is made.
	Disable
)

// String names the outcome, as the dispatcher's attempt lines and the
// tests' messages say it.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Retry:
		return "retry"
	case GiveUp:
		return "give_up"
	case Disable:
		return "disable"
	}
	return "unknown"
}

// Result is what one delivery attempt came to.
type Result struct {
	// Status is the receiver's HTTP status, 0 when there was none.
	Status int
	// Duration is how long the attempt took.
	Duration time.Duration
	// Read is how many bytes of the answer's body were read: all of it up
	// to MaxAnswerBytes, never more.
	Read int64
	// Err is nil when the receiver answered 2xx, else why the attempt
	// failed: the status answered, a timeout, a refused connection, a TLS
	// error, a refused address (a *BlockedError), a bad URL.
	Err error
	// Disabled is true when the receiver answered 410 Gone: the webhook is
	// to be disabled at once, with no retry.
	Disabled bool
}

// Attempt is the record of one delivery attempt, as the deliveries list
// shows it.
type Attempt struct {
	EventID string `json:"event_id"`
	Type    string `json:"type"`
	// Attempt counts the attempts of this event to this webhook, from 1.
	Attempt int `json:"attempt"`
	// Status is the receiver's HTTP status, 0 when it gave none (a timeout,
	// a refused connection, a TLS error, a refused address).
	Status int `json:"status"`
	// At is when the attempt started, in stampduty.TimeLayout.
	At         string `json:"at"`
	DurationMS int64  `json:"duration_ms"`
	// NextAttemptAt is when the next attempt is due, nil when none is
	// (delivered, given up, disabled).
	NextAttemptAt *string `json:"next_attempt_at"`
}

// Record classifies the result r of attempt number attempt of event ev,
// started at at (the first attempt was made at firstAt), and returns its
// record and outcome.
func Record(ev Event, attempt int, firstAt, at time.Time, r Result) (Attempt, Outcome) {
	rec := Attempt{EventID: ev.ID, Type: ev.Type, Attempt: attempt, Status: r.Status,
		At: stampduty.FormatTime(at), DurationMS: r.Duration.Milliseconds()}
	switch {
	case r.Disabled:
		return rec, Disable
	case r.Err == nil:
		return rec, Delivered
	}
	next, ok := NextAttempt(firstAt, attempt)
	if !ok {
		return rec, GiveUp
	}
	s := stampduty.FormatTime(next)
	rec.NextAttemptAt = &s
	return rec, Retry
}
