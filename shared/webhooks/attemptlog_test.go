package webhooks_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"stampduty/shared/testkit/syncbuf"
)

// TestAttemptLines: each attempt recorded writes one line to the log with
// what a query of a webhook's delivery history looks for: the webhook, the
// event, its order and caller, the event's type, the attempt's number,
// status (0 when none), outcome and duration; never the receiver's
// address or the webhook's secret.
func TestAttemptLines(t *testing.T) {
	h := newHarness(t)
	var log syncbuf.Buffer
	h.d.Log = &log
	rc := newReceiver(t, 500)
	h.hook("acme", "hook1", rc.URL, true, created)
	e := h.change("acme", "ord1", created)
	h.pass()
	h.clock.advance(30 * time.Second)
	h.pass()
	line := regexp.MustCompile(`(?m)^webhooks: attempt webhook=(\S+) event=(\S+) order=(\S+) caller=(\S+) type=(\S+) n=(\d+) status=(\d+) outcome=(\S+) ms=\d+$`)
	var got []string
	for _, m := range line.FindAllStringSubmatch(log.String(), -1) {
		got = append(got, strings.Join(m[1:], " "))
	}
	want := []string{
		fmt.Sprintf("hook1 %s ord1 acme %s 1 500 retry", e, created),
		fmt.Sprintf("hook1 %s ord1 acme %s 2 200 delivered", e, created),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("attempt lines:\n%s\nwant:\n%s\nlog:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), log.String())
	}
	for _, secret := range []string{rc.URL, strings.TrimPrefix(rc.URL, "http://"), "secret"} {
		if strings.Contains(log.String(), secret) {
			t.Errorf("the log holds %q:\n%s", secret, log.String())
		}
	}
}
