package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Control names an element as a screen reader announces it: its ARIA role
// and its accessible name, both as Chromium computes them for its
// accessibility tree (a <label for> names its input, a button's text names
// it, aria-label and aria-labelledby override). An empty Name matches any
// name.
//
// Controls are found with the DevTools protocol's Accessibility.queryAXTree
// (what Puppeteer's "aria/" selectors use), not with CSS or XPath: the test
// then finds exactly what a screen-reader user finds, so an input whose
// label is missing or says something else, or a <div> with a click handler
// and no role, is not found and the test fails. It matches the computed name exactly, so
// that "Move to Created" never finds "Move to Created (2)"; elements that
// are hidden or aria-hidden are left out, as assistive technology leaves
// them out.
type Control struct{ Role, Name string }

// Role is the control with ARIA role role and accessible name name.
func Role(role, name string) Control { return Control{Role: role, Name: name} }

// TextBox is a text field (an <input> of type text, email, password, search,
// tel, url or number, or a <textarea>) named name.
func TextBox(name string) Control { return Control{"textbox", name} }

// Button is a button (<button>, <input type=submit>, role=button) named name.
func Button(name string) Control { return Control{"button", name} }

// Heading is a heading (<h1>…<h6>) whose text is name.
func Heading(name string) Control { return Control{"heading", name} }

// FileField is a file field (<input type=file>) named name: Chromium's
// accessibility tree, and so a screen reader, presents it as a button.
func FileField(name string) Control { return Control{"button", name} }

// Image is an image (<img>) whose alt text is name: ARIA's role img, which
// Chromium's accessibility tree names "image".
func Image(name string) Control { return Control{"image", name} }

// Link is a link (<a href>) whose text is name.
func Link(name string) Control { return Control{"link", name} }

func (c Control) String() string {
	if c.Name == "" {
		return c.Role
	}
	return fmt.Sprintf("%s %q", c.Role, c.Name)
}

// axNode is one node queryAXTree found: its role, name and DOM node.
type axNode struct {
	role, name string
	backend    cdp.BackendNodeID
}

// query returns the unignored nodes under the DOM node root that have c's
// role, and those of them that have c's name. It asks Chromium for the
// role only and compares the names itself: queryAXTree's own name filter
// misses some elements whose name the tree reports (a labelled
// <input type=file>, in Chromium 156), where the name it reports is the
// one a screen reader gets.
func query(ctx context.Context, t *chromedp.Target, root accessibility.QueryAXTreeParams, c Control) (all, named []axNode, err error) {
	root.Role = c.Role
	res, err := cdp.Call(ctx, t, accessibility.QueryAXTree, root)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range res.Nodes {
		if n.Ignored || n.BackendDOMNodeID == 0 {
			continue
		}
		node := axNode{role: axString(n.Role), name: axString(n.Name), backend: n.BackendDOMNodeID}
		all = append(all, node)
		if c.Name == "" || node.name == c.Name {
			named = append(named, node)
		}
	}
	return all, named, nil
}

// axString returns the string an accessibility value holds, "" for none.
func axString(v *accessibility.Value) string {
	if v == nil {
		return ""
	}
	var s string
	if json.Unmarshal([]byte(v.Value), &s) != nil {
		return string(v.Value)
	}
	return s
}

// finder is one lookup of a control within the page's scope. Its lookup
// func (a chromedp ByFunc) returns the control's DOM node only when exactly
// one element matches; otherwise it returns none, so that chromedp tries
// again until the page's Timeout, and records why in miss for the error.
type finder struct {
	scope []Control
	c     Control
	all   bool // every match (to wait for none), not exactly one

	mu   sync.Mutex
	miss error
}

func (f *finder) setMiss(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.miss = err
}

func (f *finder) lastMiss() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.miss
}

