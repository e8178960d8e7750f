package browser

import (
	"context"
	"strconv"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Walking a page with the keyboard alone (console.md: "every action can be
// done with the keyboard alone"), as Press and Tick do for one control: the
// focus put somewhere, keys pressed where it is, and the page's tab order
// checked step by step.

// Focus moves the keyboard focus to the control c, as a keyboard user who
// has tabbed there; nothing is pressed.
func (p *Page) Focus(c Control) {
	p.t.Helper()
	if err := p.act("focusing", c, chromedp.Focus[string]); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// Key presses key (kb.Tab, kb.Enter, " " for Space) where the focus is.
func (p *Page) Key(key string) {
	p.t.Helper()
	if err := p.do(chromedp.KeyEvent(key)); err != nil {
		p.t.Fatalf("browser: pressing %q: %v", key, err)
	}
}

// Focused reports whether the control c has the keyboard focus.
func (p *Page) Focused(c Control) bool {
	p.t.Helper()
	got := p.read("reading whether it has the focus", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[string] {
		return chromedp.QueryAfter(sel, func(ctx context.Context, t *chromedp.Target, nodes []*chromedp.Node) (string, error) {
			r, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{NodeID: nodes[0].NodeID})
			if err != nil {
				return "", err
			}
			defer cdp.Call(ctx, t, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: r.Object.ObjectID}) //nolint:errcheck // the page may have gone
			focused, err := chromedp.CallFunctionOn[bool]("function () { return this === document.activeElement; }",
				func(params *runtime.CallFunctionOnParams) { params.ObjectID = r.Object.ObjectID })(ctx, t)
			return strconv.FormatBool(focused), err
		}, opts...)
	})
	return got == "true"
}

// focusedJS describes the element that has the focus, for a failure's
// message: its tag, id and the text it is labelled by.
const focusedJS = `(function () {
  const a = document.activeElement;
  if (!a || a === document.body) return "nothing (the page itself)";
  const label = (a.labels && a.labels[0] && a.labels[0].textContent) || a.getAttribute("aria-label") || a.textContent || "";
  return a.localName + (a.id ? "#" + a.id : "") + " " + JSON.stringify(label.trim().slice(0, 60));
})()`

// TabTo presses Tab and fails the test unless the focus is then on the
// control c: one step of the page's tab order, as a keyboard user walks it
// (the order the page's controls are met in must be the order they are
// read in, and none may be skipped or trap the focus).
func (p *Page) TabTo(c Control) {
	p.t.Helper()
	p.Key(kb.Tab)
	if !p.Focused(c) {
		at, err := run(p, chromedp.Evaluate[string](focusedJS))
		if err != nil {
			at = err.Error()
		}
		p.t.Fatalf("browser: Tab moved the focus to %s, not to %s", at, c)
	}
}
