package browser

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image/png"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"stampduty/shared/testkit/samtemplate"
)

// policy is the Content-Security-Policy of the test pages that must pass:
// the console's (console.md: "no inline script and no unsafe-eval").
const policy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<link rel="stylesheet" href="/style.css">
</head>
<body>
`

const style = `body { font-family: "Liberation Sans", Arial, sans-serif; margin: 0 auto; max-width: 40rem; padding: 1rem; color: #1a1a1a; background: #fff; }
label { display: block; margin-top: 1rem; }
input { box-sizing: border-box; display: block; width: 100%; max-width: 20rem; padding: .5rem; font-size: 1rem; border: 1px solid #555; }
button { margin-top: 1rem; padding: .5rem 1rem; font-size: 1rem; }
fieldset { margin-top: 1rem; }
.faint { color: #bbb; }
`

// signIn is an accessible sign-in form, as the console's will be: labelled
// fields, a button, a heading, no inline script or style.
var signIn = fmt.Sprintf(head, "Sign in") + `<main>
<h1>Sign in</h1>
<form method="post" action="/queue">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
`

// queue is where signing in leads: a heading, who is signed in, the
// papers not yet moved (each in a group named for it, whose fields and
// buttons share their names with the other's), and a link to sign out.
func queue(email, moved string) string {
	var b strings.Builder
	fmt.Fprintf(&b, head, "Queue")
	fmt.Fprintf(&b, "<main>\n<h1>Queue</h1>\n<p role=\"status\">Signed in as %s.%s</p>\n", html.EscapeString(email), html.EscapeString(moved))
	for _, n := range []string{"1", "2"} {
		if strings.Contains(moved, "Paper "+n+" ") {
			continue
		}
		fmt.Fprintf(&b, `<form method="post" action="/queue?moved=%[1]s&amp;email=%[2]s" enctype="multipart/form-data">
<fieldset><legend>Paper %[1]s</legend>
<label for="ref%[1]s">Unique doc ref</label><input id="ref%[1]s" name="ref">
<label for="certificate%[1]s">Certificate (PDF)</label><input id="certificate%[1]s" name="certificate" type="file" accept="application/pdf">
<button type="submit">Move to Printed</button>
</fieldset>
</form>
`, n, url.QueryEscape(email))
	}
	b.WriteString("<p><a href=\"/\">Sign out</a></p>\n</main>\n</body>\n</html>\n")
	return b.String()
}

// broken breaks two WCAG 2 A/AA rules: a field with no label (axe's
// "label") and grey text on white (axe's "color-contrast", 1.9:1 where AA
// asks 4.5:1).
var broken = fmt.Sprintf(head, "Broken") + `<main>
<h1>Broken</h1>
<p class="faint">Faint text nobody can read.</p>
<input type="text" name="nameless">
</main>
</body>
</html>
`

// inline has an inline script, which its policy (script-src 'self')
// forbids.
var inline = fmt.Sprintf(head, "Inline") + `<main>
<h1>Inline</h1>
<script>document.title = 'ran';</script>
</main>
</body>
</html>
`

// app is a page whose script (a file, as the policy asks) saves with a
// request and says so in its status, and has a "button" that is a <div>,
// which a mouse can click and a keyboard cannot reach.
var app = fmt.Sprintf(head, "App") + `<main>
<h1>App</h1>
<p id="status" role="status"></p>
<button id="save" type="button">Save</button>
<div id="fake" role="button">Delete</div>
<script src="/app.js"></script>
</main>
</body>
</html>
`

const appJS = `localStorage.setItem('theme', 'dark');
document.getElementById('save').addEventListener('click', async () => {
  const status = document.getElementById('status');
  status.textContent = 'Saving…';
  const res = await fetch('/api/save', {method: 'POST'});
  status.textContent = res.ok ? 'Saved.' : 'Not saved.';
});
document.getElementById('fake').addEventListener('click', () => {
  document.getElementById('status').textContent = 'Deleted.';
});
`

// stay has a form whose answer, 204 No Content, cancels its navigation,
// and a link to a place in the same document: neither loads a page.
var stay = fmt.Sprintf(head, "Stay") + `<main>
<h1 id="top">Stay</h1>
<form method="post" action="/api/save"><button type="submit">Send</button></form>
<p><a href="#top">Back to top</a></p>
</main>
</body>
</html>
`

// reload shows a row loaded earlier, then redraws it from a slow answer,
// as the console's views do when a person comes back to one: the region
// is aria-busy meanwhile. A Revoke pressed in the old row asks its
// question in a cell the redraw throws away, or answers it for the last
// visit's row.
var reload = fmt.Sprintf(head, "Reload") + `<main>
<h1>Reload</h1>
<p id="status" role="status"></p>
<section id="rows" aria-label="Tokens" aria-busy="true"><p id="cell"><button type="button">Revoke</button></p></section>
<script src="/reload.js"></script>
</main>
</body>
</html>
`

const reloadJS = `let draws = 0;
function row() {
  const drawn = ++draws;
  const cell = document.getElementById('cell');
  const b = cell.querySelector('button');
  b.addEventListener('click', () => {
    const yes = document.createElement('button');
    yes.type = 'button';
    yes.textContent = 'Yes, revoke';
    yes.addEventListener('click', () => {
      document.getElementById('status').textContent = drawn > 1 ? 'Revoked.' : 'Revoked a row of the last visit.';
    });
    cell.replaceChildren(yes);
  });
}
row();
fetch('/api/save', {method: 'POST'}).then(() => {
  document.getElementById('rows').innerHTML = '<p id="cell"><button type="button">Revoke</button></p>';
  row();
  document.getElementById('rows').removeAttribute('aria-busy');
});
`

// server serves the test pages on loopback, each with policy as its CSP.
func server(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	page := func(html string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", policy)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, html)
		}
	}
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, style)
	})
	// Chromium asks every site for its icon: a 404 would be a console error.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /{$}", page(signIn))
	mux.HandleFunc("GET /broken", page(broken))
	mux.HandleFunc("GET /inline", page(inline))
	mux.HandleFunc("GET /app", page(app))
	mux.HandleFunc("GET /stay", page(stay))
	mux.HandleFunc("GET /reload", page(reload))
	mux.HandleFunc("GET /reload.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, reloadJS)
	})
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, appJS)
	})
	mux.HandleFunc("POST /api/save", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond) // the status says "Saving…" meanwhile
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /queue", func(w http.ResponseWriter, r *http.Request) {
		// As slow as a function behind the local API Gateway: the old page
		// stays on screen meanwhile.
		time.Sleep(150 * time.Millisecond)
		email := r.FormValue("email")
		if r.URL.Query().Has("moved") {
			email = r.URL.Query().Get("email")
		} else if email != "operator@example.com" || r.FormValue("password") != "correct horse" {
			http.Error(w, "wrong email or password", http.StatusUnauthorized)
			return
		}
		moved := ""
		if n := r.URL.Query().Get("moved"); n != "" {
			certificate := "no certificate"
			if f, h, err := r.FormFile("certificate"); err == nil {
				size, _ := io.Copy(io.Discard, f)
				certificate = fmt.Sprintf("%s, %d bytes", h.Filename, size)
			}
			moved = fmt.Sprintf(" Paper %s (%s, %s) moved to Printed.", n, r.FormValue("ref"), certificate)
		}
		page(queue(email, moved))(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// fakeT is a testing.TB that records what a helper reports instead of
// failing the test, to show that a check fails when it must.
type fakeT struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *fakeT) Helper() {}
func (r *fakeT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// Fatalf records as Errorf does; the Page methods return after it.
func (r *fakeT) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func (r *fakeT) reported() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "\n")
}

// browserTest is what TestBrowser's cases share: one Chromium, the test
// site, and a certificate file to upload.
type browserTest struct {
	b           *Browser
	srv         *httptest.Server
	certificate string
}

func TestBrowser(t *testing.T) {
	started := time.Now()
	b := Start(t)
	t.Logf("Chromium started in %s", time.Since(started).Round(time.Millisecond))
	srv := server(t)
	certificate := filepath.Join(t.TempDir(), "certificate.pdf")
	if err := os.WriteFile(certificate, append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{'x'}, 312)...), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &browserTest{b: b, srv: srv, certificate: certificate}

	for _, vp := range []Viewport{Phone, Desktop} {
		t.Run("a user signs in by accessible names on a "+vp.Name, func(t *testing.T) { f.signsInByAccessibleNames(t, vp) })
	}

	t.Run("screenshots go under the module root or SCREENSHOTS_DIR", f.screenshotsGoUnderTheRootOrDir)
	t.Run("a control that is not there fails the test, naming what the page has", f.missingControlFails)
	t.Run("two controls of one name fail the test until Within picks one", f.twoControlsOfOneNameFail)
	t.Run("a script updates the page with no navigation, and a button only a mouse can work fails Press", f.scriptUpdatesThePage)
	t.Run("nothing in a busy page is pressed until it is redrawn", f.busyPageWaitsForRedraw)
	t.Run("a press whose navigation is cancelled or stays in the document does not wait for a load", f.pressThatStaysInTheDocument)
	t.Run("axe-core reports a missing label and poor contrast, and CheckAxe fails", f.axeReportsViolations)
	t.Run("an inline script under a CSP that forbids it is a CSP violation and a console error", f.inlineScriptIsACSPViolation)
}

// signsInByAccessibleNames signs in, moves a paper and signs out on vp,
// by the controls' accessible names.
func (f *browserTest) signsInByAccessibleNames(t *testing.T, vp Viewport) {
	p := f.b.NewPage(t, vp)
	p.Open(f.srv.URL)
	p.Find(Heading("Sign in"))
	p.Fill(TextBox("Email"), "operator@example.com")
	p.Fill(TextBox("Password"), "correct horse")
	if got, want := p.Value(TextBox("Email")), "operator@example.com"; got != want {
		t.Errorf("Email = %q; want %q", got, want)
	}
	p.Check("sign-in")
	p.Press(Button("Sign in"))

	// Straight after the press, the tab shows the new page, not the
	// old one still on screen while the server answers: Press
	// waited for the page it navigated to.
	if got, want := p.URL(), f.srv.URL+"/queue"; got != want {
		t.Errorf("URL = %q; want %q", got, want)
	}
	if got, want := p.Text(Heading("Queue")), "Queue"; got != want {
		t.Errorf("heading = %q; want %q", got, want)
	}
	if got, want := p.Text(Role("status", "")), "Signed in as operator@example.com."; got != want {
		t.Errorf("status = %q; want %q", got, want)
	}
	paper2 := p.Within(Role("group", "Paper 2"))
	paper2.Fill(TextBox("Unique doc ref"), "IN-DL-2")
	paper2.Upload(FileField("Certificate (PDF)"), f.certificate)
	paper2.Press(Button("Move to Printed"))
	p.WaitText(Role("status", ""), "Signed in as operator@example.com. Paper 2 (IN-DL-2, certificate.pdf, 321 bytes) moved to Printed.")
	p.Gone(Role("group", "Paper 2"))
	p.Find(Role("group", "Paper 1"))
	file := p.Screenshot("queue")
	checkPNG(t, file, vp.Width)
	p.Check("queue")

	// The password went in a POST's body, never in a URL; the test
	// page's forms put the email in theirs, and Requests shows it.
	var withEmail []string
	for _, r := range p.Requests() {
		if strings.Contains(r, "correct") {
			t.Errorf("a URL has the password: %s", r)
		}
		if strings.Contains(r, url.QueryEscape("operator@example.com")) {
			withEmail = append(withEmail, r)
		}
	}
	if got, want := withEmail, []string{"POST " + f.srv.URL + "/queue?moved=2&email=operator%40example.com"}; !slices.Equal(got, want) {
		t.Errorf("requests with the email in their URL = %q; want %q", got, want)
	}
	if got := p.WebStorage(); len(got) != 0 {
		t.Errorf("web storage = %v; want it empty", got)
	}

	p.Click(Link("Sign out"))
	p.Find(Heading("Sign in"))
}

func (f *browserTest) screenshotsGoUnderTheRootOrDir(t *testing.T) {
	p := f.b.NewPage(t, Phone)
	p.Open(f.srv.URL)
	root, err := samtemplate.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Screenshot("sign-in"), filepath.Join(root, ".build/screenshots/TestBrowser/screenshots_go_under_the_module_root_or_SCREENSHOTS_DIR/sign-in-phone.png"); got != want {
		t.Errorf("screenshot written to %s; want %s", got, want)
	}
	dir := t.TempDir()
	t.Setenv("SCREENSHOTS_DIR", dir)
	file := p.Screenshot("sign in/again")
	if got, want := file, filepath.Join(dir, "TestBrowser/screenshots_go_under_the_module_root_or_SCREENSHOTS_DIR/again-phone.png"); got != want {
		t.Errorf("screenshot written to %s; want %s", got, want)
	}
	checkPNG(t, file, Phone.Width)
	t.Setenv("SCREENSHOTS_DIR", "out/shots")
	if got, want := f.b.ScreenshotsDir(), filepath.Join(root, "out/shots"); got != want {
		t.Errorf("ScreenshotsDir = %s; want %s", got, want)
	}
}

func (f *browserTest) missingControlFails(t *testing.T) {
	rec := &fakeT{TB: t}
	p := f.b.NewPage(rec, Desktop)
	p.Timeout = time.Second
	p.Open(f.srv.URL)
	p.Press(Button("Log in"))
	if got, want := rec.reported(), `pressing button "Log in": no button "Log in" in the page; its buttons are named "Sign in"`; !strings.Contains(got, want) {
		t.Errorf("reported %q; want it to say %q", got, want)
	}
}

func (f *browserTest) twoControlsOfOneNameFail(t *testing.T) {
	p := f.b.NewPage(t, Desktop)
	p.Open(f.srv.URL)
	p.Fill(TextBox("Email"), "operator@example.com")
	p.Fill(TextBox("Password"), "correct horse")
	p.Press(Button("Sign in"))
	p.Find(Heading("Queue"))

	rec := &fakeT{TB: t}
	q := *p
	q.t, q.Timeout = rec, time.Second
	q.Press(Button("Move to Printed"))
	if got, want := rec.reported(), `2 elements are button "Move to Printed" in the page: name the one meant with Within`; !strings.Contains(got, want) {
		t.Errorf("reported %q; want it to say %q", got, want)
	}
	p.Within(Role("group", "Paper 1")).Find(Button("Move to Printed"))
}

func (f *browserTest) scriptUpdatesThePage(t *testing.T) {
	p := f.b.NewPage(t, Desktop)
	p.Open(f.srv.URL + "/app")
	p.Press(Button("Save"))
	p.WaitText(Role("status", ""), "Saved.")
	p.Check("app")
	if got, want := p.WebStorage(), map[string]string{"local:theme": "dark"}; !maps.Equal(got, want) {
		t.Errorf("web storage = %v; want %v", got, want)
	}
	// Chromium asks for the icon when it likes: that one is left out.
	requests := slices.DeleteFunc(p.Requests(), func(r string) bool { return strings.HasSuffix(r, "/favicon.ico") })
	if got, want := requests, []string{"GET " + f.srv.URL + "/app", "GET " + f.srv.URL + "/style.css", "GET " + f.srv.URL + "/app.js", "POST " + f.srv.URL + "/api/save"}; !slices.Equal(got, want) {
		t.Errorf("requests = %q; want %q", got, want)
	}

	rec := &fakeT{TB: t}
	q := *p
	q.t, q.Timeout = rec, time.Second
	q.Press(Button("Delete"))
	if got, want := rec.reported(), `pressing button "Delete": `; !strings.Contains(got, want) || !strings.Contains(got, "no keyboard user can work it") {
		t.Errorf("reported %q; want it to say %q and that no keyboard user can work it", got, want)
	}
	p.Click(Button("Delete"))
	p.WaitText(Role("status", ""), "Deleted.")
}

func (f *browserTest) busyPageWaitsForRedraw(t *testing.T) {
	p := f.b.NewPage(t, Desktop)
	p.Open(f.srv.URL + "/reload")
	p.Press(Button("Revoke"))
	p.Press(Button("Yes, revoke"))
	p.WaitText(Role("status", ""), "Revoked.")
}

func (f *browserTest) pressThatStaysInTheDocument(t *testing.T) {
	p := f.b.NewPage(t, Desktop)
	p.Timeout = 3 * time.Second
	p.Open(f.srv.URL + "/stay")
	for _, c := range []Control{Button("Send"), Link("Back to top")} {
		started := time.Now()
		p.Press(c)
		if took := time.Since(started); took > time.Second {
			t.Errorf("pressing %s took %s", c, took)
		}
	}
	if got := p.URL(); got != f.srv.URL+"/stay#top" {
		t.Errorf("URL = %q; want %q", got, f.srv.URL+"/stay#top")
	}
	p.Check("stay")
}

func (f *browserTest) axeReportsViolations(t *testing.T) {
	rec := &fakeT{TB: t}
	p := f.b.NewPage(rec, Desktop)
	p.Open(f.srv.URL + "/broken")
	vs := p.Axe()
	var ids []string
	for _, v := range vs {
		ids = append(ids, v.ID)
		if v.Impact == "" || v.Help == "" || len(v.Nodes) == 0 || v.Nodes[0].Target == "" {
			t.Errorf("violation %+v lacks its impact, help or failing nodes", v)
		}
	}
	slices.Sort(ids)
	if got, want := ids, []string{"color-contrast", "label"}; !slices.Equal(got, want) {
		t.Errorf("axe-core violations = %v; want %v", got, want)
	}
	p.CheckAxe()
	got := rec.reported()
	for _, want := range []string{"2 WCAG 2.1 A/AA violation(s)", "label (critical): Form elements must have labels\n    input: ", "color-contrast (serious)", "\n    p: ", "contrast of 1.91"} {
		if !strings.Contains(got, want) {
			t.Errorf("CheckAxe reported %q; want it to say %q", got, want)
		}
	}
}

func (f *browserTest) inlineScriptIsACSPViolation(t *testing.T) {
	rec := &fakeT{TB: t}
	p := f.b.NewPage(rec, Desktop)
	p.Open(f.srv.URL + "/inline")
	p.Find(Heading("Inline"))
	vs := p.CSPViolations()
	if len(vs) != 1 || vs[0].EffectiveDirective != "script-src-elem" || vs[0].BlockedURI != "inline" {
		t.Errorf("CSP violations = %v; want the inline script blocked by script-src-elem", vs)
	}
	if errs := p.ConsoleErrors(); len(errs) != 1 || !strings.Contains(errs[0], "Content Security Policy") {
		t.Errorf("console errors = %q; want Chromium's refusal of the inline script", errs)
	}
	if got := p.URL(); !strings.HasSuffix(got, "/inline") {
		t.Errorf("URL = %q", got)
	}
	p.CheckClean()
	if got := rec.reported(); !strings.Contains(got, "1 Content-Security-Policy violation(s)") || !strings.Contains(got, "1 console error(s)") {
		t.Errorf("CheckClean reported %q; want the violation and the console error", got)
	}
}

// checkPNG fails t unless file is a PNG image width pixels wide.
func checkPNG(t *testing.T, file string, width int64) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", file, err)
	}
	if got := img.Bounds().Dx(); got != int(width) {
		t.Errorf("screenshot %s is %d px wide; want %d", filepath.Base(file), got, width)
	}
	if img.Bounds().Dy() < 100 {
		t.Errorf("screenshot %s is %d px tall", filepath.Base(file), img.Bounds().Dy())
	}
}

// stopT is a testing.TB whose Skipf and Fatalf record the message and end
// the goroutine, as the real ones do, for a check run in its own goroutine.
type stopT struct {
	testing.TB
	skipped, failed string
}

func (s *stopT) Helper() {}
func (s *stopT) Skipf(format string, args ...any) {
	s.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (s *stopT) Fatalf(format string, args ...any) {
	s.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// start runs Start with t in a goroutine of its own, which Skipf and
// Fatalf end.
func start(t *stopT) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(t)
	}()
	<-done
}

func TestStartWithoutChromium(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "chromium")
	t.Setenv("CHROMIUM", missing)

	t.Run("outside CI the test is skipped, saying what to install", func(t *testing.T) {
		t.Setenv("CI", "")
		st := &stopT{TB: t}
		start(st)
		if st.failed != "" {
			t.Errorf("Start failed: %s", st.failed)
		}
		if got := st.skipped; !strings.Contains(got, missing) || !strings.Contains(got, "make chromium") || !strings.Contains(got, "CI=true") {
			t.Errorf("skipped with %q; want it to name %s, `make chromium` and CI=true", got, missing)
		}
	})
	t.Run("with CI=true the test fails: CI must run the browser tests", func(t *testing.T) {
		t.Setenv("CI", "true")
		st := &stopT{TB: t}
		start(st)
		if st.skipped != "" {
			t.Errorf("Start skipped the test in CI: %s", st.skipped)
		}
		if got := st.failed; !strings.Contains(got, missing) || !strings.Contains(got, "CI=true") {
			t.Errorf("failed with %q; want it to name %s and CI=true", got, missing)
		}
	})
}

// TestNavigationsWaitForAPendingRequest shows the wait an action makes when
// the page says it will navigate (a submit left to the browser) but
// Chromium has not yet sent the request, as happens when its task runs
// after the key press was answered: it waits for the request and then for
// the frame to stop loading, and it waits for nothing when none is pending.
func TestNavigationsWaitForAPendingRequest(t *testing.T) {
	const frame = cdp.FrameID("main")
	n := &navigations{changed: make(chan struct{})}
	listen := n.listen(frame)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	t.Run("nothing pending and nothing requested returns at once", func(t *testing.T) {
		if err := n.waitSettled(ctx, n.count(), false); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a pending navigation is waited for until its page has loaded", func(t *testing.T) {
		before := n.count()
		done := make(chan error, 1)
		go func() { done <- n.waitSettled(ctx, before, true) }()
		select {
		case err := <-done:
			t.Fatalf("returned before the navigation was requested: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		listen(&page.EventFrameRequestedNavigation{FrameID: frame})
		select {
		case err := <-done:
			t.Fatalf("returned before the page had loaded: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		listen(&page.EventFrameStoppedLoading{FrameID: frame})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a pending navigation that never comes fails at the deadline", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if err := n.waitSettled(short, n.count(), true); err == nil {
			t.Fatal("waitSettled returned no error")
		}
	})
}
