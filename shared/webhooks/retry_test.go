package webhooks

import (
	"errors"
	"stampduty/shared/stampduty"
	"testing"
	"time"
)

func TestNextAttempt(t *testing.T) {
	first := time.Date(2026, 11, 21, 4, 9, 0, 0, time.UTC)
	due := []struct {
		attempt int
		after   time.Duration
	}{
		{0, 0},
		{1, 30 * time.Second},
		{2, 2 * time.Minute},
		{3, 10 * time.Minute},
		{4, time.Hour},
		{5, 6 * time.Hour},
		{6, 24 * time.Hour},
	}
	for _, tc := range due {
		got, ok := NextAttempt(first, tc.attempt)
		if !ok {
			t.Errorf("NextAttempt(first, %d) gives up, want a retry %s after the first", tc.attempt, tc.after)
			continue
		}
		if got, want := got.Sub(first), tc.after; got != want {
			t.Errorf("NextAttempt(first, %d) is %s after the first, want %s", tc.attempt, got, want)
		}
	}
	t.Run("GivesUpAfterTheSeventh", func(t *testing.T) {
		if got, want := MaxAttempts, 7; got != want {
			t.Errorf("MaxAttempts = %d, want %d", got, want)
		}
		for _, attempt := range []int{7, 8, 100} {
			if next, ok := NextAttempt(first, attempt); ok {
				t.Errorf("NextAttempt(first, %d) = %s, want a give-up", attempt, next)
			}
		}
	})
	t.Run("CountedFromTheFirstAttempt", func(t *testing.T) {
		a, _ := NextAttempt(first, 3)
		b, _ := NextAttempt(first.Add(time.Hour), 3)
		if got, want := b.Sub(a), time.Hour; got != want {
			t.Errorf("moving the first attempt by 1h moves the fourth by %s, want %s", got, want)
		}
	})
}

func TestRecord(t *testing.T) {
	first := time.Date(2026, 11, 21, 4, 9, 0, 0, time.UTC)
	ev := Event{ID: "evt_a", Type: stampduty.EventOrderCreated}
	failed := errors.New("receiver answered 500")
	cases := []struct {
		name    string
		attempt int
		r       Result
		want    Outcome
		next    string // "" for null
	}{
		{"Delivered", 1, Result{Status: 204, Duration: 12 * time.Millisecond}, Delivered, ""},
		{"FailedFirstRetriesIn30s", 1, Result{Status: 500, Err: failed}, Retry, "2026-11-21T04:09:30.000Z"},
		{"FailedSixthRetriesAfter24h", 6, Result{Err: failed}, Retry, "2026-11-22T04:09:00.000Z"},
		{"FailedSeventhGivesUp", 7, Result{Status: 503, Err: failed}, GiveUp, ""},
		{"GoneDisables", 2, Result{Status: 410, Err: failed, Disabled: true}, Disable, ""},
		{"GoneOnTheLastDisables", 7, Result{Status: 410, Err: failed, Disabled: true}, Disable, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := first.Add(time.Minute)
			rec, got := Record(ev, tc.attempt, first, at, tc.r)
			if got != tc.want {
				t.Errorf("outcome = %s, want %s", got, tc.want)
			}
			var next string
			if rec.NextAttemptAt != nil {
				next = *rec.NextAttemptAt
			}
			if next != tc.next {
				t.Errorf("next_attempt_at = %q, want %q", next, tc.next)
			}
			want := Attempt{EventID: "evt_a", Type: stampduty.EventOrderCreated, Attempt: tc.attempt, Status: tc.r.Status,
				At: "2026-11-21T04:10:00.000Z", DurationMS: tc.r.Duration.Milliseconds(), NextAttemptAt: rec.NextAttemptAt}
			if rec != want {
				t.Errorf("record = %+v, want %+v", rec, want)
			}
		})
	}
	t.Run("OutcomeNames", func(t *testing.T) {
		for o, want := range map[Outcome]string{Delivered: "delivered", Retry: "retry", GiveUp: "give_up", Disable: "disable", 0: "unknown"} {
			if got := o.String(); got != want {
				t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
			}
		}
	})
}
