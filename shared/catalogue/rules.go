package catalogue

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
)

// The workflows of an article's duty_rules (duty-rules.md §9, §11): the
// migration that stores the one version a legacy article's fields give
// it, and an edit of the versions, checked whole.

// Migration is what `stampctl articles migrate-rules` would do: each
// article stored without duty_rules (RulesDerived), as read, sorted by
// purpose_name and state, and how many articles have rules stored
// already. It holds the versions it read: MigrateRules applies it only to
// the articles as they were.
type Migration struct {
	Steps []stampduty.CatalogueEntry
	Left  int
}

// PreviewMigration returns the migration of the articles stored without
// duty_rules, without writing: one consistent Scan of the articles table.
// Retired articles are migrated too (their rules stay stored when they
// come back). Once every article has stored rules it finds nothing.
func (a *Admin) PreviewMigration(ctx context.Context) (Migration, error) {
	es, err := a.Articles.Entries(ctx)
	if err != nil {
		return Migration{}, err
	}
	var m Migration
	for _, e := range es {
		if e.RulesDerived {
			m.Steps = append(m.Steps, e)
		} else {
			m.Left++
		}
	}
	slices.SortFunc(m.Steps, func(x, y stampduty.CatalogueEntry) int {
		return cmp.Or(cmp.Compare(x.PurposeName, y.PurposeName), cmp.Compare(x.State, y.State))
	})
	return m, nil
}

// MigrateRules applies m (from PreviewMigration) as by: each article gets
// its migrated version stored (§9; its amounts, retirement and answers do
// not change), one logged change of kind "migrated" whose field change is
// duty_rules null → the version, then the catalogue is published once (not
// at all when m has no step, so a second run writes nothing). An article
// changed by someone else since the preview stops the migration with
// ECONFLICT (preview again); what was migrated before it is kept and
// published, and the count says how far it got.
func (a *Admin) MigrateRules(ctx context.Context, by string, m Migration) (int, error) {
	if err := checkActor(by); err != nil {
		return 0, err
	}
	now := a.Now().UTC()
	done := 0
	var failed error
	for _, e := range m.Steps {
		if !e.RulesDerived {
			continue
		}
		rules, err := e.Article.DutyRules()
		if err == nil {
			b, _ := rules.MarshalJSON() // never fails
			ch := stampduty.FieldChange{Field: stampduty.RulesField, Before: "null", After: string(b)}
			_, err = a.change(ctx, &e, e.Article, stampduty.ArticleMigrated, by, now, e.Retired(), ch)
		}
		if err != nil {
			failed = err
			break
		}
		done++
	}
	if failed == nil {
		if done == 0 {
			return 0, nil
		}
		return done, a.publish(ctx, now)
	}
	if stampduty.ErrorCode(failed) == stampduty.ECONFLICT {
		failed = fmt.Errorf("%w (preview the migration again)", failed)
	}
	if done > 0 {
		if err := a.publish(ctx, now); err != nil {
			return done, fmt.Errorf("%w; and %w", failed, err)
		}
	}
	return done, failed
}

// EditRules replaces the duty_rules of the article of (purpose, state)
// with rules, the JSON array of all its versions, as by: an Edit from
// version (the version the editor read; ECONFLICT when it changed since),
// logged and published as every edit is. The rules are checked whole by
// duty.ValidateRules first (§11): on any problem nothing is written and
// the EINVALID error names every one at its path under duty_rules
// (duty_rules[1].components[2].rate). Rules whose versions are all
// legacy (§9) follow from the article's amount fields: they are refused
// unless they are exactly the migration of those fields (then nothing
// changes). Rules equal to the stored ones change nothing.
func (a *Admin) EditRules(ctx context.Context, by string, version int64, purpose, state string, rules []byte) (stampduty.CatalogueEntry, error) {
	if err := checkActor(by); err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	parsed, problems := duty.ValidateRules(rules)
	if problems != nil {
		return stampduty.CatalogueEntry{}, stampduty.Invalid(stampduty.RuleErrors(stampduty.RulesField, problems))
	}
	if len(parsed) == 0 {
		return stampduty.CatalogueEntry{}, stampduty.Invalid([]stampduty.FieldError{{Path: stampduty.RulesField,
			Message: "duty_rules must hold at least one version: retire the article instead"}})
	}
	old, err := a.Articles.Entry(ctx, purpose, state)
	if err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	art := old.Article
	art.Rules = parsed
	if parsed.Legacy() {
		// Stored as the article's amount fields, which change() migrates
		// again: anything else would be lost without a word.
		if old.Schedule() {
			return stampduty.CatalogueEntry{}, stampduty.Invalid([]stampduty.FieldError{{Path: stampduty.RulesField,
				Message: "every version would be legacy (legacy: true), a rule that follows from the amount fields: " +
					"keep at least one version of the article's own"}})
		}
		legacy := old.Article
		legacy.Rules = nil
		migrated, err := legacy.DutyRules()
		if err != nil {
			return stampduty.CatalogueEntry{}, err
		}
		if !bytes.Equal(canonical(parsed), canonical(migrated)) {
			return stampduty.CatalogueEntry{}, stampduty.Invalid([]stampduty.FieldError{{Path: stampduty.RulesField,
				Message: "a legacy version (legacy: true) follows from the article's amount fields (duty-rules §9): " +
					"change them with `stampctl articles edit`, or drop legacy and give the version a citation " +
					"to make the rules the article's own"}})
		}
		art.Rules = nil // the article's own migration: nothing changes
	}
	return a.Edit(ctx, by, version, art)
}

// canonical is the hashes of rules' versions, which name their canonical
// JSON (§7): two rules with the same are the same rules.
func canonical(rules duty.Rules) []byte {
	var b []byte
	for _, v := range rules {
		b = append(b, v.Hash()...)
		b = append(b, ' ')
	}
	return b
}
