package stampduty

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"stampduty/shared/duty"
)

// womenRule is a version of Maharashtra's conveyance (duty-rules.md §12,
// MH-SALE-02), as an admin edits it.
const womenRule = `{
  "effectiveFrom": "2021-04-01", "effectiveTo": "2022-04-01",
  "citation": {"text": "Art. 25(b); women's 1% remission", "url": "https://example.in/mh"},
  "inputs": {"considerationPrice": {"required": true, "positive": true}, "marketValue": {"required": true},
             "partyCategory": {"required": true, "values": ["male", "female"]}},
  "bases": {"value": {"max": [{"input": "considerationPrice"}, {"input": "marketValue"}]}},
  "components": [
    {"id": "duty", "label": "Stamp duty 5% of value", "kind": "percent", "base": "value", "rate": "0.05"},
    {"id": "women", "label": "Women purchasers' remission 1%", "kind": "percent", "base": "value", "rate": "-0.01",
     "when": {"partyCategory": ["female"]}}]}`

// wheres returns the errors' paths as JSON writes them, and their messages.
func wheres(errs []FieldError) (paths, msgs []string) {
	for _, e := range errs {
		where := e.Where
		if where == nil {
			where = []any{e.Path}
		}
		paths = append(paths, fmt.Sprintf("%v", where))
		msgs = append(msgs, e.Message)
	}
	return paths, msgs
}

func where(path ...any) string { return fmt.Sprintf("%v", path) }

// TestReadRuleVersion: an edited version is read with every problem of
// §2–§5 and §11 at its path under "rule", the enum combinations and the
// probe included; a good one has none.
func TestReadRuleVersion(t *testing.T) {
	if v, errs := ReadRuleVersion("rule", []byte(womenRule)); errs != nil || v == nil {
		t.Fatalf("ReadRuleVersion(womenRule) = %v, %v; want the version", v, errs)
	}
	for _, tc := range []struct {
		name string
		swap []string // old, new, … (strings.NewReplacer)
		want []string // paths
		says string   // a message holds it
	}{
		{"ARateThatIsNotAFraction", []string{`"rate": "0.05"`, `"rate": "5"`}, []string{where("rule", "components", 0, "rate")}, "rate must be a fraction from -1 to 1"},
		{"ARateThatIsANumber", []string{`"rate": "-0.01"`, `"rate": -0.01`}, []string{where("rule", "components", 1, "rate")}, "not a JSON number"},
		{"TwoAtOnce", []string{`"label": "Stamp duty 5% of value", "kind": "percent", "base": "value", "rate": "0.05"`,
			`"label": "", "kind": "percent", "base": "nothing", "rate": "0.05"`},
			[]string{where("rule", "components", 0, "label"), where("rule", "components", 0, "base")}, "label"},
		{"AProbeBelowZero", []string{`{"id": "duty", "label": "Stamp duty 5% of value", "kind": "percent", "base": "value", "rate": "0.05"},`,
			`{"id": "duty", "label": "Stamp duty 5% of value", "kind": "percent", "base": "value", "rate": "0.05", "when": {"partyCategory": ["male"]}},`},
			[]string{where("rule")}, "the probe breaks the rule: the total is -9999999999999.00 when partyCategory is female"},
		{"ACombinationWithoutAComponent", []string{`"values": ["male", "female"]`, `"values": ["male", "female", "trust"]`,
			`"rate": "0.05"}`, `"rate": "0.05", "when": {"partyCategory": ["male", "female"]}}`},
			[]string{where("rule", "components")}, "partyCategory is trust"},
		{"NotAnObject", []string{womenRule, `[]`}, []string{where("rule")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer(tc.swap...).Replace(womenRule)
			for i := 0; i < len(tc.swap); i += 2 {
				if !strings.Contains(womenRule, tc.swap[i]) {
					t.Fatalf("%q is not in the rule", tc.swap[i])
				}
			}
			v, errs := ReadRuleVersion("rule", []byte(src))
			if v != nil || errs == nil {
				t.Fatalf("ReadRuleVersion = %v, no error; want the problem", v)
			}
			paths, msgs := wheres(errs)
			if tc.want != nil && !reflect.DeepEqual(paths, tc.want) {
				t.Errorf("paths %q, want %q (%q)", paths, tc.want, msgs)
			}
			for _, p := range paths {
				if !strings.HasPrefix(p, "[rule") {
					t.Errorf("path %q is not under rule", p)
				}
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.says) {
				t.Errorf("messages %q; want one saying %q", msgs, tc.says)
			}
		})
	}
}

// TestReadInputs: a preview's inputs are read as a create reads them,
// every refused one at its path under inputs, null as not sent.
func TestReadInputs(t *testing.T) {
	num := func(s string) Value { return Value{Kind: Number, Text: s} }
	str := func(s string) Value { return Value{Kind: String, Text: s} }
	in, errs := ReadInputs([]Field{
		{Name: "considerationPrice", Value: num("8000000")}, {Name: "partyCategory", Value: str("female")},
		{Name: "marketValue", Value: Value{Kind: Null}},
	}, str("2021-09-01"))
	if errs != nil {
		t.Fatalf("errors %v", errs)
	}
	if got := fmt.Sprintf("%v %v %s", in.Numbers, in.Enums, in.Date); got != "map[considerationPrice:8000000] map[partyCategory:female] 2021-09-01" {
		t.Errorf("read %s", got)
	}
	in, errs = ReadInputs([]Field{
		{Name: "considerationPrice", Value: num("1.5")}, {Name: "partyCategory", Value: num("1")},
		{Name: "colour", Value: str("red")}, {Name: "termMonths", Value: num("-1")}, {Name: "termMonths", Value: num("2")},
		{Name: "amount", Value: num("1000000000000000")},
	}, str("1 Sep 2021"))
	paths, msgs := wheres(errs)
	want := []string{where("inputs", "considerationPrice"), where("inputs", "partyCategory"), where("inputs", "colour"),
		where("inputs", "termMonths"), where("inputs", "termMonths"), where("inputs", "amount"), where("instrumentDate")}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	for _, m := range []string{"considerationPrice must be an integer", "partyCategory must be a string", "colour is not an input of duty rules",
		"termMonths must be greater than or equal to 0", "termMonths is given more than once", "amount must be at most 999999999999999",
		"instrumentDate must be a date (YYYY-MM-DD)"} {
		if !strings.Contains(strings.Join(msgs, "\n"), m) {
			t.Errorf("messages %q; want %q", msgs, m)
		}
	}
	for _, name := range []string{"considerationPrice", "partyCategory", "termMonths", "amount", "instrumentDate"} {
		if !in.Malformed[name] {
			t.Errorf("%s is not marked malformed", name)
		}
	}
}

