package browser

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Viewport is the size of the screen a page is shown on.
type Viewport struct {
	Name          string // in screenshot file names: "phone", "desktop"
	Width, Height int64  // CSS pixels
	Mobile        bool   // a phone: mobile layout rules and touch input
}

// The two screens the console must work on (console.md: "Works in current
// Chromium and Firefox at 1280 px wide and on a 390 px wide phone"). Both
// render at one device pixel per CSS pixel: the layout is the same as at a
// phone's real density of 3, and its screenshots are 9 times smaller.
var (
	Phone   = Viewport{Name: "phone", Width: 390, Height: 844, Mobile: true}
	Desktop = Viewport{Name: "desktop", Width: 1280, Height: 800}
)

// DefaultTimeout is how long a Page waits for a control to appear (or go),
// for a navigation, and for axe-core, before it fails the test.
const DefaultTimeout = 10 * time.Second

// Page is one tab of a Browser, bound to a test: its methods fail the test,
// saying what the page had instead, when a control cannot be found or an
// action fails. It records the page's console errors and CSP violations
// from its first navigation on.
type Page struct {
	t        testing.TB
	b        *Browser
	ctx      context.Context // the tab's chromedp context
	viewport Viewport
	scope    []Control // Within's chain of containers, outermost first

	// Timeout bounds each wait: DefaultTimeout unless the test changes it.
	Timeout time.Duration

	rec *recorder
	nav *navigations
}

// navigations follows the main frame's navigations in the order Chromium
// sent the events (chromedp.Listen), so that an action can tell whether it
// started one and wait until it has settled: a navigation is requested
// (Page.frameRequestedNavigation: a form's submit, a link, a script's
// location change; not a same-document one, such as a #fragment) and
// settles when the frame stops loading (Page.frameStoppedLoading), after
// the new page's load event or when the navigation was cancelled (a 204
// answer, a download).
type navigations struct {
	mu                 sync.Mutex
	requested, settled int           // settled is requested as it was when the frame last stopped loading
	changed            chan struct{} // closed and replaced at each change
}

func (n *navigations) listen(mainFrame cdp.FrameID) func(ev any) {
	return func(ev any) {
		n.mu.Lock()
		defer n.mu.Unlock()
		switch ev := ev.(type) {
		case *page.EventFrameRequestedNavigation:
			if ev.FrameID != mainFrame {
				return
			}
			n.requested++
		case *page.EventFrameStoppedLoading:
			if ev.FrameID != mainFrame {
				return
			}
			n.settled = n.requested
		default:
			return
		}
		close(n.changed)
		n.changed = make(chan struct{})
	}
}

// count returns how many navigations were requested so far.
func (n *navigations) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.requested
}

// waitSettled waits, when a navigation was requested since count returned
// before (or is to be: pending), until the frame has stopped loading after
// the last one.
func (n *navigations) waitSettled(ctx context.Context, before int, pending bool) error {
	for {
		n.mu.Lock()
		if (n.requested == before && !pending) || (n.requested != before && n.settled == n.requested) {
			n.mu.Unlock()
			return nil
		}
		changed := n.changed
		n.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the page the action navigated to: %w", ctx.Err())
		}
	}
}

// recorder holds what a tab reported, written by its listeners.
type recorder struct {
	mu       sync.Mutex
	console  []string
	csp      []CSPViolation
	requests []string
}

// listen records the URL of each request the page sends.
func (r *recorder) listen(ev any) {
	if ev, ok := ev.(*network.EventRequestWillBeSent); ok {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.requests = append(r.requests, ev.Request.Method+" "+ev.Request.URL)
	}
}

// CSPViolation is one securitypolicyviolation event of the page: what was
// blocked (a URL, or "inline" or "eval") and the directive it broke.
type CSPViolation struct {
	BlockedURI         string `json:"blockedURI"`
	ViolatedDirective  string `json:"violatedDirective"`
	EffectiveDirective string `json:"effectiveDirective"`
	SourceFile         string `json:"sourceFile"`
	LineNumber         int    `json:"lineNumber"`
	Sample             string `json:"sample"`
}

