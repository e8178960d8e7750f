package browser

import (
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
)

// overflowJS measures whether the page fits its viewport's width: the
// page's scroll width, the viewport's width, and the elements that reach
// past its right edge, their own content included, outside any element
// a person can scroll sideways (a wide table in a region of its own
// scrolls there; the page does not). An element cut off by an ancestor's
// overflow hidden counts: nobody can read what is cut.
const overflowJS = `(function () {
  const vw = document.documentElement.clientWidth;
  const wide = [];
  const overflow = (e) => getComputedStyle(e).overflowX;
  const scrolls = (e) => overflow(e) === "auto" || overflow(e) === "scroll";
  for (const e of document.querySelectorAll("body *")) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const right = overflow(e) === "visible" ? Math.max(r.right, r.left + e.scrollWidth) : r.right;
    if (right <= vw + 0.5) continue;
    let inside = false;
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) if (scrolls(a)) { inside = true; break; }
    if (!inside) wide.push(e.localName + (e.id ? "#" + e.id : "") + (typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\s+/).join(".") : ""));
  }
  return { page: document.documentElement.scrollWidth, viewport: vw, wide: wide.slice(0, 8) };
})()`

// Overflow is what makes a page wider than its viewport.
type Overflow struct {
	Page     int      `json:"page"`     // the page's scroll width, in CSS px
	Viewport int      `json:"viewport"` // the viewport's width, without a scroll bar
	Wide     []string `json:"wide"`     // the elements past its right edge (tag#id.class), at most 8
}

// Fits reports whether the page fits its viewport's width: nothing to
// scroll sideways, no element past the right edge.
func (o Overflow) Fits() bool { return o.Page <= o.Viewport && len(o.Wide) == 0 }

func (o Overflow) String() string {
	return fmt.Sprintf("the page is %d px wide at a viewport of %d px; past its edge: %s", o.Page, o.Viewport, strings.Join(o.Wide, ", "))
}

// Overflow measures the page's width against its viewport's.
func (p *Page) Overflow() Overflow {
	p.t.Helper()
	o, err := run(p, chromedp.Evaluate[Overflow](overflowJS))
	if err != nil {
		p.t.Fatalf("browser: measuring the page's width: %v", err)
	}
	return o
}

// CheckFits fails the test (and lets it go on) unless the page fits its
// viewport's width (console.md: works "on a 390 px wide phone"): no
// sideways scroll of the page, nothing cut off at its right edge.
func (p *Page) CheckFits(name string) {
	p.t.Helper()
	if o := p.Overflow(); !o.Fits() {
		p.t.Errorf("browser: %s on %s: %s", name, p.viewport.Name, o)
	}
}
