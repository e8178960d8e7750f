package main

import (
	"context"
	"strings"
	"testing"
)

// TestArticlesAdmin: stampctl adds, edits and retires articles, each change
// logged with who made it, and previews an import without writing.
func TestArticlesAdmin(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	arts := h.db.Articles(h.vars["ARTICLES_TABLE"])
	by := map[string]string{"STAMPDUTY_BY": "asha@example.com"}

	t.Run("add, edit and retire, each logged with who", func(t *testing.T) {
		h.ok(t, by, "articles", "add", "Gift Deed", "Goa", "--min", "10", "--max", "500")
		r := h.ok(t, by, "articles", "edit", "Gift Deed", "Goa", "--max", "800", "--fixed", "300", "--by", "ravi@example.com")
		if !strings.Contains(r.stdout, "max 800, fixed 300") {
			t.Errorf("edit printed %q", r.stdout)
		}
		h.ok(t, by, "articles", "retire", "Gift Deed", "Goa")
		if _, err := arts.Get(ctx, "Gift Deed", "Goa"); err == nil {
			t.Error("the retired article can still be ordered")
		}
		log := lines(h.ok(t, by, "articles", "log", "Gift Deed", "Goa").stdout)
		if len(log) != 5 || !strings.Contains(log[2], "retired") || !strings.Contains(log[2], "asha@example.com") ||
			!strings.Contains(log[3], "ravi@example.com") || !strings.Contains(log[3], "max 500 → 800; fixed null → 300") ||
			!strings.Contains(log[4], "added") {
			t.Errorf("log:\n%s", strings.Join(log, "\n"))
		}
		if !strings.Contains(h.ok(t, by, "articles", "list").stdout, "retired") {
			t.Error("articles list does not show the retired article")
		}
	})
	t.Run("an edit from an older version is refused", func(t *testing.T) {
		h.ok(t, by, "articles", "add", "Lease", "Goa", "--max", "100")
		r := h.run(t, "", by, "articles", "edit", "Lease", "Goa", "--max", "200", "--version", "0")
		if r.code != 1 || !strings.Contains(r.stderr, "changed by someone else") {
			t.Errorf("exit %d, stderr %q; want 1 and the conflict", r.code, r.stderr)
		}
	})
	t.Run("import --dry-run prints the plan and writes nothing", func(t *testing.T) {
		dir := t.TempDir()
		f := &articlesFixture{harness: h, dir: dir}
		file := f.write(t, "a.json", `[{"purpose_name": "Lease", "state": "Goa", "min": 0, "max": 300, "toFollowConsiderationPrice": false},
 {"purpose_name": "Bond", "state": "Goa", "min": 0, "max": 50, "toFollowConsiderationPrice": false}]`)
		r := h.ok(t, by, "articles", "import", "--dry-run", "--retire-missing", file)
		for _, want := range []string{"change  \"Lease\"", "max 100 → 300", "add     \"Bond\"", "would add 1, change 1, retire 0, leave 1; nothing was written"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("preview lacks %q:\n%s", want, r.stdout)
			}
		}
		if _, err := arts.Get(ctx, "Bond", "Goa"); err == nil {
			t.Error("the dry run wrote an article")
		}
	})
}
