package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
)

// ruleSets returns the rule sets of duty-rules-examples.json, by name.
func ruleSets(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../../shared/duty/testdata/duty-rules-examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Rules map[string]struct {
			DutyRules json.RawMessage `json:"duty_rules"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for k, v := range f.Rules {
		out[k] = v.DutyRules
	}
	return out
}

// hashes returns the hash of each version of rules.
func hashes(t *testing.T, rules json.RawMessage) []string {
	t.Helper()
	rs, problems := duty.ParseRules(rules)
	if problems != nil {
		t.Fatal(problems)
	}
	var out []string
	for _, v := range rs {
		out = append(out, v.Hash())
	}
	return out
}

// rulesFixture is a harness whose catalogue holds Karnataka's Sale Deed
// with the rules of KA-SALE-03 and Delhi's legacy Sale Deed, imported.
type rulesFixture struct {
	*articlesFixture
	by map[string]string
	ka json.RawMessage
}

func newRulesFixture(t *testing.T) *rulesFixture {
	t.Helper()
	h := newHarness(t)
	f := &rulesFixture{articlesFixture: &articlesFixture{harness: h, ctx: context.Background(),
		arts: h.db.Articles(h.vars["ARTICLES_TABLE"]), dir: t.TempDir()},
		by: map[string]string{"STAMPDUTY_BY": "asha@example.com"}, ka: ruleSets(t)["Karnataka/Sale Deed"]}
	file := `[{"purpose_name": "Sale Deed", "state": "Karnataka", "duty_rules": ` + string(f.ka) + `},
 {"purpose_name": "Sale Deed", "state": "Delhi", "min": 100, "max": 1000000, "toFollowConsiderationPrice": true, "amountPercentConsideration": 0.06},
 {"purpose_name": "Affidavit", "state": "Karnataka", "min": 20, "max": 20, "fixed": 20, "toFollowConsiderationPrice": false},
 {"purpose_name": "Rent Agreement", "state": "Karnataka", "min": 100, "max": 500, "toFollowConsiderationPrice": false}]`
	h.ok(t, f.by, "articles", "import", f.write(t, "articles.json", file))
	return f
}

// entry returns the stored article of (purpose, state).
func (f *rulesFixture) entry(t *testing.T, purpose, state string) stampduty.CatalogueEntry {
	t.Helper()
	e, err := f.arts.WithLog(f.vars["ARTICLE_LOG_TABLE"]).Entry(f.ctx, purpose, state)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// row returns the row of the quote's table whose first cell is id, split
// at runs of two or more spaces.
func row(out, id string) []string {
	for _, l := range lines(out) {
		if strings.HasPrefix(l, id+"  ") {
			return regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1)
		}
	}
	return nil
}

// TestQuote: stampctl quote prints the explained quote of a schedule and
// of a legacy article, line by line as the engine computed it, aligned,
// and every failing input of a refused quote.
func TestQuote(t *testing.T) {
	f := newRulesFixture(t)
	ka := f.entry(t, "Sale Deed", "Karnataka")

	t.Run("a schedule article: KA-SALE-03, line by line", func(t *testing.T) {
		r := f.ok(t, nil, "quote", "--purpose", "Sale Deed", "--state", "Karnataka", "--date", "2025-09-01",
			"considerationPrice=4000000", "marketValue=4500001", "--input", "locationClass=urban")
		for _, want := range []string{
			"purpose:          Sale Deed\n", "state:            Karnataka\n", "instrument date:  2025-09-01\n", "rule:             schedule\n",
			"citation:         Karnataka Stamp Act Art. 20(1) 5% + additional duty (s.3B) 2% urban / 3% rural of duty + cess 10% of duty <http://karnatakapropertylaws.blogspot.com/2019>\n",
			"hash:             " + hashes(t, f.ka)[0] + "\n",
			"article:          " + ka.DocumentID + ", version 1\n",
			"inputs:           considerationPrice=4000000 marketValue=4500001 locationClass=urban\n",
			"bases:            value = 4500001.00\n",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the quote lacks %q:\n%s", want, r.stdout)
			}
		}
		want := [][]string{
			{"duty", "Stamp duty 5% of value", "value 4500001.00", "0.05", "225000.05", "-", "225000.05"},
			{"additional_urban", "Additional duty 2% of duty", "of duty 225000.05", "0.02", "4500.001", "up to ₹0.01", "4500.01"},
			{"cess", "Cess 10% of duty", "of duty 225000.05", "0.10", "22500.005", "up to ₹0.01", "22500.01"},
			{"rounding", "Total rounded up to ₹1", "-", "-", "-", "-", "0.93"},
			{"TOTAL", "252001.00"},
		}
		for _, w := range want {
			if got := row(r.stdout, w[0]); !slices.Equal(got, w) {
				t.Errorf("row %s = %q, want %q\n%s", w[0], got, w, r.stdout)
			}
		}
		// Aligned: each column starts where its heading does, and the
		// amounts end in one column.
		table := lines(r.stdout[strings.Index(r.stdout, "LINE "):])
		for _, heading := range []string{"LABEL", "BASE", "RATE", "EXACT", "ROUNDING"} {
			at := strings.Index(table[0], heading)
			for _, l := range table[1 : len(table)-1] {
				if col := []rune(l); len(col) < at || (at > 0 && string(col[at-2:at]) != "  ") {
					t.Errorf("column %s (at %d) is not aligned in %q", heading, at, l)
				}
			}
		}
		end := len([]rune(table[0]))
		for _, l := range table {
			if n := len([]rune(l)); n != end {
				t.Errorf("%q ends at %d, the heading at %d", l, n, end)
			}
		}
	})
	t.Run("several papers", func(t *testing.T) {
		r := f.ok(t, nil, "quote", "--purpose", "Sale Deed", "--state", "Karnataka", "--date", "2025-09-01", "--quantity", "2",
			"considerationPrice=4000000", "marketValue=4500001", "locationClass=rural")
		if got := row(r.stdout, "TOTAL"); !slices.Equal(got, []string{"TOTAL", "254251.00"}) || !strings.Contains(r.stdout, "2 papers: total_amount 508502 (amount 254251 each)") {
			t.Errorf("total %q:\n%s", got, r.stdout)
		}
	})
	t.Run("a legacy article: its migrated rule, as the contract priced it", func(t *testing.T) {
		r := f.ok(t, nil, "quote", "--purpose", "Sale Deed", "--state", "Delhi", "considerationPrice=1234567")
		today := duty.TodayInIndia(time.Now())
		for _, want := range []string{"instrument date:  " + today + "\n", "rule:             consideration\n",
			"citation:         migrated: 0.06 of consideration, [100, 1000000] <shared/spec/decisions.md (Amounts)>\n",
			"period:           effectiveFrom null, effectiveTo null\n"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the quote lacks %q:\n%s", want, r.stdout)
			}
		}
		if got, want := row(r.stdout, "duty"), []string{"duty", "0.06 × consideration price", "considerationPrice 1234567.00", "0.06", "74074.02", "-", "74074.02"}; !slices.Equal(got, want) {
			t.Errorf("duty row %q, want %q", got, want)
		}
		if got := row(r.stdout, "TOTAL"); !slices.Equal(got, []string{"TOTAL", "74075.00"}) {
			t.Errorf("total %q:\n%s", got, r.stdout)
		}
	})
	t.Run("a legacy fixed article quotes its amount, however small", func(t *testing.T) {
		r := f.ok(t, nil, "quote", "--purpose", "Affidavit", "--state", "Karnataka")
		if got := row(r.stdout, "duty"); !slices.Equal(got, []string{"duty", "Fixed amount", "-", "-", "20", "-", "20.00"}) {
			t.Errorf("duty row %q:\n%s", got, r.stdout)
		}
		if got := row(r.stdout, "TOTAL"); !slices.Equal(got, []string{"TOTAL", "20.00"}) || !strings.Contains(r.stdout, "rule:             fixed\n") {
			t.Errorf("total %q:\n%s", got, r.stdout)
		}
	})
	t.Run("a legacy range article without an amount quotes none", func(t *testing.T) {
		r := f.ok(t, nil, "quote", "--purpose", "Rent Agreement", "--state", "Karnataka", "--date", "2025-09-01")
		want := "purpose:          Rent Agreement\nstate:            Karnataka\ninstrument date:  2025-09-01\nrule:             range (amount in [100, 500])\n" +
			"no duty: a range article quotes the amount it is given (amount=N, from 100 to 500)\n"
		if r.stdout != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
		}
		if got := row(f.ok(t, nil, "quote", "--purpose", "Rent Agreement", "--state", "Karnataka", "amount=250").stdout, "TOTAL"); !slices.Equal(got, []string{"TOTAL", "250.00"}) {
			t.Errorf("with amount=250: total %q", got)
		}
	})
	t.Run("every failing input is printed with its message", func(t *testing.T) {
		r := f.run(t, "", nil, "quote", "--purpose", "Sale Deed", "--state", "Karnataka", "--date", "2025-09-01",
			"marketValue=abc", "locationClass=suburban")
		wantLines := []string{
			"marketValue: marketValue must be an integer",
			"considerationPrice: considerationPrice is required by the duty rule of Sale Deed in Karnataka in force on 2025-09-01",
			"locationClass: locationClass must be one of: urban, rural",
		}
		for _, want := range wantLines {
			if !strings.Contains(r.stderr, want+"\n") {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "the duty rule: Karnataka Stamp Act") {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("a legacy article's refusal keeps the contract's message", func(t *testing.T) {
		r := f.run(t, "", nil, "quote", "--purpose", "Sale Deed", "--state", "Delhi")
		want := "considerationPrice: The consideration price must be greater than 0 for the selected purpose. Please provide a valid consideration price.\n"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant 1 and %q", r.code, r.stderr, want)
		}
	})
	t.Run("an article that does not exist", func(t *testing.T) {
		r := f.run(t, "", nil, "quote", "--purpose", "Gift Deed", "--state", "Karnataka")
		if r.code != 1 || !strings.Contains(r.stderr, "Purpose with the name: Gift Deed cannot be found.") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("an input that is not one of §3 is a usage error", func(t *testing.T) {
		r := f.run(t, "", nil, "quote", "--purpose", "Sale Deed", "--state", "Karnataka", "price=5")
		if r.code != 2 || !strings.Contains(r.stderr, `"price=5" is not NAME=VALUE`) {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

// TestQuoteHelpNamesEveryInput: the quote's help lists every input of §3.
func TestQuoteHelpNamesEveryInput(t *testing.T) {
	about := commandNamed("quote").about
	for _, name := range duty.InputNames() {
		if !strings.Contains(about, name) {
			t.Errorf("the quote's help does not name the input %s", name)
		}
	}
}

// TestExportKeepsDutyRules: the local catalogue, whose schedule articles
// carry duty_rules, goes through import and export unchanged: a reimport
// of the export changes nothing, a second export is the first, and every
// article's versions keep the hashes the file gave them (the legacy
// articles' derived version included).
func TestExportKeepsDutyRules(t *testing.T) {
	h := newHarness(t)
	f := &articlesFixture{harness: h, ctx: context.Background(), arts: h.db.Articles(h.vars["ARTICLES_TABLE"]), dir: t.TempDir()}
	by := map[string]string{"STAMPDUTY_BY": "asha@example.com"}
	h.ok(t, by, "articles", "import", "../local/articles.json")
	exported := h.ok(t, nil, "articles", "export").stdout
	if again := h.ok(t, by, "articles", "import", f.write(t, "export.json", exported)).stdout; !strings.Contains(again, " 0 created, 0 updated, ") {
		t.Errorf("reimport of the export: %q, want nothing created or updated", again)
	}
	if second := h.ok(t, nil, "articles", "export").stdout; second != exported {
		t.Errorf("a second export differs from the first")
	}
	byKey := func(b []byte) map[string][]string {
		var rows []struct {
			Purpose   string          `json:"purpose_name"`
			State     string          `json:"state"`
			DutyRules json.RawMessage `json:"duty_rules"`
		}
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, r := range rows {
			if r.DutyRules != nil {
				out[r.State+"/"+r.Purpose] = hashes(t, r.DutyRules)
			}
		}
		return out
	}
	file, err := os.ReadFile("../local/articles.json")
	if err != nil {
		t.Fatal(err)
	}
	in, out := byKey(file), byKey([]byte(exported))
	if len(in) < 30 {
		t.Fatalf("the local catalogue has %d articles with duty_rules, want its schedules", len(in))
	}
	for k, want := range in {
		if got := out[k]; !slices.Equal(got, want) {
			t.Errorf("%s: exported versions %v, want the file's %v", k, got, want)
		}
	}
}
