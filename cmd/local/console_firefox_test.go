package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localserver"
)

// DefaultFirefox is where Debian's firefox-esr package installs Firefox,
// and so where `make firefox` puts it; $FIREFOX names another binary.
const DefaultFirefox = "/usr/bin/firefox-esr"

// firefoxTimeout bounds the whole Firefox run: Firefox's start (about 3 s
// here, at most 60 s) and two screens' flows (each step at most 10 s).
const firefoxTimeout = 4 * time.Minute

// checkConsoleFirefox drives the console in a real headless Firefox, as
// console.md asks ("works in current Chromium and Firefox at 1280 px wide
// and on a 390 px wide phone"): cmd/local/firefox's node --test suite
// (puppeteer-core over WebDriver BiDi, installed by `make puppeteer`) signs
// an operator in with the keyboard, opens a new order by its documentId,
// has a bad Unique doc ref refused beside the field, moves the paper to
// Created and signs out, at 1280x800 and at 390x844, with axe-core, no
// console error and no CSP violation on every page, and a screenshot of
// each under the screenshots folder (TestLocalStack/Console/Firefox/).
// Without Firefox it is skipped, saying what to run, except under CI=true,
// where it fails, as the Chromium tests do.
func checkConsoleFirefox(t *testing.T, s *stack) {
	exe := DefaultFirefox
	if p := os.Getenv("FIREFOX"); p != "" {
		exe = p
	}
	if _, err := os.Stat(exe); errors.Is(err, fs.ErrNotExist) {
		if localserver.InCI() {
			t.Fatalf("Firefox is not installed at %s and CI=true: the Firefox test must run in CI; `make test` installs it first (`make firefox`, as root)", exe)
		}
		t.Skipf("Firefox is not installed at %s: run `make firefox` (as root: apt-get install firefox-esr), or set FIREFOX to a Firefox binary; with CI=true this fails", exe)
	}
	root := moduleRoot(t)
	dir := filepath.Join(root, "cmd", "local", "firefox")
	_, err := localserver.Find(root, "cmd/local/firefox/node_modules/puppeteer-core/package.json", "puppeteer-core", "puppeteer")
	localserver.Require(t, err) // skipped without it, but in CI
	orders := createOrder(t, s, 1) + "," + createOrder(t, s, 1)
	operator := s.Cognito.Staff[1]

	ctx, cancel := context.WithTimeout(context.Background(), firefoxTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "--test-reporter=spec", "--test-timeout=120000", "console.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"STAMPDUTY_API_URL="+s.URL,
		"STAMPDUTY_EMAIL="+operator.Email,
		"STAMPDUTY_PASSWORD="+operator.Password,
		"STAMPDUTY_ORDERS="+orders,
		"FIREFOX="+exe,
		"AXE="+filepath.Join(root, browser.AxePath),
		"SCREENSHOTS_DIR="+browser.ScreenshotsFolder(root, t.Name()),
		"NO_COLOR=1")
	cmd.WaitDelay = 10 * time.Second // Firefox's children keep the output open after a kill
	start := time.Now()
	got, err := cmd.CombinedOutput()
	t.Logf("node --test console.test.js (Firefox) took %s:\n%s", time.Since(start).Round(100*time.Millisecond), got)
	if ctx.Err() != nil {
		t.Fatalf("node --test console.test.js: no end after %s", firefoxTimeout)
	}
	if err != nil {
		t.Fatalf("node --test console.test.js: %v", err)
	}
	// The spec reporter's summary: both screens ran and none failed.
	tests := 0
	if m := regexp.MustCompile(`(?m)^ℹ tests (\d+)$`).FindSubmatch(got); m != nil {
		tests, _ = strconv.Atoi(string(m[1]))
	}
	if tests != 2 || !regexp.MustCompile(`(?m)^ℹ fail 0$`).Match(got) {
		t.Errorf("node --test console.test.js: want 2 tests (desktop, phone) and none failing")
	}
}
