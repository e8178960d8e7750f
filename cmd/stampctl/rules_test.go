package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// putLegacy writes an article as stored before duty rules: no dr, no v.
func (f *rulesFixture) putLegacy(t *testing.T, purpose, state, id, doc string) {
	t.Helper()
	_, err := f.env.Client.PutItem(f.ctx, &dynamodb.PutItemInput{TableName: aws.String(f.vars["ARTICLES_TABLE"]), Item: map[string]types.AttributeValue{
		"purpose_name": &types.AttributeValueMemberS{Value: purpose}, "state": &types.AttributeValueMemberS{Value: state},
		"id": &types.AttributeValueMemberN{Value: id}, "doc": &types.AttributeValueMemberS{Value: doc},
		"min": &types.AttributeValueMemberN{Value: "100"}, "max": &types.AttributeValueMemberN{Value: "2500000"},
		"follow": &types.AttributeValueMemberBOOL{Value: true}, "factor": &types.AttributeValueMemberN{Value: "0.05"},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigrateRules: articles migrate-rules lists the articles stored
// without duty_rules and writes nothing; --apply stores them, logged;
// a second run finds nothing and writes nothing.
func TestMigrateRules(t *testing.T) {
	f := newRulesFixture(t)
	f.putLegacy(t, "Sale Deed", "Maharashtra", "9001", "legacysaledeedmh00000001")
	f.putLegacy(t, "Conveyance", "Goa", "9002", "legacyconveyancegoa00001")
	want := hashes(t, ruleSets(t)["legacy/Maharashtra/Sale Deed"])[0]

	t.Run("the preview lists them and writes nothing", func(t *testing.T) {
		r := f.ok(t, f.by, "articles", "migrate-rules")
		l := lines(r.stdout)
		if len(l) != 4 || !strings.HasPrefix(l[0], "PURPOSE ") || !strings.HasPrefix(l[1], `"Conveyance"`) ||
			!slices.Equal(row(r.stdout, `"Sale Deed"`), []string{`"Sale Deed"`, "Maharashtra", "legacysaledeedmh00000001", "0 → 1", "active",
				"migrated: 0.05 of consideration, [100, 2500000]", want}) ||
			l[3] != "would migrate 2 articles (4 have their duty_rules stored); nothing was written: run it again with --apply" {
			t.Errorf("preview:\n%s", r.stdout)
		}
		if e := f.entry(t, "Sale Deed", "Maharashtra"); !e.RulesDerived || e.Version != 0 {
			t.Errorf("after the preview: derived %v, version %d", e.RulesDerived, e.Version)
		}
		show := f.ok(t, nil, "articles", "rules", "show", "--purpose", "Sale Deed", "--state", "Maharashtra").stdout
		if !strings.Contains(show, "not stored: derived from its amount fields") || !strings.Contains(show, "legacy  "+want) {
			t.Errorf("rules show of a legacy article:\n%s", show)
		}
	})
	t.Run("--apply stores them, each logged with who", func(t *testing.T) {
		r := f.ok(t, f.by, "articles", "migrate-rules", "--apply")
		if !strings.HasSuffix(r.stdout, "migrated 2 articles, each logged as kind migrated by asha@example.com (duty_rules null → its version)\n") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
		if !strings.Contains(r.stderr, "published the catalogue") {
			t.Errorf("no publish: %q", r.stderr)
		}
		e := f.entry(t, "Sale Deed", "Maharashtra")
		if e.RulesDerived || e.Version != 1 || e.Rules[0].Hash() != want || e.Max != 2500000 {
			t.Errorf("stored %+v: want its migrated rule stored at version 1, its amounts kept", e)
		}
		log := lines(f.ok(t, nil, "articles", "log", "Sale Deed", "Maharashtra").stdout)
		if len(log) != 3 || !strings.Contains(log[2], "migrated") || !strings.Contains(log[2], "asha@example.com") ||
			!strings.Contains(log[2], `duty_rules null → [{"citation":{"text":"migrated: 0.05 of consideration`) {
			t.Errorf("log:\n%s", strings.Join(log, "\n"))
		}
	})
	t.Run("a second run finds nothing and writes nothing", func(t *testing.T) {
		before := f.all(t)
		r := f.ok(t, f.by, "articles", "migrate-rules", "--apply")
		if r.stdout != "every article has its duty_rules stored (6 articles): nothing to migrate; nothing was written\n" || r.stderr != "" {
			t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
		}
		if e := f.entry(t, "Sale Deed", "Maharashtra"); e.Version != 1 || f.all(t) != before {
			t.Errorf("the second run wrote: version %d", e.Version)
		}
	})
}

// TestLegacyArticleTakesAVersionOfItsOwn: a migrated legacy article given
// a version of its own with --close-previous keeps its legacy rule for
// the dates before, as the contract priced them.
func TestLegacyArticleTakesAVersionOfItsOwn(t *testing.T) {
	f := newRulesFixture(t)
	own := `{"effectiveFrom": "2026-04-01", "effectiveTo": null, "citation": {"text": "Delhi schedule (illustrative)", "url": "https://example.com/dl"},
 "inputs": {"considerationPrice": {"required": true, "positive": true}},
 "components": [{"id": "duty", "label": "Stamp duty 6% of consideration", "kind": "percent", "base": "considerationPrice", "rate": "0.06"},
  {"id": "surcharge", "label": "Surcharge 1%", "kind": "percent", "base": "considerationPrice", "rate": "0.01"}]}`
	r := f.ok(t, f.by, "articles", "rules", "add-version", "--purpose", "Sale Deed", "--state", "Delhi", "--close-previous", "--file", f.write(t, "own.json", own))
	if !strings.Contains(r.stdout, "0      -           2026-04-01") || !strings.Contains(r.stdout, "1      2026-04-01  -") {
		t.Errorf("add-version:\n%s", r.stdout)
	}
	quote := func(date string) result {
		return f.ok(t, nil, "quote", "--purpose", "Sale Deed", "--state", "Delhi", "--date", date, "considerationPrice=1234567")
	}
	if q := quote("2025-09-01"); !strings.Contains(q.stdout, "rule:             consideration\n") || !slices.Equal(row(q.stdout, "TOTAL"), []string{"TOTAL", "74075.00"}) {
		t.Errorf("the quote of 2025-09-01, by the legacy version:\n%s", q.stdout)
	}
	if q := quote("2026-05-01"); !strings.Contains(q.stdout, "rule:             schedule\n") || !slices.Equal(row(q.stdout, "TOTAL"), []string{"TOTAL", "86420.00"}) {
		t.Errorf("the quote of 2026-05-01, by the article's own version:\n%s", q.stdout)
	}
}

// TestRulesCommands: rules show, edit, add-version and archive, each
// change checked whole (every problem at its path, nothing written on
// one), from the version read, logged and published.
func TestRulesCommands(t *testing.T) {
	f := newRulesFixture(t)
	kaArgs := []string{"--purpose", "Sale Deed", "--state", "Karnataka"}
	rules := func(args ...string) []string {
		return append(append([]string{"articles", "rules"}, args...), kaArgs...)
	}
	var v0 map[string]any
	var vs []map[string]any
	if err := json.Unmarshal(f.ka, &vs); err != nil {
		t.Fatal(err)
	}
	v0 = vs[0]
	file := func(name string, v map[string]any, edit func(string) string) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return f.write(t, name, edit(string(b)))
	}
	same := func(s string) string { return s }
	version := func() int64 { return f.entry(t, "Sale Deed", "Karnataka").Version }

	t.Run("show: each version's period, citation and hash; --json the rules", func(t *testing.T) {
		r := f.ok(t, nil, rules("show")...)
		l := lines(r.stdout)
		if len(l) != 3 || !strings.Contains(l[0], "(documentId ") || !strings.HasSuffix(l[0], "version 1): 1 duty rule version") ||
			!strings.HasPrefix(l[1], "INDEX  FROM  TO  TODAY     KIND  HASH") ||
			l[2] != "0      -     -   in force  own   "+hashes(t, f.ka)[0]+"  Karnataka Stamp Act Art. 20(1) 5% + additional duty (s.3B) 2% urban / 3% rural of duty + cess 10% of duty <http://karnatakapropertylaws.blogspot.com/2019>" {
			t.Errorf("show:\n%s", r.stdout)
		}
		var got, want any
		if err := json.Unmarshal([]byte(f.ok(t, nil, rules("show", "--json")...).stdout), &got); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(f.ka, &want)
		if !jsonEqual(got, want) {
			t.Errorf("--json: %v\nwant %v", got, want)
		}
		one := f.ok(t, nil, rules("show", "--json", "--version-index", "0")...).stdout
		if !strings.HasPrefix(one, "{\n") || !strings.Contains(one, `"citation"`) {
			t.Errorf("--json --version-index 0:\n%s", one)
		}
	})
	t.Run("edit: every problem at its path, nothing written", func(t *testing.T) {
		bad := file("bad.json", v0, func(s string) string {
			s = strings.Replace(s, `"rate":"0.10"`, `"rate":"10%"`, 1)
			return strings.Replace(s, `"label":"Stamp duty 5% of value"`, `"label":""`, 1)
		})
		r := f.run(t, "", f.by, rules("edit", "--version-index", "0", "--file", bad)...)
		for _, want := range []string{"duty_rules[0].components[0].label: ", "duty_rules[0].components[3].rate: ", "nothing was written"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		if r.code != 1 || version() != 1 {
			t.Errorf("exit %d, version %d; want 1 and 1", r.code, version())
		}
	})
	t.Run("edit: a valid version is stored, logged and quoted", func(t *testing.T) {
		// As an admin would: the version as show prints it, changed.
		shown := f.ok(t, nil, rules("show", "--json", "--version-index", "0")...).stdout
		good := f.write(t, "good.json", strings.Replace(shown, `"rate": "0.10"`, `"rate": "0.11"`, 1))
		r := f.ok(t, f.by, rules("edit", "--version-index", "0", "--file", good)...)
		if !strings.HasPrefix(r.stdout, "edited: ") || version() != 2 {
			t.Errorf("stdout %q, version %d", r.stdout, version())
		}
		q := f.ok(t, nil, "quote", "--purpose", "Sale Deed", "--state", "Karnataka", "--date", "2025-09-01",
			"considerationPrice=4000000", "marketValue=4500001", "locationClass=urban")
		if got := row(q.stdout, "cess"); len(got) != 7 || got[6] != "24750.01" {
			t.Errorf("cess row %q after the edit, want 24750.01", got)
		}
		log := lines(f.ok(t, nil, "articles", "log", "Sale Deed", "Karnataka").stdout)
		if !strings.Contains(log[2], "edited") || !strings.Contains(log[2], `"rate":"0.10"`) || !strings.Contains(log[2], `"rate":"0.11"`) {
			t.Errorf("log:\n%s", strings.Join(log, "\n"))
		}
	})
	next := func(from string) map[string]any {
		v := map[string]any{}
		for k, x := range v0 {
			v[k] = x
		}
		v["effectiveFrom"] = from
		return v
	}
	t.Run("add-version: an overlapping period is refused with its path", func(t *testing.T) {
		r := f.run(t, "", f.by, rules("add-version", "--file", file("next.json", next("2026-04-01"), same))...)
		want := "duty_rules[1].effectiveFrom: the period overlaps the period of duty_rules[0]: its effectiveTo must be at most this effectiveFrom\n"
		if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "--close-previous") || version() != 2 {
			t.Errorf("exit %d, version %d, stderr:\n%s\nwant 1, 2 and %q", r.code, version(), r.stderr, want)
		}
	})
	t.Run("add-version --close-previous ends the open version where the new one starts", func(t *testing.T) {
		v := next("2026-04-01")
		v["citation"] = map[string]any{"text": "Karnataka Stamp (Amendment) Act 2026", "url": "https://example.com/ka-2026"}
		before := string(f.entry(t, "Sale Deed", "Karnataka").Rules[0].JSON())
		r := f.ok(t, f.by, rules("add-version", "--close-previous", "--file", file("next.json", v, same))...)
		l := lines(r.stdout)
		if len(l) != 4 || !strings.HasPrefix(l[2], "0      -           2026-04-01") || !strings.HasPrefix(l[3], "1      2026-04-01  -") || version() != 3 {
			t.Errorf("version %d, stdout:\n%s", version(), r.stdout)
		}
		e := f.entry(t, "Sale Deed", "Karnataka")
		if want := strings.Replace(before, `"effectiveTo":null`, `"effectiveTo":"2026-04-01"`, 1); string(e.Rules[0].JSON()) != want || want == before {
			t.Errorf("the closed version is %s\nwant it as it was but its effectiveTo: %s", e.Rules[0].JSON(), want)
		}
		q := f.ok(t, nil, "quote", "--purpose", "Sale Deed", "--state", "Karnataka", "--date", "2026-05-01",
			"considerationPrice=4000000", "marketValue=4500001", "locationClass=urban")
		if !strings.Contains(q.stdout, "hash:             "+e.Rules[1].Hash()) || !strings.Contains(q.stdout, "period:           effectiveFrom 2026-04-01, effectiveTo null") {
			t.Errorf("the quote of 2026-05-01 does not name version 1:\n%s", q.stdout)
		}
	})
	t.Run("a change from an older version is refused", func(t *testing.T) {
		r := f.run(t, "", f.by, rules("archive", "--version-index", "0", "--version", "2")...)
		if r.code != 1 || !strings.Contains(r.stderr, "changed by someone else") || version() != 3 {
			t.Errorf("exit %d, version %d, stderr %q", r.code, version(), r.stderr)
		}
	})
	t.Run("archive removes a version; the change log keeps it", func(t *testing.T) {
		old := f.entry(t, "Sale Deed", "Karnataka").Rules[0]
		r := f.ok(t, f.by, rules("archive", "--version-index", "0", "--version", "3")...)
		e := f.entry(t, "Sale Deed", "Karnataka")
		if len(e.Rules) != 1 || e.Rules[0].Period.From != "2026-04-01" || !strings.HasPrefix(r.stdout, "archived a version") {
			t.Errorf("rules after the archive: %d, stdout:\n%s", len(e.Rules), r.stdout)
		}
		log := lines(f.ok(t, nil, "articles", "log", "Sale Deed", "Karnataka").stdout)
		if !strings.Contains(log[2], string(old.JSON())+",") || !strings.Contains(log[2], "asha@example.com") {
			t.Errorf("the log does not keep the archived version %s:\n%s", old.JSON(), log[2])
		}
		q := f.run(t, "", nil, "quote", "--purpose", "Sale Deed", "--state", "Karnataka", "--date", "2025-09-01",
			"considerationPrice=4000000", "marketValue=4500001", "locationClass=urban")
		if q.code != 1 || !strings.Contains(q.stderr, "instrumentDate: no duty rule of Sale Deed in Karnataka is in force on 2025-09-01") {
			t.Errorf("a quote of the archived period: exit %d, stderr %q", q.code, q.stderr)
		}
	})
	t.Run("the last version cannot be archived", func(t *testing.T) {
		r := f.run(t, "", f.by, rules("archive", "--version-index", "0")...)
		if r.code != 1 || !strings.Contains(r.stderr, "duty_rules: duty_rules must hold at least one version") || version() != 4 {
			t.Errorf("exit %d, version %d, stderr %q", r.code, version(), r.stderr)
		}
	})
}

// jsonEqual reports whether two decoded JSON values are equal.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
