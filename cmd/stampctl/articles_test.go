package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/store"
	"stampduty/shared/testkit"
)

const goodArticles = `[
  {"purpose_name": "Affidavit", "state": "Karnataka", "min": 20, "max": 20, "fixed": 20, "toFollowConsiderationPrice": false, "amountPercentConsideration": null},
  {"purpose_name": "Rent Agreement", "state": "Karnataka", "min": 100, "max": 500, "fixed": null, "toFollowConsiderationPrice": false},
  {"purpose_name": "Sale Deed", "state": "Delhi", "min": 100, "max": 1000000, "toFollowConsiderationPrice": true, "amountPercentConsideration": 0.06}
]`

// articlesFixture runs stampctl against one test's tables, with files
// written to a folder of the test's.
type articlesFixture struct {
	*harness
	ctx   context.Context
	arts  *store.Articles
	dir   string
	first stampduty.Article // the Rent Agreement of Karnataka, as first imported
}

// write writes data to the file name of the folder and returns its path.
func (f *articlesFixture) write(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// all returns the stored articles, encoded as an export writes them.
func (f *articlesFixture) all(t *testing.T) string {
	t.Helper()
	a, err := f.arts.All(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := stampjson.EncodeArticles(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestArticles: stampctl articles imports a catalogue, keeping ids on a
// reimport and writing nothing when a row is invalid, and exports it so that
// an export imports back unchanged.
func TestArticles(t *testing.T) {
	h := newHarness(t)
	f := &articlesFixture{harness: h, ctx: context.Background(), arts: h.db.Articles(h.vars["ARTICLES_TABLE"]), dir: t.TempDir()}
	testkit.Steps(t, f.importCreates, f.reimportUpdatesAndKeepsIDs, f.badRowsWriteNothingAndAreAllReported,
		f.unknownKeyIsRefused, f.malformedFileIsRefused, f.importReadsStdin, f.exportImportRoundTripIsStable,
		f.exportWritesAFile, f.exportOfAnEmptyCatalogueIsAnEmptyArray)
}

func (f *articlesFixture) importCreates(t *testing.T) {
	r := f.mustRun(t, "", "articles", "import", f.write(t, "good.json", goodArticles))
	if got, want := r.stdout, "imported 3 articles: 3 created, 0 updated, 0 unchanged\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	var err error
	if f.first, err = f.arts.Get(f.ctx, "Rent Agreement", "Karnataka"); err != nil {
		t.Fatal(err)
	}
	if f.first.ID == 0 || f.first.DocumentID == "" || f.first.Min != 100 || f.first.Max != 500 || f.first.Fixed != nil {
		t.Errorf("stored article = %+v", f.first)
	}
	sale, err := f.arts.Get(f.ctx, "Sale Deed", "Delhi")
	if err != nil || !sale.FollowsConsideration || sale.Factor == nil || sale.Factor.String() != "0.06" {
		t.Errorf("Sale Deed = %+v, %v", sale, err)
	}
}

func (f *articlesFixture) reimportUpdatesAndKeepsIDs(t *testing.T) {
	changed := strings.Replace(goodArticles, `"max": 500`, `"max": 900`, 1)
	r := f.mustRun(t, "", "articles", "import", f.write(t, "changed.json", changed))
	if got, want := r.stdout, "imported 3 articles: 0 created, 1 updated, 2 unchanged\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	got, err := f.arts.Get(f.ctx, "Rent Agreement", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	if got.Max != 900 || got.ID != f.first.ID || got.DocumentID != f.first.DocumentID {
		t.Errorf("after reimport %+v, before %+v", got, f.first)
	}
}

func (f *articlesFixture) badRowsWriteNothingAndAreAllReported(t *testing.T) {
	before := f.all(t)
	bad := `[
  {"purpose_name": "Affidavit", "state": "Karnataka", "min": 20, "max": 99, "fixed": 20, "toFollowConsiderationPrice": false},
  {"purpose_name": "Affidavit", "state": "Atlantis", "min": 20, "max": 20, "fixed": 20, "toFollowConsiderationPrice": false},
  {"purpose_name": "Lease", "state": "Delhi", "min": 50, "max": 20, "toFollowConsiderationPrice": false},
  {"purpose_name": "Gift Deed", "state": "Delhi", "min": 0, "max": 20, "fixed": 30, "toFollowConsiderationPrice": true, "amountPercentConsideration": 1.5},
  {"purpose_name": "Will", "state": "Delhi", "min": -1, "max": 20, "toFollowConsiderationPrice": true},
  {"purpose_name": "Affidavit", "state": "Karnataka", "min": 1, "max": 2, "toFollowConsiderationPrice": false}
]`
	r := f.run(t, "", nil, "articles", "import", f.write(t, "bad.json", bad))
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	for _, want := range []string{
		"[1].state: ",
		"[2].max: ",
		"[3].fixed: ",
		"[3].amountPercentConsideration: ",
		"[4].min: ",
		"[4].amountPercentConsideration: ",
		"[5].purpose_name: ",
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `\S`).MatchString(r.stderr) {
			t.Errorf("stderr has no line %q...:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "stampctl: ") || !strings.Contains(r.stderr, "5 articles are invalid") ||
		!strings.Contains(r.stderr, "nothing was imported") {
		t.Errorf("stderr has no summary:\n%s", r.stderr)
	}
	if regexp.MustCompile(`(?m)^\[0\]`).MatchString(r.stderr) {
		t.Errorf("the valid row [0] is reported:\n%s", r.stderr)
	}
	if after := f.all(t); after != before {
		t.Errorf("the articles changed:\nbefore\n%s\nafter\n%s", before, after)
	}
}

func (f *articlesFixture) unknownKeyIsRefused(t *testing.T) {
	before := f.all(t)
	withExtra := strings.Replace(goodArticles, `"max": 500,`, `"max": 500, "colour": "red",`, 1)
	r := f.run(t, withExtra, nil, "articles", "import", "-")
	if r.code != 1 || !strings.Contains(r.stderr, "[1].colour: colour is not an allowed field") {
		t.Errorf("exit %d, stderr %q; want 1 and [1].colour", r.code, r.stderr)
	}
	if after := f.all(t); after != before {
		t.Errorf("the articles changed")
	}
}

func (f *articlesFixture) malformedFileIsRefused(t *testing.T) {
	for in, want := range map[string]string{
		"[\n  {\"min\": 1,}\n]": "line 2, column 13",
		`{}`:                    "must be a JSON array",
		"":                      "not valid JSON",
	} {
		r := f.run(t, in, nil, "articles", "import", "-")
		if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("import %q: exit %d, stderr %q; want 1 and one line with %q", in, r.code, r.stderr, want)
		}
	}
}

func (f *articlesFixture) importReadsStdin(t *testing.T) {
	more := `[{"purpose_name": "Indemnity Bond", "state": "West Bengal", "min": 10, "max": 500, "toFollowConsiderationPrice": false}]`
	r := f.mustRun(t, more, "articles", "import", "-")
	if got, want := r.stdout, "imported 1 articles: 1 created, 0 updated, 3 unchanged\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if _, err := f.arts.Get(f.ctx, "Indemnity Bond", "West Bengal"); err != nil {
		t.Errorf("Get = %v", err)
	}
}

func (f *articlesFixture) exportImportRoundTripIsStable(t *testing.T) {
	exported := f.mustRun(t, "", "articles", "export").stdout
	if exported != f.all(t) {
		t.Errorf("export differs from the stored articles:\n%s", exported)
	}
	if _, err := stampjson.DecodeArticles([]byte(exported)); err != nil {
		t.Fatalf("export does not decode: %v", err)
	}
	r := f.mustRun(t, "", "articles", "import", f.write(t, "export.json", exported))
	if got, want := r.stdout, "imported 4 articles: 0 created, 0 updated, 4 unchanged\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if again := f.mustRun(t, "", "articles", "export").stdout; again != exported {
		t.Errorf("second export differs:\nfirst\n%s\nsecond\n%s", exported, again)
	}
}

func (f *articlesFixture) exportWritesAFile(t *testing.T) {
	p := filepath.Join(f.dir, "out.json")
	r := f.mustRun(t, "", "articles", "export", p)
	if !strings.Contains(r.stdout, "exported 4 articles") {
		t.Errorf("stdout = %q", r.stdout)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != f.all(t) {
		t.Errorf("file = %q, %v", b, err)
	}
}

func (f *articlesFixture) exportOfAnEmptyCatalogueIsAnEmptyArray(t *testing.T) {
	r := newHarness(t).run(t, "", nil, "articles", "export")
	if r.code != 0 || r.stdout != "[]\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and []", r.code, r.stdout, r.stderr)
	}
}

// TestArticlesPublish: a stack whose articles were imported before
// catalogue snapshots has none; `stampctl articles publish` publishes the
// articles table, and publishing it again unchanged keeps the version and
// writes nothing.
func TestArticlesPublish(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	arts, err := stampjson.DecodeArticles([]byte(goodArticles))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.db.Articles(h.vars["ARTICLES_TABLE"]).Upsert(ctx, h.db.IDs(h.vars["COUNTERS_TABLE"], 10), arts); err != nil {
		t.Fatal(err)
	}
	cat := h.db.Catalogue(h.vars["CATALOGUE_TABLE"])
	if _, has, err := cat.Current(ctx, true); err != nil || has {
		t.Fatalf("before publishing: snapshot %v, %v", has, err)
	}
	r := h.mustRun(t, "", "articles", "publish")
	s, has, err := cat.Current(ctx, true)
	if err != nil || !has || s.Articles != 3 || s.Pages != 1 {
		t.Fatalf("published %+v, %v, %v", s, has, err)
	}
	if want := "published the catalogue: version " + s.Version + ", 3 articles"; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr = %q, want %q…", r.stderr, want)
	}
	h.mustRun(t, "", "articles", "publish")
	if again, _, err := cat.Current(ctx, true); err != nil || again != s {
		t.Errorf("republished unchanged: %+v, %v; was %+v", again, err, s)
	}
}