func (v CSPViolation) String() string {
	s := fmt.Sprintf("%s blocked by %q", v.BlockedURI, v.ViolatedDirective)
	if v.SourceFile != "" {
		s += fmt.Sprintf(" at %s:%d", v.SourceFile, v.LineNumber)
	}
	if v.Sample != "" {
		s += fmt.Sprintf(" (%q)", v.Sample)
	}
	return s
}

// cspBinding is the function the page's listener calls with each
// securitypolicyviolation event. A binding of the DevTools protocol, like
// the listener (added with Page.addScriptToEvaluateOnNewDocument), is not
// subject to the page's own CSP, so it reports even on a page whose policy
// forbids every script.
const cspBinding = "__browserTestCSPViolation"

// cspListener runs in every document the tab loads, before its scripts.
const cspListener = `document.addEventListener('securitypolicyviolation', function (e) {
  window.` + cspBinding + `({blockedURI: e.blockedURI, violatedDirective: e.violatedDirective,
    effectiveDirective: e.effectiveDirective, sourceFile: e.sourceFile,
    lineNumber: e.lineNumber, sample: e.sample});
}, true);`

// navigationIntent is the global in which navigationListener keeps the
// last submit or link click the page received, for leaving to ask.
const navigationIntent = "__browserTestNavigationIntent"

// navigationListener runs in every document the tab loads, before its
// scripts. It keeps the last submit event, and the last click on a link
// that leads to another document in this tab, so that an action can tell,
// once the event is over, whether it will navigate: Chromium requests a
// form's navigation in a task of its own, which may run after the key or
// click that caused it has been answered (navigations alone would then
// see nothing to wait for). The event is kept in the capture phase, before
// any listener of the page, and judged later by its defaultPrevented, so
// that a page that handles the submit itself (fetch) is not waited for.
const navigationListener = `(function () {
  function keep(e) { window.` + navigationIntent + ` = e; }
  window.addEventListener('submit', function (e) {
    var f = e.target, s = e.submitter;
    var method = (s && s.getAttribute('formmethod')) || f.getAttribute('method') || '';
    var target = (s && s.getAttribute('formtarget')) || f.getAttribute('target') || '';
    if (method.toLowerCase() === 'dialog' || (target && target !== '_self')) return;
    keep(e);
  }, true);
  window.addEventListener('click', function (e) {
    var a = e.target && e.target.closest && e.target.closest('a[href]');
    if (!a || a.hasAttribute('download') || (a.target && a.target !== '_self')) return;
    var to = new URL(a.href, document.baseURI), here = new URL(location.href);
    to.hash = ''; here.hash = '';
    if (to.href === here.href && a.hash) return;
    keep(e);
  }, true);
})();`

// leaving reports whether the last submit or link click of the page, if
// any, was left to the browser, so that it navigates; it forgets the event.
// In a document the navigation already replaced, there is none to report.
const leaving = `(function () {
  var e = window.` + navigationIntent + `;
  window.` + navigationIntent + ` = undefined;
  return !!e && !e.defaultPrevented;
})()`

// NewPage opens a new tab, in a browser context of its own, shown on
// viewport vp; it closes when t ends.
func (b *Browser) NewPage(t testing.TB, vp Viewport) *Page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	p := &Page{t: t, b: b, ctx: ctx, viewport: vp, Timeout: DefaultTimeout, rec: &recorder{},
		nav: &navigations{changed: make(chan struct{})}}
	opts := []chromedp.EmulateViewportOption{chromedp.EmulatePortrait}
	if vp.Mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	// The console is subscribed before the tab's first action, so that
	// nothing it logs is lost (chromedp buffers the messages).
	messages := chromedp.Console(ctx)
	err := p.do(
		chromedp.EmulateViewport(vp.Width, vp.Height, opts...),
		chromedp.ExposeFunc(cspBinding, func(_ context.Context, v CSPViolation) (chromedp.Void, error) {
			p.rec.mu.Lock()
			defer p.rec.mu.Unlock()
			p.rec.csp = append(p.rec.csp, v)
			return chromedp.Void{}, nil
		}),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: cspListener + "\n" + navigationListener})
			return err
		}),
	)
	if err == nil {
		main := cdp.FrameID(chromedp.FromContext(ctx).Target.TargetID)
		err = chromedp.Listen(ctx, p.nav.listen(main))
	}
	if err == nil {
		err = chromedp.Listen(ctx, p.rec.listen)
	}
	if err != nil {
		t.Fatalf("browser: opening a %s tab: %v", vp.Name, err)
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return // the tab closed
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				p.rec.mu.Lock()
				p.rec.console = append(p.rec.console, consoleLine(m))
				p.rec.mu.Unlock()
			}
		}
	}()
	return p
}

