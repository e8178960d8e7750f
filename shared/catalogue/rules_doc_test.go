package catalogue_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
)

// leaseVersion is a rule version of the article's own: 1% of the rent
// for the term, at least ₹100, cited (its effectiveFrom and rate as given).
func leaseVersion(from, rate string) string {
	return fmt.Sprintf(`{"effectiveFrom": %s, "effectiveTo": null,
  "citation": {"text": "Karnataka Stamp Act Art. 30", "url": "https://example.in/ka/30"},
  "inputs": {"monthlyRent": {"required": true, "positive": true}, "termMonths": {"required": true, "min": "1", "max": "60"}},
  "bases": {"rent": {"mul": [{"input": "monthlyRent"}, {"input": "termMonths"}]}},
  "components": [{"id": "duty", "label": "1%% of the rent for the term", "kind": "percent", "base": "rent", "rate": %q}],
  "total": {"min": "100"}}`, from, rate)
}

// fieldPaths returns err's fields' paths, dotted.
func fieldPaths(t *testing.T, err error) []string {
	t.Helper()
	var e *stampduty.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v: want a *stampduty.Error", err)
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Path)
	}
	return out
}

// TestEditRules: an admin's save of an article's duty_rules (a version
// edited, added or archived) is checked whole before anything is read,
// every problem at its path under duty_rules; a good one is stored from
// the version read, logged and published, the legacy fields becoming its
// projection; only the migration writes a legacy version.
func TestEditRulesByDoc(t *testing.T) {
	w := newWorld(t)
	old, err := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	migrated, err := old.DutyRules()
	if err != nil {
		t.Fatal(err)
	}
	legacy := string(migrated[0].JSON())
	edit := func(version int64, rules ...string) (stampduty.CatalogueEntry, error) {
		return w.admin.EditRulesByDoc(w.ctx, "asha@example.com", old.DocumentID, version, []byte("["+strings.Join(rules, ",")+"]"))
	}

	t.Run("EveryProblemAtOnceAndNothingRead", func(t *testing.T) {
		db, proxy := w.env.ProxiedDB()
		admin := *w.admin
		admin.Articles = db.Articles(w.env.Table("ArticlesTable")).WithLog(w.env.Table("ArticleLogTable"))
		bad := strings.Replace(leaseVersion(`"2026-12-01"`, "12"), `"min": "1"`, `"min": 1`, 1)
		_, err := admin.EditRulesByDoc(w.ctx, "asha@example.com", old.DocumentID, old.Version,
			[]byte("["+strings.Replace(legacy, `"effectiveTo":null`, `"effectiveTo":"2026-12-01"`, 1)+","+bad+"]"))
		wantCode(t, err, stampduty.EINVALID)
		if got, want := fieldPaths(t, err), []string{"duty_rules[1].inputs.termMonths.min", "duty_rules[1].components[0].rate"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("paths %q, want %q", got, want)
		}
		var e *stampduty.Error
		errors.As(err, &e)
		if got := fmt.Sprint(e.Fields[1].Where); got != "[duty_rules 1 components 0 rate]" {
			t.Errorf("where %s, want [duty_rules 1 components 0 rate]", got)
		}
		if calls := proxy.Take(); len(calls) != 0 {
			t.Errorf("%d DynamoDB calls for rules that fail", len(calls))
		}
	})
	t.Run("NoVersionIsRefused", func(t *testing.T) {
		_, err := edit(old.Version)
		wantCode(t, err, stampduty.EINVALID)
		if !strings.Contains(err.Error(), "duty_rules must hold at least one version: retire the article") {
			t.Errorf("error %v; want it to say to retire the article instead", err)
		}
	})
	t.Run("ALegacyVersionOfTheAdminsIsRefused", func(t *testing.T) {
		forged := strings.Replace(leaseVersion("null", "0.01"), `"effectiveTo": null,`, `"effectiveTo": null, "legacy": true,`, 1)
		_, err := edit(old.Version, forged)
		wantCode(t, err, stampduty.EINVALID)
		if got := fieldPaths(t, err); fmt.Sprint(got) != "[duty_rules[0].legacy]" {
			t.Errorf("paths %q, want [duty_rules[0].legacy]", got)
		}
		// The migrated version changed, alone: its amounts say what it is.
		_, err = edit(old.Version, strings.Replace(legacy, `"effectiveTo":null`, `"effectiveTo":"2026-12-01"`, 1))
		wantCode(t, err, stampduty.EINVALID)
	})
	t.Run("TheRulesAsTheyAreChangeNothing", func(t *testing.T) {
		e, err := edit(old.Version, legacy)
		if err != nil || e.Version != old.Version {
			t.Errorf("EditRules(the article's own) = version %d, %v; want %d unchanged", e.Version, err, old.Version)
		}
	})
	var saved stampduty.CatalogueEntry
	t.Run("ANewVersionEndsTheMigratedOne", func(t *testing.T) {
		var err error
		saved, err = edit(old.Version, strings.Replace(legacy, `"effectiveTo":null`, `"effectiveTo":"2026-12-01"`, 1), leaseVersion(`"2026-12-01"`, "0.01"))
		if err != nil {
			t.Fatal(err)
		}
		if saved.Version != old.Version+1 || !saved.Schedule() || len(saved.Rules) != 2 || saved.Rules[1].Period.From != "2026-12-01" {
			t.Errorf("saved %+v; want the two versions at version %d", saved, old.Version+1)
		}
		// The legacy fields are the projection of the day (2026-11-27,
		// the migrated range): min 0 and max the most, no fixed amount.
		if saved.Min != 0 || saved.Max != stampduty.MaxAmount || saved.Fixed != nil || saved.FollowsConsideration {
			t.Errorf("projection %d–%d fixed %v follows %v; want 0–%d", saved.Min, saved.Max, saved.Fixed, saved.FollowsConsideration, stampduty.MaxAmount)
		}
		log := w.log(t, "Rent Agreement", "Karnataka")
		if len(log) != 1 || log[0].By != "asha@example.com" || log[0].Kind != stampduty.ArticleEdited {
			t.Fatalf("log %+v; want the edit by asha", log)
		}
		var fields []string
		for _, c := range log[0].Changes {
			fields = append(fields, c.Field)
			if c.Field == "duty_rules" && (c.Before != "null" || !strings.Contains(c.After, `"rate":"0.01"`)) {
				t.Errorf("duty_rules %s → %s; want null → the versions", c.Before, c.After)
			}
		}
		if !strings.Contains(fmt.Sprint(fields), "duty_rules") {
			t.Errorf("changes %v; want duty_rules among them", fields)
		}
		if got, ok := w.published(t, "Rent Agreement", "Karnataka"); !ok || len(got.Rules) != 2 {
			t.Errorf("published %+v; want its two versions", got)
		}
	})
	t.Run("AStaleVersionIsConflict", func(t *testing.T) {
		now, err := edit(old.Version, leaseVersion("null", "0.015"))
		wantCode(t, err, stampduty.ECONFLICT)
		if now.Version != saved.Version {
			t.Errorf("the conflict answers version %d; want the article as it is, %d", now.Version, saved.Version)
		}
	})
	t.Run("ArchivingAVersionLeavesItInTheLog", func(t *testing.T) {
		e, err := edit(saved.Version, leaseVersion(`"2026-12-01"`, "0.01"))
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Rules) != 1 || e.Rules[0].Period.From != "2026-12-01" {
			t.Errorf("%d rules; want the one version left", len(e.Rules))
		}
		if c := w.log(t, "Rent Agreement", "Karnataka")[0].Changes; len(c) != 1 || !strings.Contains(c[0].Before, `"legacy":true`) {
			t.Errorf("the archive's change %+v; want duty_rules before it held the migrated version", c)
		}
	})
	t.Run("AnUnknownArticleIsNotFound", func(t *testing.T) {
		_, err := w.admin.EditRulesByDoc(w.ctx, "asha@example.com", "zzzzzzzzzzzzzzzzzzzzzzzz", 1, []byte("["+leaseVersion("null", "0.01")+"]"))
		wantCode(t, err, stampduty.ENOTFOUND)
	})
}

