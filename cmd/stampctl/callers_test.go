package main

import (
	"strings"
	"testing"
)

// TestCallersCommands: stampctl creates a caller with no token, lists it
// with its tokens and orders, and issues it a token.
func TestCallersCommands(t *testing.T) {
	h := newHarness(t)
	by := map[string]string{"STAMPDUTY_BY": "asha@example.com"}
	t.Run("a created caller is listed with no token and no order", func(t *testing.T) {
		h.ok(t, by, "callers", "create", "acme")
		ls := lines(h.ok(t, by, "callers", "list").stdout)
		if len(ls) != 2 || !strings.HasPrefix(ls[1], "acme") || !strings.Contains(ls[1], "asha@example.com") || !strings.HasSuffix(strings.Join(strings.Fields(ls[1]), " "), " 0 0 0") {
			t.Errorf("list:\n%s", strings.Join(ls, "\n"))
		}
	})
	t.Run("a name is taken once", func(t *testing.T) {
		if r := h.run(t, "", by, "callers", "create", "acme"); r.code != 1 || !strings.Contains(r.stderr, "exists already") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("its token is counted", func(t *testing.T) {
		h.ok(t, by, "token", "create", "--owner", "acme")
		ls := lines(h.ok(t, by, "callers", "list").stdout)
		if len(ls) != 2 || !strings.HasSuffix(strings.Join(strings.Fields(ls[1]), " "), " 1 0 0") {
			t.Errorf("list:\n%s", strings.Join(ls, "\n"))
		}
	})
}
