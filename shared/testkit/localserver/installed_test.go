package localserver

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkipLine: a test whose engines are missing is skipped with one
// line naming `make test` and what to install, unless CI is true, where
// it fails; any other error always fails.
func TestSkipLine(t *testing.T) {
	db := &NotInstalledError{Name: "dynalite", Path: "cmd/local/dynalite/cli.js", Target: "dynalite"}
	s3 := &NotInstalledError{Name: "the S3 server", Path: ".build/tools/versitygw", Target: "versitygw"}
	other := errors.New("dynalite exited (exit status 1): boom")
	for _, tc := range []struct {
		name string
		ci   string
		err  error
		want string // the line, "" when the test must fail
	}{
		{"OneMissingSkips", "", db, "dynalite is not installed: run `make test` (or `make dynalite`); skipped (with CI=true this fails)"},
		{"CIFalseSkips", "false", db, "dynalite is not installed: run `make test` (or `make dynalite`); skipped (with CI=true this fails)"},
		{"WrappedSkips", "", fmt.Errorf("start: %w", db), "dynalite is not installed: run `make test` (or `make dynalite`); skipped (with CI=true this fails)"},
		{"TwoMissingOneLine", "", errors.Join(db, nil, s3), "dynalite and the S3 server are not installed: run `make test` (or `make dynalite versitygw`); skipped (with CI=true this fails)"},
		{"MissingInCIFails", "true", db, ""},
		{"MissingInCI1Fails", "1", errors.Join(db, s3), ""},
		{"OtherErrorFails", "", other, ""},
		{"MissingAndOtherFails", "", errors.Join(db, other), ""},
		{"NoError", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			line, skip := SkipLine(tc.err)
			if got, want := skip, tc.want != ""; got != want {
				t.Fatalf("skip = %v, want %v (line %q)", got, want, line)
			}
			if line != tc.want {
				t.Errorf("line\n %q, want\n %q", line, tc.want)
			}
		})
	}
}

// recorder is a TB that records how Require ended the test.
type recorder struct{ skipped, failed string }

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

// TestRequireMissingEngine points an engine's path at a missing location:
// Find's error skips the test outside CI and fails it with CI=true.
func TestRequireMissingEngine(t *testing.T) {
	_, err := Find(t.TempDir(), filepath.Join("node_modules", "dynalite", "cli.js"), "dynalite", "dynalite")
	var missing *NotInstalledError
	if !errors.As(err, &missing) {
		t.Fatalf("Find of a missing file: %v, want a NotInstalledError", err)
	}
	t.Run("SkippedOutsideCI", func(t *testing.T) {
		t.Setenv("CI", "")
		var r recorder
		Require(&r, err)
		if !strings.Contains(r.skipped, "make test") || r.failed != "" {
			t.Errorf("skipped %q, failed %q; want a skip naming make test", r.skipped, r.failed)
		}
	})
	t.Run("FailsInCI", func(t *testing.T) {
		t.Setenv("CI", "true")
		var r recorder
		Require(&r, err)
		if r.skipped != "" || !strings.Contains(r.failed, "dynalite is not installed") || !strings.Contains(r.failed, "CI=true") {
			t.Errorf("skipped %q, failed %q; want a failure naming dynalite and CI=true", r.skipped, r.failed)
		}
	})
	t.Run("InstalledPasses", func(t *testing.T) {
		dir := t.TempDir()
		path, err := Find(dir, ".", "dynalite", "dynalite")
		var r recorder
		Require(&r, err)
		if path != dir || r.skipped != "" || r.failed != "" {
			t.Errorf("Find %q, %v; skipped %q, failed %q; want the path and neither", path, err, r.skipped, r.failed)
		}
	})
}
