// Package catalogue is the admins' workflows over the articles catalogue:
// list, add, edit and retire an article, preview and apply an import of a
// catalogue file, and read an article's change log. Every change records
// who made it, when, and each changed field before and after, and is
// published at once (the public list and the quote serve the published
// snapshot, store.Catalogue). stampctl's `articles` commands run them;
// the console's endpoints will run the same. Lister (list.go) is the
// public list of that published snapshot, as list-articles serves it.
//
// Orders keep the amounts they were priced with (the order stores its
// stamp duty, never a reference to the article), so no change here alters
// an order already created.
package catalogue

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"stampduty/shared/duty"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// Store is the articles table with its change log (store.Articles, given
// its log table with WithLog).
type Store interface {
	// Entry returns the article of (purpose, state), retired or not,
	// read consistently; ENOTFOUND when there is none.
	Entry(ctx context.Context, purpose, state string) (stampduty.CatalogueEntry, error)
	// Entries returns every article, retired ones included.
	Entries(ctx context.Context) ([]stampduty.CatalogueEntry, error)
	// EntryByDoc returns the article whose documentId is doc.
	EntryByDoc(ctx context.Context, doc string) (stampduty.CatalogueEntry, error)
	// Write stores next over prev (nil: new) and logs next.Last; ECONFLICT
	// when the stored article is not prev any more.
	Write(ctx context.Context, prev *stampduty.CatalogueEntry, next stampduty.CatalogueEntry) error
	// Log returns e's change log, newest first.
	Log(ctx context.Context, e stampduty.CatalogueEntry) ([]stampduty.ArticleChange, error)
}

// Admin runs the catalogue's workflows.
type Admin struct {
	Articles Store
	// IDs gives a new article its id.
	IDs orders.IDs
	// Publish makes the articles table the published catalogue
	// (store.Catalogue.Publish over the articles table).
	Publish func(ctx context.Context, now time.Time) error
	Now     func() time.Time
}

// NotPublishedError is a change that was stored but whose publish failed:
// new orders see it (they read articles by key) but the public list and
// the quote do not until `stampctl articles publish` succeeds.
type NotPublishedError struct{ Err error }

// Error says what happened and what to do.
func (e *NotPublishedError) Error() string {
	return fmt.Sprintf("the change is stored but the catalogue was not published (run `stampctl articles publish`): %v", e.Err)
}

// Unwrap returns the publish's error.
func (e *NotPublishedError) Unwrap() error { return e.Err }

// publish runs Publish, its failure a NotPublishedError.
func (a *Admin) publish(ctx context.Context, now time.Time) error {
	if err := a.Publish(ctx, now); err != nil {
		return &NotPublishedError{Err: err}
	}
	return nil
}

// checkActor refuses an actor that cannot name who made a change.
func checkActor(by string) error {
	if !stampduty.ValidActor(by) {
		return stampduty.Errorf(stampduty.EINVALID, "who makes the change must be 1 to %d printable ASCII characters without spaces (an email)",
			stampduty.MaxActorLength)
	}
	return nil
}

// checkArticle refuses an invalid article with every failing field.
func checkArticle(art stampduty.Article) error {
	if errs := art.Validate(); len(errs) > 0 {
		return stampduty.Invalid(errs)
	}
	return nil
}

