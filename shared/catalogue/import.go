package catalogue

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"stampduty/shared/stampduty"
)

// What an import does to one article.
const (
	// ActionAdd adds an article the catalogue does not have.
	ActionAdd = "add"
	// ActionChange changes an article's amounts, or brings a retired
	// article back.
	ActionChange = "change"
	// ActionRetire retires an article the file leaves out (only when the
	// import retires what is missing).
	ActionRetire = "retire"
	// ActionLeave leaves an article as it is: the file has it with the same
	// values, or leaves it out.
	ActionLeave = "leave"
)

// Step is what an import does to one article: the action, the article as
// it is (nil for an add) and as it will be, and the fields that change.
type Step struct {
	Action  string
	Before  *stampduty.CatalogueEntry
	After   stampduty.Article
	Changes []stampduty.FieldChange
}

// Plan is what an import of a file would do, article by article, sorted
// by purpose_name and state, and how many of each action. It holds the
// versions it read: Import applies it only to the articles as they were.
type Plan struct {
	Steps                      []Step
	Add, Change, Retire, Leave int
}

// Preview returns what importing arts (a checked catalogue file) would do,
// without writing: every article of the file is added or changed (a
// retired one brought back) unless it is the same; articles the file
// leaves out are left, or retired when retireMissing. One consistent Scan
// of the articles table.
func (a *Admin) Preview(ctx context.Context, arts []stampduty.Article, retireMissing bool) (Plan, error) {
	es, err := a.Articles.Entries(ctx)
	if err != nil {
		return Plan{}, err
	}
	byKey := make(map[[2]string]stampduty.CatalogueEntry, len(es))
	for _, e := range es {
		byKey[[2]string{e.PurposeName, e.State}] = e
	}
	var p Plan
	for _, art := range arts {
		k := [2]string{art.PurposeName, art.State}
		old, ok := byKey[k]
		delete(byKey, k)
		switch {
		case !ok:
			p.Steps = append(p.Steps, Step{Action: ActionAdd, After: art, Changes: stampduty.DiffArticles(nil, art)})
			p.Add++
			continue
		}
		changes := stampduty.DiffArticles(&old.Article, art)
		if old.Retired() {
			changes = append(changes, stampduty.FieldChange{Field: stampduty.RetiredField, Before: "true", After: "false"})
		}
		step := Step{Action: ActionChange, Before: &old, After: art, Changes: changes}
		if len(changes) == 0 {
			step.Action, step.After = ActionLeave, old.Article
			p.Leave++
		} else {
			p.Change++
		}
		p.Steps = append(p.Steps, step)
	}
	for _, old := range byKey {
		step := Step{Action: ActionLeave, Before: &old, After: old.Article}
		if retireMissing && !old.Retired() {
			step.Action = ActionRetire
			step.Changes = []stampduty.FieldChange{{Field: stampduty.RetiredField, Before: "false", After: "true"}}
			p.Retire++
		} else {
			p.Leave++
		}
		p.Steps = append(p.Steps, step)
	}
	slices.SortFunc(p.Steps, func(x, y Step) int {
		return cmp.Or(cmp.Compare(x.After.PurposeName, y.After.PurposeName), cmp.Compare(x.After.State, y.After.State))
	})
	return p, nil
}

// ImportResult is what an import did.
type ImportResult struct {
	Added, Changed, Retired, Left int
}

// Import applies p (from Preview) as by: each add, change and retire is
// one logged change of kind "imported" (a retirement's fields say
// retired false → true), then the catalogue is published once. An article
// changed by someone else since the preview stops the import with
// ECONFLICT (preview again); what was applied before it is kept and
// published, and the result says how far it got.
func (a *Admin) Import(ctx context.Context, by string, p Plan) (ImportResult, error) {
	var r ImportResult
	if err := checkActor(by); err != nil {
		return r, err
	}
	now := a.Now().UTC()
	var failed error
	for _, s := range p.Steps {
		var err error
		var n *int
		switch s.Action {
		case ActionAdd:
			if err = checkArticle(s.After); err == nil {
				_, err = a.change(ctx, nil, s.After, stampduty.ArticleImported, by, now, false)
			}
			n = &r.Added
		case ActionChange:
			if err = checkArticle(s.After); err == nil {
				_, err = a.change(ctx, s.Before, s.After, stampduty.ArticleImported, by, now, false)
			}
			n = &r.Changed
		case ActionRetire:
			_, err = a.change(ctx, s.Before, s.Before.Article, stampduty.ArticleImported, by, now, true)
			n = &r.Retired
		default:
			n = &r.Left
		}
		if err != nil {
			failed = err
			break
		}
		*n++
	}
	if failed != nil {
		if stampduty.ErrorCode(failed) == stampduty.ECONFLICT {
			failed = fmt.Errorf("%w (preview the import again)", failed)
		}
		if r.Added+r.Changed+r.Retired > 0 {
			if err := a.publish(ctx, now); err != nil {
				return r, fmt.Errorf("%w; and %w", failed, err)
			}
		}
		return r, failed
	}
	return r, a.publish(ctx, now)
}