// TestTryRule: an edited version of an article is quoted for its inputs
// as the quote would (the rule naming the article and its version), and
// nothing is written.
func TestTryRule(t *testing.T) {
	w := newWorld(t)
	old, err := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	v, errs := stampduty.ReadRuleVersion("rule", []byte(leaseVersion("null", "0.01")))
	if errs != nil {
		t.Fatal(errs)
	}
	in, formErrs := stampduty.ReadInputs([]stampduty.Field{
		{Name: "monthlyRent", Value: stampduty.Value{Kind: stampduty.Number, Text: "25000"}},
		{Name: "termMonths", Value: stampduty.Value{Kind: stampduty.Number, Text: "11"}},
	}, stampduty.Value{Kind: stampduty.Absent})
	q, err := w.admin.TryRule(w.ctx, old.DocumentID, v, in, formErrs)
	if err != nil {
		t.Fatal(err)
	}
	if q.Amount == nil || *q.Amount != 2750 || q.Duty.InstrumentDate != "2026-11-27" || q.Duty.Rule.Article != old.DocumentID || q.Duty.Rule.ArticleVersion != old.Version {
		t.Errorf("quote %+v (rule %+v); want 2750 on 2026-11-27 naming the article at version %d", q, q.Duty.Rule, old.Version)
	}
	if got := w.log(t, "Rent Agreement", "Karnataka"); len(got) != 0 {
		t.Errorf("a preview logged %+v", got)
	}
	_, err = w.admin.TryRule(w.ctx, "zzzzzzzzzzzzzzzzzzzzzzzz", v, in, formErrs)
	wantCode(t, err, stampduty.ENOTFOUND)
}

// TestAmountEditKeepsRules: an article with rules of its own cannot lose
// them to an edit of its amount fields (its amounts are their projection):
// the edit is refused and nothing is written.
func TestAmountEditKeepsRules(t *testing.T) {
	w := newWorld(t)
	old, err := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	e, err := w.admin.EditRulesByDoc(w.ctx, "asha@example.com", old.DocumentID, old.Version, []byte("["+leaseVersion("null", "0.01")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	art := rent()
	art.Max = 800
	_, err = w.admin.Edit(w.ctx, "ravi@example.com", e.Version, art)
	if got, want := fmt.Sprint(fieldPaths(t, err)), "[duty_rules]"; got != want {
		t.Errorf("paths %s, want %s (%v)", got, want, err)
	}
	now, err := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
	if err != nil || now.Version != e.Version || !now.Schedule() {
		t.Errorf("stored version %d, schedule %v (%v); want version %d with its rules", now.Version, now.Schedule(), err, e.Version)
	}
}
