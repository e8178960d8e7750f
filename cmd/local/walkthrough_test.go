package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"stampduty/shared/testkit/functest"
)

// walkthrough is a run of the webhooks walk-through (walkthroughDoc).
type walkthrough struct {
	blocks []string // each block's code
	wants  []string // each block's expectation
	dir    string   // WORK: the receiver's folder
	out    functest.SyncBuffer
	err    error
	done   chan struct{}
}

// startWalkthrough runs the walk-through's blocks as one bash script
// against s, as a reader does in one shell, in the background: its retry
// wait overlaps the other subtests. The receiver gets a free port
// (HOOK_ADDR) and a folder of the test's (WORK); the script and whatever it started are killed when
// the test ends.
func startWalkthrough(t *testing.T, s *stack) *walkthrough {
	t.Helper()
	w := &walkthrough{dir: t.TempDir(), done: make(chan struct{})}
	for _, ex := range readmeExamples(doc(t, walkthroughDoc)) {
		w.wants = append(w.wants, ex[0])
		w.blocks = append(w.blocks, ex[1])
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().String()
	l.Close()
	// As written, with the examples' variables set: API and DB to the
	// stack, WORK to the test's folder, HOOK_ADDR to a free port.
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(w.blocks, "\n"))
	cmd.Dir = moduleRoot(t)
	cmd.Env = append(exampleEnv(s, w.dir), "HOOK_ADDR="+port)
	cmd.Stdout, cmd.Stderr = &w.out, &w.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		w.err = cmd.Wait()
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the receiver too, if the script failed before its kill
		<-w.done
	})
	return w
}

// check waits for the walk-through (at most 4 minutes) and checks what it
// showed and what its receiver got.
func (w *walkthrough) check(t *testing.T) {
	if len(w.blocks) < 5 {
		t.Fatalf("the walk-through (%s) has %d blocks that say # expect:, want at least 5", walkthroughDoc, len(w.blocks))
	}
	select {
	case <-w.done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the walk-through did not end in 4 minutes:\n%s", w.out.String())
	}
	out := w.out.String()
	if w.err != nil {
		t.Fatalf("the walk-through failed: %v\n%s", w.err, out)
	}
	for i, want := range w.wants {
		if !strings.Contains(out, want) {
			t.Errorf("the walk-through's output lacks %s (block %d's expectation):\n%s", want, i+1, out)
		}
	}

	t.Run("TheReceiverGotEachEventInOrderSignedWithTheSameIdOnEveryAttempt", func(t *testing.T) {
		lines := deliveryLines(t, filepath.Join(w.dir, "webhooks.log"))
		if len(lines) != 4 {
			t.Fatalf("the receiver got %d deliveries, want 4 (created, its retry, the status change, the redelivery):\n%s", len(lines), out)
		}
		created, retry, moved := lines[0], lines[1], lines[2]
		for i, l := range lines {
			if l["signature"] != "ok" || l["order"] != created["order"] || !strings.HasPrefix(l["id"], "evt_") {
				t.Errorf("delivery %d: %v, want a verified signature, about order %s", i+1, l, created["order"])
			}
		}
		want := []map[string]string{
			{"type": "order.created", "answer": "500", "seen": "1", "previous": "-", "status": "-"},
			{"type": "order.created", "answer": "204", "seen": "2", "id": created["id"]},
			{"type": "order.status_changed", "answer": "204", "seen": "1", "previous": "Pending", "status": "Created"},
			{"type": "order.created", "answer": "204", "seen": "3", "id": created["id"]},
		}
		for i, fields := range want {
			for k, v := range fields {
				if lines[i][k] != v {
					t.Errorf("delivery %d: %s=%s, want %s (%v)", i+1, k, lines[i][k], v, lines[i])
				}
			}
		}
		if moved["id"] == created["id"] {
			t.Errorf("the status change has the creation's event id %s", moved["id"])
		}
		first, _ := time.Parse(time.RFC3339Nano, created["at"])
		second, _ := time.Parse(time.RFC3339Nano, retry["at"])
		if d := second.Sub(first); d < 28*time.Second || d > 75*time.Second {
			t.Errorf("the retry came %v after the first attempt, want about 30 s", d)
		}
	})

	t.Run("TheDeliveriesShowTheFailedAttemptAndItsRetry30sLater", func(t *testing.T) {
		var list struct {
			Data []struct {
				EventID     string  `json:"event_id"`
				Attempt     int     `json:"attempt"`
				Status      int     `json:"status"`
				At          string  `json:"at"`
				NextAttempt *string `json:"next_attempt_at"`
			} `json:"data"`
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, `{"data":[{"event_id"`) {
				if err := json.Unmarshal([]byte(line), &list); err != nil {
					t.Fatalf("deliveries %s: %v", line, err)
				}
				break
			}
		}
		if len(list.Data) == 0 {
			t.Fatalf("the walk-through printed no deliveries:\n%s", out)
		}
		a := list.Data[len(list.Data)-1] // the oldest
		if a.Attempt != 1 || a.Status != 500 || a.NextAttempt == nil {
			t.Fatalf("the oldest attempt is %+v, want attempt 1, status 500, with a next attempt", a)
		}
		at, err1 := time.Parse(time.RFC3339Nano, a.At)
		next, err2 := time.Parse(time.RFC3339Nano, *a.NextAttempt)
		if err1 != nil || err2 != nil || next.Sub(at) < 29*time.Second || next.Sub(at) > 31*time.Second {
			t.Errorf("attempt 1 at %s, next at %s: want 30 s later (%v %v)", a.At, *a.NextAttempt, err1, err2)
		}
	})

	t.Run("OperatorsSeeTheWebhookFailing", func(t *testing.T) {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 7 && f[0] == "webhook-demo" && f[2] == "true" && strings.Contains(line, " 500 at ") {
				return
			}
		}
		t.Errorf("stampctl webhooks failing showed no row of webhook-demo's webhook, enabled, its last attempt 500:\n%s", out)
	})
	t.Run("TheSignaturesVerifyWithTheREADMEsCodeAndAForgeryDoesNot", func(t *testing.T) {
		for _, want := range []string{"delivery 1: signature verified", "delivery 2: signature verified", "delivery 3: signature verified",
			"delivery 1 with one word changed: signature does not match"} {
			if !strings.Contains(out, want) {
				t.Errorf("the walk-through's output lacks %q", want)
			}
		}
	})

	t.Run("TheRedeliveryWasAccepted", func(t *testing.T) {
		if !strings.Contains(out, `"webhooks":[`) || !strings.Contains(out, "} 202\n") {
			t.Errorf("the redelivery did not answer 202 with its webhooks:\n%s", out)
		}
	})
}