// consoleLine is a console error as a test reports it: its text and where
// it came from.
func consoleLine(m chromedp.ConsoleMessage) string {
	s := m.String()
	if m.URL != "" {
		s += fmt.Sprintf(" (%s:%d)", m.URL, m.Line+1)
	}
	return s
}

// do runs actions in the tab, bounded by the page's Timeout.
func (p *Page) do(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(p.ctx, p.Timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// Open navigates to url and waits for its load event.
func (p *Page) Open(url string) {
	p.t.Helper()
	if err := p.do(chromedp.Navigate(url)); err != nil {
		p.t.Fatalf("browser: opening %s: %v", url, err)
	}
}

// URL returns the address the tab shows.
func (p *Page) URL() string {
	p.t.Helper()
	u, err := run(p, chromedp.Location())
	if err != nil {
		p.t.Fatalf("browser: reading the location: %v", err)
	}
	return u
}

// run runs one action that returns a value, bounded by the page's Timeout.
func run[T any](p *Page, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.Timeout)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// ConsoleErrors returns the errors the page wrote to its console so far:
// console.error calls, uncaught exceptions and rejections, and the
// browser's own errors (a failed load, a refused script).
func (p *Page) ConsoleErrors() []string {
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	return append([]string(nil), p.rec.console...)
}

// CSPViolations returns the page's securitypolicyviolation events so far.
func (p *Page) CSPViolations() []CSPViolation {
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	return append([]CSPViolation(nil), p.rec.csp...)
}

// Requests returns the requests the page sent so far (documents, scripts,
// styles, fetches), each as its method and URL, for a test to assert that
// no personal data or token is in a URL (console.md: "no personal data
// (PAN, mobile numbers, names) in URLs").
func (p *Page) Requests() []string {
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	return append([]string(nil), p.rec.requests...)
}

// WebStorage returns what the page's origin holds in localStorage and
// sessionStorage, keyed "local:<key>" and "session:<key>", for a test to
// assert that no token is kept there (console.md: "tokens kept in memory,
// never in localStorage or a URL").
func (p *Page) WebStorage() map[string]string {
	p.t.Helper()
	const read = `(() => {
  const all = {};
  for (const [prefix, store] of [['local:', localStorage], ['session:', sessionStorage]]) {
    for (let i = 0; i < store.length; i++) {
      const key = store.key(i);
      all[prefix + key] = store.getItem(key);
    }
  }
  return all;
})()`
	m, err := run(p, chromedp.Evaluate[map[string]string](read))
	if err != nil {
		p.t.Fatalf("browser: reading web storage: %v", err)
	}
	return m
}

// CheckClean fails the test (without stopping it) for each console error
// and CSP violation the page has had.
func (p *Page) CheckClean() {
	p.t.Helper()
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		p.t.Errorf("browser: %d console error(s) on %s:\n  %s", len(errs), p.viewport.Name, strings.Join(errs, "\n  "))
	}
	if vs := p.CSPViolations(); len(vs) > 0 {
		lines := make([]string, len(vs))
		for i, v := range vs {
			lines[i] = v.String()
		}
		p.t.Errorf("browser: %d Content-Security-Policy violation(s):\n  %s", len(vs), strings.Join(lines, "\n  "))
	}
}

// Check is what every page of a flow gets: a screenshot named name, no
// axe-core violation of WCAG 2.1 A or AA, no console error, no CSP
// violation, and nothing wider than the screen (CheckFits). It fails the
// test for each problem and lets it go on.
func (p *Page) Check(name string) {
	p.t.Helper()
	p.Screenshot(name)
	p.CheckAxe()
	p.CheckClean()
	p.CheckFits(name)
}
