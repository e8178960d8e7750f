package browser

import (
	"fmt"
	"time"

	"github.com/chromedp/chromedp"
)

// AdvanceClock moves the page's clock (Date.now, which the console reads
// to know when its token expires) on by d, as when a person leaves the
// console open for that long: what the page decides by the time sees d
// pass; the servers' clocks do not move. It lasts until the page is
// loaded again. It runs through the DevTools protocol, which the page's
// CSP does not govern.
func (p *Page) AdvanceClock(d time.Duration) {
	p.t.Helper()
	script := fmt.Sprintf(`(() => { const now = Date.now.bind(Date); Date.now = () => now() + %d; })()`, d.Milliseconds())
	if err := p.do(chromedp.Evaluate[chromedp.Void](script)); err != nil {
		p.t.Fatalf("browser: advancing the clock: %v", err)
	}
}