// deliveryLines reads the receiver's log: one map of key=value fields per line.
func deliveryLines(t *testing.T, file string) []map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("the receiver's log: %v", err)
	}
	defer f.Close()
	var lines []map[string]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := map[string]string{}
		for _, kv := range strings.Fields(sc.Text()) {
			k, v, _ := strings.Cut(kv, "=")
			fields[k] = v
		}
		lines = append(lines, fields)
	}
	return lines
}

// checkExamples runs against s the examples of every document that has
// some (README.md first), but the walk-through's, which runs as one script
// (startWalkthrough).
func checkExamples(t *testing.T, s *stack) {
	type example struct{ doc, want, code string }
	var examples []example
	for _, d := range exampleDocs(t) {
		if d == walkthroughDoc {
			continue
		}
		for _, ex := range readmeExamples(doc(t, d)) {
			examples = append(examples, example{d, ex[0], ex[1]})
		}
	}
	if len(examples) < 8 {
		t.Fatalf("found %d examples with an expectation, want at least 8", len(examples))
	}
	t.Logf("running %d examples of %v", len(examples), exampleDocs(t))
	root := moduleRoot(t)
	env := exampleEnv(s, t.TempDir())
	for _, ex := range examples {
		// As a reader runs them: from the repository's top, with API, DB
		// and WORK set as the README says, to this stack (on ports
		// that are not the defaults) and a folder of the test's. The
		// examples are run as written: nothing in them is replaced.
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", ex.code)
		cmd.Dir, cmd.Env = root, env
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("an example of %s failed: %v\n%s\n%s", ex.doc, err, ex.code, got)
			continue
		}
		if !strings.Contains(string(got), ex.want) {
			t.Errorf("an example of %s answered\n%s\nwant it to contain %s\n(example: %s)", ex.doc, got, ex.want, ex.code)
		}
	}
}

// exampleEnv is the environment the examples run in: this
// process's, with API, DB and WORK set, as the README's API section has a
// reader set them, to the stack s and the folder work, and COGNITO and
// CONSOLE_CLIENT as the stack prints them for api.md's console examples.
func exampleEnv(s *stack, work string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "API", "DB", "WORK", "HOOK_ADDR", "DYNAMODB_ENDPOINT", "STAMPDUTY_API_URL", "COGNITO", "CONSOLE_CLIENT":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "API="+s.URL, "DB="+s.Endpoint, "WORK="+work, "COGNITO="+s.Cognito.Endpoint, "CONSOLE_CLIENT="+s.Cognito.ClientID)
}
