package browser

import (
	"os"
	"path/filepath"
	"regexp"

	"github.com/chromedp/chromedp"
)

// ScreenshotsDir returns the folder screenshots go to: $SCREENSHOTS_DIR
// when set (a relative one is taken from the module root, as make runs
// from there, not from the test's package), else .build/screenshots under
// the module root (kept out of git with the rest of .build, and removed by
// make clean).
func (b *Browser) ScreenshotsDir() string { return ScreenshotsDir(b.root) }

// ScreenshotsDir returns the folder screenshots go to for the module whose
// root is root (see Browser.ScreenshotsDir), for a test that drives another
// browser (cmd/local's Firefox test) and writes its screenshots beside
// Chromium's.
func ScreenshotsDir(root string) string {
	d := os.Getenv("SCREENSHOTS_DIR")
	switch {
	case d == "":
		return filepath.Join(root, ".build", "screenshots")
	case filepath.IsAbs(d):
		return d
	}
	return filepath.Join(root, d)
}

// ScreenshotsFolder returns the folder of test name's screenshots under
// ScreenshotsDir(root), named as Page.Screenshot names it.
func ScreenshotsFolder(root, name string) string {
	return filepath.Join(ScreenshotsDir(root), unsafeName.ReplaceAllString(name, "_"))
}

// unsafeName matches what a file name keeps out: anything but letters,
// digits, dot, dash and underscore (a test's subtests stay folders).
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._/-]+`)

// Screenshot writes a PNG of the whole page (beyond the viewport, as tall
// as the page) to ScreenshotsDir/<test name>/<name>-<viewport>.png, for
// example .build/screenshots/TestConsole/queue-phone.png, replacing one a
// previous run wrote, and returns its path.
func (p *Page) Screenshot(name string) string {
	p.t.Helper()
	png, err := run(p, chromedp.FullScreenshot(100)) // quality 100 is PNG
	if err != nil {
		p.t.Fatalf("browser: screenshot %q: %v", name, err)
	}
	file := filepath.Join(ScreenshotsFolder(p.b.root, p.t.Name()),
		unsafeName.ReplaceAllString(filepath.Base(name), "_")+"-"+p.viewport.Name+".png")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		p.t.Fatalf("browser: screenshot %q: %v", name, err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		p.t.Fatalf("browser: screenshot %q: %v", name, err)
	}
	return file
}
