package browser

import (
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
)

// AxeTags are the axe-core rule tags the pages are checked against: WCAG
// 2.0 and 2.1, levels A and AA (console.md: "no page has an axe-core
// violation of WCAG 2.1 A or AA"). Best practices and AAA are not asked.
var AxeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa"}

// Violation is one axe-core rule the page breaks, with the elements that
// break it.
type Violation struct {
	ID      string     `json:"id"`     // the rule, e.g. "label", "color-contrast"
	Impact  string     `json:"impact"` // minor, moderate, serious or critical
	Help    string     `json:"help"`   // what the rule asks, in a sentence
	HelpURL string     `json:"helpUrl"`
	Nodes   []AxeNodes `json:"nodes"`
}

// AxeNodes is one element that breaks a rule: its CSS selector (Target)
// and axe-core's summary of what to fix.
type AxeNodes struct {
	Target  string `json:"target"`
	Summary string `json:"summary"`
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s", v.ID, v.Impact, v.Help)
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "\n    %s: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", "; "))
	}
	return b.String()
}

// axeRun runs axe-core on the document, injecting it first when the
// document does not have it yet. The script goes in through the DevTools
// protocol, which the page's Content-Security-Policy does not govern, so a
// page with a strict policy is checked as it is. The result is mapped in
// the page to plain strings: a target is a list of selectors (one per
// frame or shadow root), joined with " >>> ".
const axeRun = `(async () => {
  const result = await axe.run(document, {
    runOnly: {type: 'tag', values: %s},
    resultTypes: ['violations'],
  });
  return result.violations.map(v => ({
    id: v.id, impact: v.impact || '', help: v.help, helpUrl: v.helpUrl,
    nodes: v.nodes.map(n => ({
      target: n.target.map(t => Array.isArray(t) ? t.join(' ') : String(t)).join(' >>> '),
      summary: n.failureSummary || '',
    })),
  }));
})()`

// Axe checks the page with axe-core against AxeTags and returns the
// violations, none for a page that passes.
func (p *Page) Axe() []Violation {
	p.t.Helper()
	vs, err := p.axe()
	if err != nil {
		p.t.Fatalf("browser: axe-core: %v", err)
	}
	return vs
}

func (p *Page) axe() ([]Violation, error) {
	has, err := run(p, chromedp.Evaluate[bool](`typeof window.axe === 'object'`))
	if err != nil {
		return nil, err
	}
	if !has {
		if err := p.do(chromedp.Evaluate[chromedp.Void](p.b.axe)); err != nil {
			return nil, fmt.Errorf("injecting axe.min.js: %w", err)
		}
	}
	tags := `['` + strings.Join(AxeTags, `','`) + `']`
	return run(p, chromedp.Evaluate[[]Violation](fmt.Sprintf(axeRun, tags), chromedp.EvalAwaitPromise))
}

// CheckAxe fails the test (without stopping it) when axe-core finds a
// violation on the page, listing each rule with its impact, what it asks
// and the selectors of the elements that break it.
func (p *Page) CheckAxe() {
	p.t.Helper()
	vs := p.Axe()
	if len(vs) == 0 {
		return
	}
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = v.String()
	}
	p.t.Errorf("browser: axe-core found %d WCAG 2.1 A/AA violation(s) on %s (%s):\n  %s",
		len(vs), p.URL(), p.viewport.Name, strings.Join(lines, "\n  "))
}