// lookup resolves the scope's containers one within the other from the
// document, each of which must match exactly once, then the control.
//
// While an element of the page is aria-busy (a view loading), nothing is
// found yet: what the page shows until then may be replaced, and a control
// acted on in it lost with it (a confirmation asked in rows about to be
// redrawn). A wait for none (Gone) waits for the busy element too.
func (f *finder) lookup(ctx context.Context, t *chromedp.Target, doc *chromedp.Node) ([]cdp.NodeID, error) {
	busy, err := cdp.Call(ctx, t, dom.QuerySelector, dom.QuerySelectorParams{NodeID: doc.NodeID, Selector: `[aria-busy="true"]`})
	if err != nil {
		return nil, err
	}
	if busy.NodeID != 0 {
		f.setMiss(errors.New(`the page stays busy (an element has aria-busy="true")`))
		if f.all {
			return []cdp.NodeID{busy.NodeID}, nil
		}
		return []cdp.NodeID{}, nil
	}
	root := accessibility.QueryAXTreeParams{NodeID: doc.NodeID}
	where := "the page"
	for _, s := range f.scope {
		all, found, err := query(ctx, t, root, s)
		if err != nil {
			return nil, err
		}
		if len(found) != 1 {
			f.explain(s, where, all, found)
			return []cdp.NodeID{}, nil
		}
		root = accessibility.QueryAXTreeParams{BackendNodeID: found[0].backend}
		where = s.String()
	}
	all, found, err := query(ctx, t, root, f.c)
	if err != nil {
		return nil, err
	}
	if !f.all && len(found) != 1 {
		f.explain(f.c, where, all, found)
		return []cdp.NodeID{}, nil
	}
	if len(found) == 0 {
		return []cdp.NodeID{}, nil
	}
	backends := make([]cdp.BackendNodeID, len(found))
	for i, n := range found {
		backends[i] = n.backend
	}
	res, err := cdp.Call(ctx, t, dom.PushNodesByBackendIDsToFrontend,
		dom.PushNodesByBackendIDsToFrontendParams{BackendNodeIDs: backends})
	if err != nil {
		return nil, err
	}
	return res.NodeIDs, nil
}

// explain records why c matched found (not exactly one element) in
// where, listing the names that all, the elements of c's role there, have.
func (f *finder) explain(c Control, where string, all, found []axNode) {
	if len(found) > 1 {
		f.setMiss(fmt.Errorf("%d elements are %s in %s: name the one meant with Within", len(found), c, where))
		return
	}
	if len(all) == 0 {
		f.setMiss(fmt.Errorf("no %s in %s, which has no %s at all", c, where, c.Role))
		return
	}
	names := make([]string, len(all))
	for i, n := range all {
		names[i] = fmt.Sprintf("%q", n.name)
	}
	slices.Sort(names)
	f.setMiss(fmt.Errorf("no %s in %s; its %ss are named %s", c, where, c.Role, strings.Join(slices.Compact(names), ", ")))
}

// failed turns an action's error into the test's message: when the
// control was not found in time, why (the last miss); else the error.
func (f *finder) failed(doing string, err error) error {
	if miss := f.lastMiss(); miss != nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s %s: %w", doing, f.c, miss)
	}
	if strings.Contains(err.Error(), "Element is not focusable") {
		return fmt.Errorf("%s %s: it cannot take the focus, so no keyboard user can work it (a <div> with a click handler, not a <button>?): %w", doing, f.c, err)
	}
	return fmt.Errorf("%s %s: %w", doing, f.c, err)
}

// Within returns a view of the page that looks for controls only inside the
// one element that is c (a region, form, group or list item named c.Name),
// for a page where several controls share a name, such as each paper's
// "Move to Printed" button inside the paper's group.
func (p *Page) Within(c Control) *Page {
	q := *p
	q.scope = append(slices.Clone(p.scope), c)
	return &q
}

