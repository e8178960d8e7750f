package stampduty

import (
	"strconv"
	"time"
)

// The kinds of change the catalogue's change log records.
const (
	// ArticleAdded is an article an admin added (or added again after it
	// was retired).
	ArticleAdded = "added"
	// ArticleEdited is an admin's edit of an article's amounts.
	ArticleEdited = "edited"
	// ArticleRetired is an article an admin retired: no new order or
	// quote can use it.
	ArticleRetired = "retired"
	// ArticleImported is an article an import added or changed.
	ArticleImported = "imported"
	// ArticleMigrated is a legacy article stored without duty_rules whose
	// one migrated version (duty-rules.md §9) `stampctl articles
	// migrate-rules` stored: its amounts do not change.
	ArticleMigrated = "migrated"
)

// RetiredField is the name a change log gives the article's retirement
// (before and after "false" or "true").
const RetiredField = "retired"

// RulesField is the catalogue file's name of an article's duty_rules, as
// a change log names them.
const RulesField = "duty_rules"

// FieldChange is one field of an article before and after a change, each
// as its value in the catalogue file's JSON ("null" for a field without a
// value). Before is "" when the change added the article.
type FieldChange struct {
	Field  string `json:"field"`
	Before string `json:"before,omitempty"`
	After  string `json:"after"`
}

// ArticleChange is one entry of an article's change log: the change that
// made the article's version Version.
type ArticleChange struct {
	Version int64         `json:"version"`
	Kind    string        `json:"kind"`
	By      string        `json:"by"`
	At      time.Time     `json:"at"`
	Changes []FieldChange `json:"changes"`
}

// CatalogueEntry is an article as admins see it: the article, its version
// (0 for an article stored before versions, +1 per change), when it was
// retired (zero while it can be ordered) and its newest change (nil for an
// article never changed since change logs).
type CatalogueEntry struct {
	Article
	Version   int64
	RetiredAt time.Time
	Last      *ArticleChange
}

// Retired reports whether the article is retired: no new order or quote
// can use it.
func (e CatalogueEntry) Retired() bool { return !e.RetiredAt.IsZero() }

// ArticleValues returns the catalogue file's fields of a that a change can
// change (all but purpose_name and state, the article's key), in the
// file's order, each as JSON: for a legacy article its five amount fields
// (its one rule version follows from them, §9); for an article with rules
// of its own, duty_rules alone (the amount fields are their projection).
func ArticleValues(a Article) [][2]string {
	if a.Schedule() {
		b, _ := a.Rules.MarshalJSON() // never fails
		return [][2]string{{articleFieldNames[aRules], string(b)}}
	}
	fixed, factor := "null", "null"
	if a.Fixed != nil {
		fixed = strconv.FormatInt(*a.Fixed, 10)
	}
	if a.Factor != nil {
		factor = a.Factor.String()
	}
	return [][2]string{
		{articleFieldNames[aMin], strconv.FormatInt(a.Min, 10)},
		{articleFieldNames[aMax], strconv.FormatInt(a.Max, 10)},
		{articleFieldNames[aFixed], fixed},
		{articleFieldNames[aFollows], strconv.FormatBool(a.FollowsConsideration)},
		{articleFieldNames[aFactor], factor},
	}
}

// DiffArticles returns the fields whose values differ between before and
// after, in the file's order (a field one of them does not have is
// "null" there); with before nil (a new article), every field of after
// with an empty Before.
func DiffArticles(before *Article, after Article) []FieldChange {
	var out []FieldChange
	now := map[string]string{}
	for _, f := range ArticleValues(after) {
		now[f[0]] = f[1]
	}
	if before == nil {
		for _, f := range ArticleValues(after) {
			out = append(out, FieldChange{Field: f[0], After: f[1]})
		}
		return out
	}
	old := map[string]string{}
	for _, f := range ArticleValues(*before) {
		old[f[0]] = f[1]
	}
	for _, name := range articleFieldNames[aMin:] {
		b, inB := old[name]
		n, inN := now[name]
		if !inB && !inN {
			continue
		}
		if !inB {
			b = "null"
		}
		if !inN {
			n = "null"
		}
		if b != n {
			out = append(out, FieldChange{Field: name, Before: b, After: n})
		}
	}
	return out
}

// MaxActorLength is the longest name of who made a change.
const MaxActorLength = 256

// ValidActor reports whether s can name who made a change: an email (the
// console's staff), an IAM identity's ARN or a user name (stampctl), 1 to
// MaxActorLength printable ASCII characters without spaces.
func ValidActor(s string) bool {
	if s == "" || len(s) > MaxActorLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
