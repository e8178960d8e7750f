package function_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"stampduty/shared/function"
)

// records decodes the JSON lines of out.
func records(t *testing.T, out *bytes.Buffer) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON record: %q (%v)", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestNewLogger: a function logs JSON records at the level Lambda's
// logging configuration hands a custom runtime (AWS_LAMBDA_LOG_LEVEL), INFO
// when it is unset or unknown.
func TestNewLogger(t *testing.T) {
	for _, tc := range []struct {
		level string
		want  []string // the messages written of debug, info, warn, error
	}{
		{"", []string{"info", "warn", "error"}},
		{"TRACE", []string{"debug", "info", "warn", "error"}},
		{"DEBUG", []string{"debug", "info", "warn", "error"}},
		{"INFO", []string{"info", "warn", "error"}},
		{"WARN", []string{"warn", "error"}},
		{"ERROR", []string{"error"}},
		{"FATAL", []string{"error"}},
		{"LOUD", []string{"info", "warn", "error"}},
	} {
		t.Run("Level"+tc.level, func(t *testing.T) {
			var out bytes.Buffer
			l := function.NewLogger(func(k string) string { return map[string]string{function.LogLevelVar: tc.level}[k] }, &out)
			l.Debug("debug")
			l.Info("info")
			l.Warn("warn")
			l.Error("error")
			var got []string
			for _, r := range records(t, &out) {
				got = append(got, fmt.Sprint(r["msg"]))
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("logged %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLines: each line written, in whatever pieces, is one JSON record with
// the line as its message (less the package's "source: " prefix) and the
// source; a line without its newline waits for it.
func TestLines(t *testing.T) {
	var out bytes.Buffer
	w := function.Lines(function.NewLogger(func(string) string { return "" }, &out), slog.LevelInfo, "webhooks")
	fmt.Fprintf(w, "webhooks: polling as poller %d of %d\n", 0, 1)
	fmt.Fprint(w, "webhooks: relay order o1 of \"acme\": ")
	if n := len(records(t, &out)); n != 1 {
		t.Fatalf("%d records before the line ended, want 1", n)
	}
	fmt.Fprint(w, "throttled\nno prefix\n")
	recs := records(t, &out)
	want := []string{"polling as poller 0 of 1", `relay order o1 of "acme": throttled`, "no prefix"}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %v", len(recs), len(want), recs)
	}
	for i, r := range recs {
		if r["msg"] != want[i] || r["source"] != "webhooks" || r["level"] != "INFO" {
			t.Errorf("record %d = %v, want msg %q, source webhooks, level INFO", i, r, want[i])
		}
	}
}