// act finds the one element that is c and runs action on it. When the
// action started a navigation (a form's submit button, a link), or the
// page says one will follow (navigationListener), act waits until it has
// settled (the new page loaded, or the navigation was cancelled), so that
// the next step sees the new page and not the old one. An element replaced
// while the action ran (a page that re-renders) is looked up again, until
// the page's Timeout.
func (p *Page) act(doing string, c Control, action func(sel string, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(p.ctx, p.Timeout)
	defer cancel()
	before := p.nav.count()
	f := &finder{scope: p.scope, c: c}
	for {
		err := chromedp.Do(ctx, action("", chromedp.ByFunc(f.lookup)))
		if err == nil {
			break
		}
		if !stale(err) || ctx.Err() != nil {
			return f.failed(doing, err)
		}
	}
	pending, err := chromedp.Run(ctx, chromedp.Evaluate[bool](leaving))
	if err != nil && !stale(err) {
		return fmt.Errorf("%s %s: asking whether the page navigates: %w", doing, c, err)
	}
	if err := p.nav.waitSettled(ctx, before, pending); err != nil {
		return fmt.Errorf("%s %s: %w", doing, c, err)
	}
	return nil
}

// stale reports whether err is the browser's answer about a node that
// left the document between its lookup and the action on it.
func stale(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "No node with given id found") ||
		strings.Contains(msg, "Could not find node with given id") ||
		strings.Contains(msg, "Node is detached") ||
		strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Execution context was destroyed")
}

// Find waits until the page has exactly one element that is c.
func (p *Page) Find(c Control) {
	p.t.Helper()
	if err := p.act("finding", c, chromedp.Query[string]); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// Gone waits until no element of the page is c.
func (p *Page) Gone(c Control) {
	p.t.Helper()
	f := &finder{scope: p.scope, c: c, all: true}
	if err := p.do(chromedp.WaitNotPresent("", chromedp.ByFunc(f.lookup))); err != nil {
		p.t.Fatalf("browser: %v", f.failed("waiting for the end of", err))
	}
}

// Fill types value into the text field c, as a user would (empty it, then
// type), so that the page's input and change handlers run. It empties the
// field with the keyboard (Ctrl+A, Backspace), not with chromedp.Clear,
// which fails on an empty <textarea> (it has no text node to clear).
func (p *Page) Fill(c Control, value string) {
	p.t.Helper()
	err := p.act("filling", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Focus(sel, opts...),
			chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.KeyEvent(kb.Backspace),
			chromedp.SendKeys(sel, value, opts...))
	})
	if err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// Press activates the control c with the keyboard alone: it moves the focus
// to it and presses Enter, as a keyboard user would after tabbing there. A
// control that only a mouse can work (a <div> with a click handler) cannot
// be focused, and fails the test (console.md: "every action can be done
// with the keyboard alone").
func (p *Page) Press(c Control) {
	p.t.Helper()
	err := p.act("pressing", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Focus(sel, opts...), chromedp.KeyEvent(kb.Enter))
	})
	if err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// Click clicks the control c with the mouse (a tap on a phone's screen).
func (p *Page) Click(c Control) {
	p.t.Helper()
	click := chromedp.Click[string]
	if p.viewport.Mobile {
		click = chromedp.Tap[string]
	}
	if err := p.act("clicking", c, click); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// Choose picks the option whose label starts with option in the select c,
// as a keyboard user does: it moves the focus to the select and types the
// label (the select's type-ahead). Fill would first press Ctrl+A, which
// on a select selects the whole page's text instead.
func (p *Page) Choose(c Control, option string) {
	p.t.Helper()
	err := p.act("choosing "+option+" in", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Focus(sel, opts...), chromedp.SendKeys(sel, option, opts...))
	})
	if err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// Upload sets the files of the file field c to the files at paths, as a
// user choosing them in the file picker does.
func (p *Page) Upload(c Control, paths ...string) {
	p.t.Helper()
	err := p.act("choosing files for", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
		return chromedp.SetUploadFiles(sel, paths, opts...)
	})
	if err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// DropFiles drops the files at paths on the element c, as a user dragging
// them from their file manager does: the browser sends c dragenter,
// dragover and drop (Input.dispatchDragEvent at c's centre, scrolled into
// view) with the files in the event's dataTransfer. c is any control the
// page makes a drop zone, found by its role and name like the others.
func (p *Page) DropFiles(c Control, paths ...string) {
	p.t.Helper()
	err := p.act("dropping files on", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			if _, err := chromedp.ScrollIntoView(sel, opts...)(ctx, t); err != nil {
				return chromedp.Void{}, err
			}
			box, err := chromedp.Dimensions(sel, opts...)(ctx, t)
			if err != nil {
				return chromedp.Void{}, err
			}
			q := box.Border
			x, y := (q[0]+q[2]+q[4]+q[6])/4, (q[1]+q[3]+q[5]+q[7])/4
			data := &input.DragData{Items: []*input.DragDataItem{}, Files: paths, DragOperationsMask: 1} // copy
			for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
				if _, err := cdp.Call(ctx, t, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: x, Y: y, Data: data}); err != nil {
					return chromedp.Void{}, fmt.Errorf("%s: %w", typ, err)
				}
			}
			return chromedp.Void{}, nil
		}
	})
	if err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// WaitImage waits until the image c (Image) has loaded and returns its natural size in pixels: a broken or refused
