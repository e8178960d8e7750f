package storetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/testkit/samtemplate"
)

// childEnv makes this test binary run its tests through Main, as a
// package with engines does (TestMainWithoutEngines runs it so).
const childEnv = "STORETEST_MAIN_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		Main(m)
	}
	os.Exit(m.Run())
}

// TestMainWithoutEngines runs this package's tests through Main from a
// module root where no engine is installed (a copy of template.yaml in a
// temporary folder), as `go test ./...` on a fresh clone does: without CI
// it runs none of them, with one line naming `make test` and both
// engines, and passes; with CI=true it fails, saying CI does not skip.
func TestMainWithoutEngines(t *testing.T) {
	root, err := samtemplate.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	if err := os.WriteFile(filepath.Join(fresh, "template.yaml"), tmpl, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, ci string) (string, error) {
		t.Helper()
		// -test.run=. asks for every test: Main must run none all the same.
		cmd := exec.Command(os.Args[0], "-test.run=.", "-test.v")
		cmd.Dir = fresh
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			for _, name := range []string{"CI=", "DYNAMODB_ENDPOINT=", "S3_ENDPOINT="} {
				if strings.HasPrefix(kv, name) {
					return true
				}
			}
			return false
		})
		cmd.Env = append(cmd.Env, childEnv+"=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	const line = "dynalite and the local S3 server (versitygw) are not installed: run `make test` (or `make dynalite versitygw`); skipped (with CI=true this fails)\n"
	for _, ci := range []string{"", "false"} {
		t.Run("SkippedOutsideCI/CI="+ci, func(t *testing.T) {
			out, err := run(t, ci)
			if err != nil {
				t.Fatalf("%v, want it to pass:\n%s", err, out)
			}
			if !strings.HasPrefix(out, line) {
				t.Errorf("output starts %q, want the one line %q", out, line)
			}
			if !strings.Contains(out, "testing: warning: no tests to run") || strings.Contains(out, "=== RUN") {
				t.Errorf("tests ran, want none:\n%s", out)
			}
		})
	}
	for _, ci := range []string{"true", "1"} {
		t.Run("FailsInCI/CI="+ci, func(t *testing.T) {
			out, err := run(t, ci)
			if err == nil {
				t.Fatalf("passed, want it to fail in CI:\n%s", out)
			}
			if !strings.Contains(out, "dynalite is not installed") || !strings.Contains(out, "CI=true") || strings.Contains(out, "skipped") {
				t.Errorf("output %q, want a failure naming dynalite and CI=true", out)
			}
			if strings.Contains(out, "=== RUN") {
				t.Errorf("tests ran, want none:\n%s", out)
			}
		})
	}
}
