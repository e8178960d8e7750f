// Package browser drives a real headless Chromium for the console's browser
// tests, as a user would: it opens a page at a phone's or a desktop's width,
// finds each control by its role and accessible name (the textbox "Email",
// the button "Sign in", the heading "Queue"), fills and presses it with the
// keyboard, checks the page with axe-core against WCAG 2.1 A and AA, writes
// a full-page PNG screenshot to a folder, and records the page's console
// errors and Content-Security-Policy violations so that a test can assert
// there are none.
//
// Chromium is Debian's (`make chromium` installs it as root; $CHROMIUM names
// another binary) and axe-core is npm's, pinned in axe/ (`make axe`); both
// are prerequisites of `make test`. A test calls Start: without Chromium it
// is skipped with a message saying what to run, except under CI=true, where
// the missing browser fails it, so that CI never passes on skipped browser
// tests. The driver is github.com/chromedp/chromedp, which speaks the
// DevTools protocol to Chromium over a pipe and needs no separate driver
// binary (no chromedriver, no Node.js at run time).
//
// This is tooling: no Lambda function links it (TestNotLinkedIntoFunctions).
package browser

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/samtemplate"
)

// DefaultChromium is where Debian's chromium package installs the browser,
// and so where `make chromium` puts it.
const DefaultChromium = "/usr/bin/chromium"

// AxePath is where `make axe` installs axe-core's browser build, relative to
// the module root.
const AxePath = "shared/testkit/browser/axe/node_modules/axe-core/axe.min.js"

// Chromium returns the browser binary the tests run: $CHROMIUM when set,
// else DefaultChromium.
func Chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return DefaultChromium
}

// Flags are the command-line flags Chromium is started with, on top of
// chromedp's defaults (which already turn off first-run, background
// networking, sync, extensions and the like). They are the ones this
// project's machines need: headless; no sandbox, since CI runs as root,
// where Chromium's sandbox refuses to start; no GPU; and nothing that
// reaches out to the internet (QUIC, component updates, background
// networking, sync), which this closed network refuses, each refusal a
// logged error and a slower start. chromedp gives each browser a fresh
// temporary --user-data-dir and removes it when the browser closes.
var Flags = []chromedp.ExecAllocatorOption{
	chromedp.Headless,
	chromedp.NoSandbox,
	chromedp.DisableGPU,
	chromedp.NoFirstRun,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
}

// Browser is one headless Chromium, shared by the pages a test opens; each
// page is a tab in a browser context of its own (its own cookies and
// storage), so pages do not see each other's sign-ins.
type Browser struct {
	ctx    context.Context // the browser's chromedp context
	cancel context.CancelFunc
	root   string // the module root: where axe-core and the screenshots are
	axe    string // axe.min.js, injected into each page that is checked
}

// Start starts a headless Chromium for t and closes it when t ends. Without
// Chromium it skips t, saying what to run, unless CI is true, where it
// fails t: CI must run the browser tests, and `make test` installs
// Chromium before them. axe-core missing (`make axe`) skips or fails t by
// the same rule as a missing engine (localserver.SkipLine).
func Start(t testing.TB) *Browser {
	t.Helper()
	exe := Chromium()
	if _, err := os.Stat(exe); errors.Is(err, fs.ErrNotExist) {
		if localserver.InCI() {
			t.Fatalf("browser: Chromium is not installed at %s and CI=true: the browser tests must run in CI; `make test` installs it first (`make chromium`, as root)", exe)
		}
		t.Skipf("browser: Chromium is not installed at %s: run `make chromium` (as root: apt-get install chromium), or set CHROMIUM to a Chromium binary; with CI=true this fails", exe)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	b, err := New(context.Background(), wd, exe)
	localserver.Require(t, err) // without axe-core, skipped but in CI
	t.Cleanup(b.Close)
	return b
}

// New starts the Chromium at exe, headless with Flags, for the module whose
// root is at or above dir, and returns once it answers. Close stops it.
func New(ctx context.Context, dir, exe string) (*Browser, error) {
	root, err := samtemplate.Root(dir)
	if err != nil {
		return nil, fmt.Errorf("finding the module root: %w", err)
	}
	path, err := localserver.Find(root, AxePath, "axe-core", "axe")
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	axe, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("browser: read axe-core: %w", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], Flags...)
	opts = append(opts, chromedp.ExecPath(exe))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	b := &Browser{
		ctx:    bctx,
		cancel: func() { cancelBrowser(); cancelAlloc() },
		root:   root,
		axe:    string(axe),
	}
	// The first Do starts the browser, bound to bctx (no timeout: a
	// timeout here would close the browser when it ended), and opens a
	// first blank tab; a start that hangs is bounded by startTimeout.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err = <-started:
	case <-time.After(startTimeout):
		err = fmt.Errorf("no answer after %s", startTimeout)
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	return b, nil
}

// startTimeout bounds Chromium's start: about 0.5 s on two shared cores.
const startTimeout = 60 * time.Second

// Close stops the browser and removes its profile directory.
func (b *Browser) Close() {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	_ = chromedp.Cancel(ctx) // closes gracefully; cancel below kills what is left
	b.cancel()
}
