package browser

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// formPage is a form whose tab order is the order it is read in, but for
// a field that a positive tabindex takes out of it, and a button that
// says what Space or Enter did.
const formPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Form</title></head><body><main>
<label for="a">First</label><input id="a">
<label for="b">Second</label><textarea id="b"></textarea>
<label for="c">Third</label><select id="c"><option>x</option></select>
<button type="button" id="go">Go</button>
<label for="d">Jumps the queue</label><input id="d" tabindex="1">
<p id="said" role="status"></p>
<p><a href="https://example.in/law#25">The law</a></p>
<script src="/form.js"></script>
</main></body></html>`

const formJS = `document.getElementById("go").addEventListener("click", () => { document.getElementById("said").textContent = "Went."; });`

// widePage has a table too wide for a phone in a region that scrolls
// sideways (it fits), and, when wide, a block that is not (it does not),
// in a body that hides what overflows when cut.
func widePage(wide bool, cut string) string {
	s := `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Wide</title><link rel="stylesheet" href="/wide.css"></head><body class="` + cut + `"><main>
<div class="scroll" tabindex="0" role="region" aria-label="Wide table"><table><tr><td class="w">a cell 600 px wide</td></tr></table></div>`
	if wide {
		s += `<p id="banner" class="w">A line 600 px wide</p>`
	}
	return s + `</main></body></html>`
}

func kitServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	serve := func(typ, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", typ)
			w.Write([]byte(body))
		}
	}
	mux.HandleFunc("GET /form", serve("text/html; charset=utf-8", formPage))
	mux.HandleFunc("GET /form.js", serve("text/javascript", formJS))
	mux.HandleFunc("GET /wide.css", serve("text/css", "body{margin:0} .cut main{overflow-x:hidden} .scroll{overflow-x:auto} .w{width:600px;margin:0}"))
	mux.HandleFunc("GET /fits", serve("text/html; charset=utf-8", widePage(false, "")))
	mux.HandleFunc("GET /wide", serve("text/html; charset=utf-8", widePage(true, "")))
	mux.HandleFunc("GET /cut", serve("text/html; charset=utf-8", widePage(true, "cut")))
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestKeyboard: Focus, TabTo and Key walk a form as a keyboard user does
// (Space presses the button); TabTo fails when Tab goes elsewhere, naming
// where it went. Attribute reads a link's address.
func TestKeyboard(t *testing.T) {
	b := Start(t)
	srv := kitServer(t)
	p := b.NewPage(t, Desktop)
	p.Open(srv.URL + "/form")
	p.Focus(TextBox("First"))
	if !p.Focused(TextBox("First")) || p.Focused(TextBox("Second")) {
		t.Fatal("after Focus(First): want First focused, Second not")
	}
	p.TabTo(TextBox("Second"))
	p.TabTo(Role("combobox", "Third"))
	p.TabTo(Button("Go"))
	p.Key(" ")
	p.WaitText(Role("status", ""), "Went.")
	if got := p.Attribute(Link("The law"), "href"); got != "https://example.in/law#25" {
		t.Errorf("the link's href %q, want https://example.in/law#25", got)
	}
	if got := p.Attribute(Button("Go"), "title"); got != "" {
		t.Errorf("the button's title %q, want none", got)
	}

	rec := &fakeT{TB: t}
	q := *p
	q.t, q.Timeout = rec, time.Second
	q.Focus(TextBox("First"))
	q.TabTo(Role("combobox", "Third")) // Second comes first
	if got := rec.reported(); !strings.Contains(got, `Tab moved the focus to textarea#b "Second", not to combobox "Third"`) {
		t.Errorf("reported %q; want it to say Tab went to Second", got)
	}
	rec = &fakeT{TB: t}
	q.t = rec
	p.Focus(Button("Go"))
	q.TabTo(TextBox("Jumps the queue")) // next in reading order, but its tabindex put it first
	if got := rec.reported(); !strings.Contains(got, "not to textbox \"Jumps the queue\"") {
		t.Errorf("reported %q; want TabTo to fail on a field out of the reading order", got)
	}
}

// TestCheckFits: a page fits a phone when its wide table scrolls in a
// region of its own, and does not when a block is wider than the screen,
// whether the page then scrolls sideways or cuts the block off; CheckFits
// names the block.
func TestCheckFits(t *testing.T) {
	b := Start(t)
	srv := kitServer(t)
	p := b.NewPage(t, Phone)
	p.Open(srv.URL + "/fits")
	if o := p.Overflow(); !o.Fits() {
		t.Errorf("a wide table in a scrolling region: %s; want it to fit", o)
	}
	p.CheckFits("fits")
	p.Open(srv.URL + "/wide")
	rec := &fakeT{TB: t}
	q := *p
	q.t = rec
	q.CheckFits("wide")
	if got := rec.reported(); !strings.Contains(got, "wide on phone: the page is ") || !strings.Contains(got, "p#banner.w") {
		t.Errorf("reported %q; want the page too wide, naming p#banner.w", got)
	}
	p.Open(srv.URL + "/cut")
	if o := p.Overflow(); o.Page > o.Viewport || o.Fits() {
		t.Errorf("a block cut off: %s; want a page that does not scroll, and does not fit", o)
	}
}
