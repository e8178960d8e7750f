package localserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// NotInstalledError is a local engine that is not where the tests and the
// local stack look for it: `make test` installs every engine before the
// tests, and `make <Target>` this one.
type NotInstalledError struct {
	Name   string // the engine, as people call it: "dynalite"
	Path   string // where it would be, relative to the module root
	Target string // the make target that installs it: "dynalite"
}

// Error says what is missing and what to run.
func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("%s is not installed (%s): run `make test` (or `make %s`)", e.Name, e.Path, e.Target)
}

// Find returns the file at path under root when it is there, and
// otherwise a *NotInstalledError naming the engine and its make target.
func Find(root, path, name, target string) (string, error) {
	p := filepath.Join(root, path)
	if _, err := os.Stat(p); err != nil {
		return "", &NotInstalledError{Name: name, Path: path, Target: target}
	}
	return p, nil
}

// InCI reports whether the run is CI's: CI set to true (or 1), as CI
// services set it.
func InCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// SkipLine is the one rule for tests whose engines are missing, used by
// every test that starts one (storetest.Main, the tests that start an
// engine of their own): it returns the one line such a test is skipped
// with, and true, when all err says is that engines are not installed
// (NotInstalledErrors, several joined by errors.Join) and the run is not
// CI's. Otherwise it returns false and the test fails on err: in CI
// (CI=true) a missing engine fails, so CI never passes on skipped tests,
// and so does any other error.
func SkipLine(err error) (string, bool) {
	missing, ok := notInstalled(err)
	if !ok || InCI() {
		return "", false
	}
	var names, targets []string
	for _, e := range missing {
		names, targets = append(names, e.Name), append(targets, e.Target)
	}
	verb := "is"
	if len(names) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("%s %s not installed: run `make test` (or `make %s`); skipped (with CI=true this fails)",
		strings.Join(names, " and "), verb, strings.Join(targets, " ")), true
}

// notInstalled returns the NotInstalledErrors err holds, and whether err
// holds nothing else.
func notInstalled(err error) ([]*NotInstalledError, bool) {
	var e *NotInstalledError
	switch u := err.(type) {
	case nil:
		return nil, false
	case interface{ Unwrap() []error }:
		var all []*NotInstalledError
		for _, err := range u.Unwrap() {
			es, ok := notInstalled(err)
			if !ok {
				return nil, false
			}
			all = append(all, es...)
		}
		return all, len(all) > 0
	default:
		if errors.As(err, &e) {
			return []*NotInstalledError{e}, true
		}
	}
	return nil, false
}

// TB is what Require needs of a test (testing.TB).
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// Require ends t when err, from starting or finding an engine, is not nil:
// skipped with SkipLine's line when the rule allows, failed otherwise (in
// CI, with a line that says CI=true does not skip).
func Require(t TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if line, skip := SkipLine(err); skip {
		t.Skip(line)
		return
	}
	t.Fatal(FailLine(err))
}

// FailLine is err as a test that needs the engines fails with it: with
// CI=true, a missing engine says that CI does not skip.
func FailLine(err error) string {
	if _, missing := notInstalled(err); missing && InCI() {
		return fmt.Sprintf("%v (CI=true: a test whose engine is missing fails, never skips)", err)
	}
	return err.Error()
}