// List returns every article, retired ones included, sorted by
// purpose_name and state.
func (a *Admin) List(ctx context.Context) ([]stampduty.CatalogueEntry, error) {
	es, err := a.Articles.Entries(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(es, func(x, y stampduty.CatalogueEntry) int {
		return cmp.Or(cmp.Compare(x.PurposeName, y.PurposeName), cmp.Compare(x.State, y.State))
	})
	return es, nil
}

// Add adds art (its id and documentId are given here) as by, and
// publishes the catalogue. An article of the same purpose and state that
// exists is a conflict; one that was retired is brought back with art's
// values, its id and documentId kept (its change records retired
// true → false).
func (a *Admin) Add(ctx context.Context, by string, art stampduty.Article) (stampduty.CatalogueEntry, error) {
	if err := checkActor(by); err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	if err := checkArticle(art); err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	now := a.Now().UTC()
	old, err := a.Articles.Entry(ctx, art.PurposeName, art.State)
	var prev *stampduty.CatalogueEntry
	switch {
	case err == nil && !old.Retired():
		return old, stampduty.Errorf(stampduty.ECONFLICT, "article %q in %s exists already (version %d); edit it instead",
			art.PurposeName, art.State, old.Version)
	case err == nil:
		prev = &old
	case stampduty.ErrorCode(err) != stampduty.ENOTFOUND:
		return stampduty.CatalogueEntry{}, err
	}
	next, err := a.change(ctx, prev, art, stampduty.ArticleAdded, by, now, false)
	if err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	return next, a.publish(ctx, now)
}

// change makes and writes the change of prev (nil: a new article) to
// art's values, of the given kind; retire says whether the article is
// retired after it. A retired prev becomes active unless retire. extra
// are changes the article's values do not show (a migration's duty_rules
// null → […]), logged after them.
func (a *Admin) change(ctx context.Context, prev *stampduty.CatalogueEntry, art stampduty.Article, kind, by string, now time.Time, retire bool,
	extra ...stampduty.FieldChange) (stampduty.CatalogueEntry, error) {
	// An article with rules of its own stores their projection for the
	// day (duty-rules.md §9), which its sort orders use.
	// A legacy article's one version follows from its fields as they are
	// now (§9); it is stored with them.
	if !art.Schedule() {
		art.Rules = nil
	}
	art, err := art.WithRules(duty.TodayInIndia(now))
	if err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	art.RulesDerived = false
	next := stampduty.CatalogueEntry{Article: art, Version: 1}
	var before *stampduty.Article
	if prev != nil {
		next.ID, next.DocumentID, next.Version = prev.ID, prev.DocumentID, prev.Version+1
		before = &prev.Article
	} else {
		var err error
		if next.ID, next.DocumentID, err = orders.NewIdentity(ctx, a.IDs); err != nil {
			return stampduty.CatalogueEntry{}, err
		}
	}
	changes := append(stampduty.DiffArticles(before, art), extra...)
	wasRetired := prev != nil && prev.Retired()
	if retire {
		next.RetiredAt = now
		if wasRetired {
			next.RetiredAt = prev.RetiredAt
		}
	}
	if wasRetired != retire {
		changes = append(changes, stampduty.FieldChange{Field: stampduty.RetiredField,
			Before: fmt.Sprint(wasRetired), After: fmt.Sprint(retire)})
	}
	next.Last = &stampduty.ArticleChange{Version: next.Version, Kind: kind, By: by, At: now, Changes: changes}
	if err := a.Articles.Write(ctx, prev, next); err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	return next, nil
}

// Edit changes the amounts of the article of art's purpose and state to
// art's, as by, and publishes the catalogue. version is the version the
// editor read: when the article has changed since, the edit is a conflict
// (ECONFLICT, nothing written), as it is when another edit is stored
// between this one's read and write; so of two admins editing one article
// from the same version one wins and the other is told, and no update is
// lost. A retired article cannot be edited (add it again to bring it
// back). An edit that changes nothing writes nothing and returns the
// article as it is.
func (a *Admin) Edit(ctx context.Context, by string, version int64, art stampduty.Article) (stampduty.CatalogueEntry, error) {
	if err := checkActor(by); err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	if err := checkArticle(art); err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	old, err := a.Articles.Entry(ctx, art.PurposeName, art.State)
	switch {
	case err != nil:
		return stampduty.CatalogueEntry{}, err
	case old.Version != version:
		return old, stampduty.Errorf(stampduty.ECONFLICT, "article %q in %s was changed by someone else (version %d, not %d); read it again",
			art.PurposeName, art.State, old.Version, version)
	case old.Retired():
		return old, stampduty.Errorf(stampduty.ECONFLICT, "article %q in %s is retired; add it again to bring it back", art.PurposeName, art.State)
	case old.Schedule() && !art.Schedule():
		// Its amount fields are the projection of its rules (duty-rules.md
		// §9): an edit of them alone would drop the rules without a word.
		return old, stampduty.Invalid([]stampduty.FieldError{{Path: stampduty.RulesField,
			Message: fmt.Sprintf("the amounts of %q in %s follow its duty_rules: edit its rules instead", art.PurposeName, art.State)}})
	case len(stampduty.DiffArticles(&old.Article, art)) == 0:
		return old, nil
	}
	now := a.Now().UTC()
	next, err := a.change(ctx, &old, art, stampduty.ArticleEdited, by, now, false)
	if err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	return next, a.publish(ctx, now)
}

// Retire retires the article of (purpose, state) as by, and publishes the
// catalogue: no new order or quote can use it (they answer as for an
// article that does not exist), the public list leaves it out, and admins
// still see it, retired. Orders created before keep it. Retiring a
// retired article changes nothing.
func (a *Admin) Retire(ctx context.Context, by, purpose, state string) (stampduty.CatalogueEntry, error) {
	if err := checkActor(by); err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	old, err := a.Articles.Entry(ctx, purpose, state)
	if err != nil || old.Retired() {
		return old, err
	}
	now := a.Now().UTC()
	next, err := a.change(ctx, &old, old.Article, stampduty.ArticleRetired, by, now, true)
	if err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	return next, a.publish(ctx, now)
}

// Log returns the change log of the article of (purpose, state), newest
// first, with the article.
func (a *Admin) Log(ctx context.Context, purpose, state string) (stampduty.CatalogueEntry, []stampduty.ArticleChange, error) {
	e, err := a.Articles.Entry(ctx, purpose, state)
	if err != nil {
		return e, nil, err
	}
	log, err := a.Articles.Log(ctx, e)
	return e, log, err
}

// ByDoc returns the article whose documentId is doc, retired or not
// (ENOTFOUND when none has it): how the console names an article in its
// paths, where a purpose_name with "/" or "%" would not fit.
func (a *Admin) ByDoc(ctx context.Context, doc string) (stampduty.CatalogueEntry, error) {
	return a.Articles.EntryByDoc(ctx, doc)
}

// LogByDoc is Log of the article whose documentId is doc.
func (a *Admin) LogByDoc(ctx context.Context, doc string) (stampduty.CatalogueEntry, []stampduty.ArticleChange, error) {
	e, err := a.Articles.EntryByDoc(ctx, doc)
	if err != nil {
		return e, nil, err
	}
	log, err := a.Articles.Log(ctx, e)
	return e, log, err
}
