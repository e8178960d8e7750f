package browser

import (
	"context"
	"strconv"

	"github.com/chromedp/chromedp"
)

// Tick checks the radio button or checkbox c with the keyboard alone: it
// moves the focus to it and presses Space, as a keyboard user does (Enter,
// Press's key, does not check a radio button).
func (p *Page) Tick(c Control) {
	p.t.Helper()
	err := p.act("ticking", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Focus(sel, opts...), chromedp.KeyEvent(" "))
	})
	if err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// Checked reports whether the radio button or checkbox c is checked (its
// element's checked property).
func (p *Page) Checked(c Control) bool {
	p.t.Helper()
	got := p.read("reading whether it is checked", c, func(sel string, opts ...chromedp.QueryOption) chromedp.Action[string] {
		checked := chromedp.JavascriptAttribute[bool](sel, "checked", opts...)
		return func(ctx context.Context, t *chromedp.Target) (string, error) {
			b, err := checked(ctx, t)
			return strconv.FormatBool(b), err
		}
	})
	return got == "true"
}