// image fails the test at the page's Timeout, saying so.
func (p *Page) WaitImage(c Control) (width, height int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.Timeout)
	defer cancel()
	for {
		f := &finder{scope: p.scope, c: c}
		var size [2]int
		complete, err := chromedp.Run(ctx, chromedp.JavascriptAttribute[bool]("", "complete", chromedp.ByFunc(f.lookup)))
		for i, name := range []string{"naturalWidth", "naturalHeight"} {
			if err == nil && complete {
				size[i], err = chromedp.Run(ctx, chromedp.JavascriptAttribute[int]("", name, chromedp.ByFunc(f.lookup)))
			}
		}
		if err == nil && complete && size[0] > 0 {
			return size[0], size[1]
		}
		if err != nil && !stale(err) && ctx.Err() == nil {
			p.t.Fatalf("browser: %v", f.failed("reading the image", err))
			return 0, 0
		}
		select {
		case <-ctx.Done():
			if err != nil {
				p.t.Fatalf("browser: %v", f.failed("waiting for the image", err))
			} else {
				p.t.Fatalf("browser: %s did not load within %s", c, p.Timeout)
			}
			return 0, 0
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Text returns the visible text of the control c (its innerText).
func (p *Page) Text(c Control) string {
	p.t.Helper()
	return p.read("reading", c, chromedp.Text[string])
}

// Value returns the value of the form field c.
func (p *Page) Value(c Control) string {
	p.t.Helper()
	return p.read("reading the value of", c, chromedp.Value[string])
}

// Attribute returns the attribute name of the control c as the page set
// it (a link's href), "" when it has none.
func (p *Page) Attribute(c Control, name string) string {
	p.t.Helper()
	return p.read("reading the "+name+" of", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[string] {
		get := chromedp.AttributeValue(sel, name, opts...)
		return func(ctx context.Context, t *chromedp.Target) (string, error) {
			r, err := get(ctx, t)
			return r.Value, err
		}
	})
}

// read finds the one element that is c and returns what get reads of it,
// looking it up again when it left the document meanwhile.
func (p *Page) read(doing string, c Control, get func(string, ...chromedp.QueryOption) chromedp.Action[string]) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.Timeout)
	defer cancel()
	f := &finder{scope: p.scope, c: c}
	for {
		s, err := chromedp.Run(ctx, get("", chromedp.ByFunc(f.lookup)))
		if err == nil {
			return s
		}
		if !stale(err) || ctx.Err() != nil {
			p.t.Fatalf("browser: %v", f.failed(doing, err))
			return ""
		}
	}
}

// WaitText waits until the visible text of the control c is want, as the
// page updates it (after a request, a navigation), and fails the test with
// the last text seen when it is not by the page's Timeout.
func (p *Page) WaitText(c Control, want string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.Timeout)
	defer cancel()
	var last error // why the last read read nothing
	var got string
	seen := false
	for {
		f := &finder{scope: p.scope, c: c}
		s, err := chromedp.Run(ctx, chromedp.Text("", chromedp.ByFunc(f.lookup)))
		switch {
		case err == nil && s == want:
			return
		case err == nil:
			got, seen = s, true
		case !stale(err):
			last = f.failed("waiting for the text of", err)
		}
		select {
		case <-ctx.Done():
			if !seen && last != nil {
				p.t.Fatalf("browser: %v", last)
				return
			}
			p.t.Fatalf("browser: the text of %s is %q after %s; want %q", c, got, p.Timeout, want)
			return
		case <-time.After(pollInterval):
		}
	}
}

// pollInterval is how often WaitText reads the text again.
const pollInterval = 50 * time.Millisecond