// TestQuoteVersion: the edited version quotes exactly as the quote would,
// its rule naming the article and the version's hash; its refusals name
// the preview's fields, every one at once.
func TestQuoteVersion(t *testing.T) {
	v, errs := ReadRuleVersion("rule", []byte(womenRule))
	if errs != nil {
		t.Fatal(errs)
	}
	art := Article{DocumentID: "d4k0console0000000000000", PurposeName: "Sale Deed", State: "Maharashtra", CatalogueVersion: 3, Min: 0, Max: MaxAmount}
	read := func(date string, fields ...Field) (duty.Request, []FieldError) {
		d := Value{Kind: Absent}
		if date != "" {
			d = Value{Kind: String, Text: date}
		}
		return ReadInputs(fields, d)
	}
	num := func(name, s string) Field { return Field{Name: name, Value: Value{Kind: Number, Text: s}} }
	enum := func(name, s string) Field { return Field{Name: name, Value: Value{Kind: String, Text: s}} }

	t.Run("TheLinesOfAQuote", func(t *testing.T) {
		in, formErrs := read("2021-09-01", num("considerationPrice", "8000000"), num("marketValue", "9000000"), enum("partyCategory", "female"))
		q, err := art.QuoteVersion(v, in, formErrs, "2026-01-01")
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range q.Duty.Lines {
			lines = append(lines, l.ID+" "+l.BaseAmount+" "+l.Rate+" "+l.Amount)
		}
		if want := []string{"duty 9000000.00 0.05 450000.00", "women 9000000.00 -0.01 -90000.00"}; !reflect.DeepEqual(lines, want) {
			t.Errorf("lines %q, want %q", lines, want)
		}
		if q.Rule != RuleSchedule || q.Amount == nil || *q.Amount != 360000 || q.Duty.Total != "360000.00" || q.Quantity != 1 {
			t.Errorf("quote %+v; want a schedule's 360000", q)
		}
		if r := q.Duty.Rule; r.Article != art.DocumentID || r.ArticleVersion != 3 || r.Hash != v.Hash() || r.Citation == nil || r.Citation.URL != "https://example.in/mh" {
			t.Errorf("rule %+v; want the article, its version 3 and the edited version's hash %s", r, v.Hash())
		}
	})
	t.Run("EveryRefusalAtOnceAtItsField", func(t *testing.T) {
		in, formErrs := read("2021-09-01", num("considerationPrice", "abc"), enum("partyCategory", "joint"))
		_, err := art.QuoteVersion(v, in, formErrs, "2026-01-01")
		e := asError(err)
		if e == nil || e.Code != EINVALID {
			t.Fatalf("error %v; want invalid", err)
		}
		paths, msgs := wheres(e.Fields)
		if want := []string{where("inputs", "considerationPrice"), where("inputs", "marketValue"), where("inputs", "partyCategory")}; !reflect.DeepEqual(paths, want) {
			t.Errorf("paths %q, want %q (%q)", paths, want, msgs)
		}
		if !strings.Contains(e.Message, "marketValue is required by the duty rule of Sale Deed in Maharashtra in force on 2021-09-01") ||
			!strings.Contains(e.Message, "partyCategory must be one of: male, female") {
			t.Errorf("message %q; want the quote's", e.Message)
		}
		if e.DutyRule == nil || e.DutyRule.Hash != v.Hash() {
			t.Errorf("details.dutyRule %+v; want the edited version", e.DutyRule)
		}
	})
	t.Run("ADayOutsideTheVersion", func(t *testing.T) {
		in, formErrs := read("", num("considerationPrice", "8000000"), num("marketValue", "9000000"), enum("partyCategory", "male"))
		_, err := art.QuoteVersion(v, in, formErrs, "2026-01-01")
		e := asError(err)
		if e == nil || len(e.Fields) != 1 || e.Fields[0].Path != "instrumentDate" ||
			!strings.Contains(e.Message, "instrumentDate 2026-01-01 is outside this version's period (from 2021-04-01 until 2022-04-01 (not included))") {
			t.Errorf("error %v; want instrumentDate outside the version's period, today being the default", err)
		}
	})
}

func TestPeriodText(t *testing.T) {
	for _, tc := range []struct {
		p    duty.Period
		want string
	}{
		{duty.Period{}, "always"},
		{duty.Period{To: "2022-04-01"}, "until 2022-04-01 (not included)"},
		{duty.Period{From: "2022-04-01"}, "from 2022-04-01"},
		{duty.Period{From: "2021-04-01", To: "2022-04-01"}, "from 2021-04-01 until 2022-04-01 (not included)"},
	} {
		if got := PeriodText(tc.p); got != tc.want {
			t.Errorf("PeriodText(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
