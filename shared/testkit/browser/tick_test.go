package browser

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// modesPage is a radio group of two real radio buttons and a "radio" only
// a mouse can work (a <div> with the role and no tabindex).
const modesPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Modes</title></head><body><main>
<fieldset><legend>Mode</legend>
<input type="radio" id="live" name="mode" value="live" checked><label for="live">Live</label>
<input type="radio" id="test" name="mode" value="test"><label for="test">Test</label>
</fieldset>
<div role="radio" aria-checked="false">Mouse only</div>
</main></body></html>`

// TestTick: Tick checks a radio button with the keyboard (Space), which
// Checked then reports, and the group's other button is no longer
// checked; a radio only a mouse can work fails Tick.
func TestTick(t *testing.T) {
	b := Start(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(modesPage))
	}))
	t.Cleanup(srv.Close)
	p := b.NewPage(t, Phone)
	p.Open(srv.URL)
	if !p.Checked(Role("radio", "Live")) || p.Checked(Role("radio", "Test")) {
		t.Fatal("at first: want Live checked, Test not")
	}
	p.Tick(Role("radio", "Test"))
	if p.Checked(Role("radio", "Live")) || !p.Checked(Role("radio", "Test")) {
		t.Error("after ticking Test: want Test checked, Live not")
	}
	p.Tick(Role("radio", "Live"))
	if !p.Checked(Role("radio", "Live")) || p.Checked(Role("radio", "Test")) {
		t.Error("after ticking Live: want Live checked, Test not")
	}

	rec := &fakeT{TB: t}
	q := *p
	q.t, q.Timeout = rec, time.Second
	q.Tick(Role("radio", "Mouse only"))
	if got := rec.reported(); !strings.Contains(got, `ticking radio "Mouse only": `) || !strings.Contains(got, "no keyboard user can work it") {
		t.Errorf("reported %q; want it to say that no keyboard user can work the radio", got)
	}
}
