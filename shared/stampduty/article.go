package stampduty

import (
	"cmp"
	"errors"
	"slices"
	"stampduty/shared/duty"
	"strings"
	"unicode/utf8"
)

// MaxPurposeNameLength is the longest purpose_name, in characters: the
// longest purpose an order can name.
const MaxPurposeNameLength = MaxFreeTextLength

// The fields of an article in the catalogue file, in the order their errors
// are reported.
const (
	aPurposeName = iota
	aState
	aMin
	aMax
	aFixed
	aFollows
	aFactor
	aRules
	numArticleFields
)

// articleFieldNames are the JSON names of the catalogue fields, by index.
var articleFieldNames = [numArticleFields]string{
	"purpose_name",
	"state",
	"min",
	"max",
	"fixed",
	"toFollowConsiderationPrice",
	"amountPercentConsideration",
	"duty_rules",
}

// articleFieldIndex returns the index of a catalogue field, -1 for any other key.
func articleFieldIndex(key string) int {
	for i, name := range articleFieldNames {
		if key == name {
			return i
		}
	}
	return -1
}

// Validate checks the rules of an article: purpose_name not empty, without
// surrounding white space or control characters, at most 200 characters;
// state one of States; 0 ≤ min ≤ max ≤ MaxAmount; fixed, when set, within
// [min, max]; amountPercentConsideration, when set, in (0, 1], and set when
// toFollowConsiderationPrice is true. It returns one error per failing field,
// with the field's JSON name as Path; nil when the article is valid. The id
// and documentId are not checked.
func (a Article) Validate() []FieldError {
	var msgs [numArticleFields]string
	a.check(&msgs)
	errs := articleErrors(&msgs)
	if a.Schedule() {
		// Rules read without the evaluating checks (ParseRules) are
		// checked whole before any save (duty-rules.md §11).
		errs = append(errs, RuleErrors("duty_rules", duty.Check(a.Rules))...)
	}
	return errs
}

// check writes into msgs the rule each field breaks, skipping the fields
// that already have a message (they could not be read) and every check that
// involves one of them.
func (a Article) check(msgs *[numArticleFields]string) {
	var bad [numArticleFields]bool
	for i, m := range msgs {
		bad[i] = m != ""
	}
	if !bad[aPurposeName] {
		switch p := a.PurposeName; {
		case p == "":
			msgs[aPurposeName] = msgNotEmpty
		case strings.TrimSpace(p) != p:
			msgs[aPurposeName] = " must not start or end with white space"
		case utf8.RuneCountInString(p) > MaxPurposeNameLength:
			msgs[aPurposeName] = msgFreeTextLen
		case !printable(p):
			msgs[aPurposeName] = msgUnprintable
		}
	}
	if !bad[aState] && !ValidState(a.State) {
		msgs[aState] = msgState
	}
	if a.Schedule() {
		return // the amount fields are a projection of the rules (§9)
	}
	for _, f := range [...]struct {
		idx int
		v   int64
	}{{aMin, a.Min}, {aMax, a.Max}} {
		if !bad[f.idx] {
			msgs[f.idx] = checkAmount(f.v, msgAboveMaxAmount)
		}
	}
	boundsOK := !bad[aMin] && !bad[aMax] && msgs[aMin] == "" && msgs[aMax] == ""
	if boundsOK && a.Min > a.Max {
		msgs[aMax] = " must be greater than or equal to min"
		boundsOK = false
	}
	if !bad[aFixed] && a.Fixed != nil {
		msgs[aFixed] = checkAmount(*a.Fixed, msgAboveMaxAmount)
		if msgs[aFixed] == "" && boundsOK && (*a.Fixed < a.Min || *a.Fixed > a.Max) {
			msgs[aFixed] = " must be between min and max"
		}
	}
	if !bad[aFactor] {
		switch {
		case a.Factor == nil && a.FollowsConsideration && !bad[aFollows]:
			msgs[aFactor] = " is required when toFollowConsiderationPrice is true"
		case a.Factor != nil && (a.Factor.Sign() == 0 || a.Factor.Cmp(NewDecimal(1, 0)) > 0):
			msgs[aFactor] = msgFactorRange
		}
	}
}

// articleErrors returns the errors of the fields with a message, in the
// order of the fields.
func articleErrors(msgs *[numArticleFields]string) []FieldError {
	var errs []FieldError
	for i, m := range msgs {
		if m != "" {
			errs = append(errs, FieldError{Path: articleFieldNames[i], Message: articleFieldNames[i] + m})
		}
	}
	return errs
}

// The messages of the catalogue, after the field name.
const (
	msgFactorRange    = " must be greater than 0 and at most 1"
	msgDuplicateField = " is given more than once"
	msgNotAllowed     = " is not an allowed field"
)

// NewArticle reads an article of the catalogue from its fields as the
// catalogue's reader decoded them, in the file's order, and checks it with
// Validate's rules. fixed and amountPercentConsideration may be null or
// absent; the other fields are required. It returns one error per failing
// field, with the field's name as Path, in the order of the fields; then
// one per unknown name and per name given more than once (at its second
// place), in the order given; nil when the article is valid.
func NewArticle(fields []Field) (Article, []FieldError) {
	var (
		a     Article
		vals  [numArticleFields]Value
		extra []FieldError // unknown and repeated names, in file order
		given = make(map[string]int, len(fields))
	)
	for _, f := range fields {
		given[f.Name]++
		idx := articleFieldIndex(f.Name)
		switch {
		case given[f.Name] == 2:
			extra = append(extra, FieldError{Path: f.Name, Message: f.Name + msgDuplicateField})
		case given[f.Name] > 2:
		case idx < 0:
			extra = append(extra, FieldError{Path: f.Name, Message: f.Name + msgNotAllowed})
		default:
			vals[idx] = f.Value
		}
	}

	var msgs [numArticleFields]string
	str := func(idx int) string {
		switch v := vals[idx]; v.Kind {
		case String:
			if v.LoneSurrogate {
				msgs[idx] = msgUnprintable
			}
			return v.Text
		case Absent, Null:
			msgs[idx] = msgRequired
		default:
			msgs[idx] = msgMustBeString
		}
		return ""
	}
	a.PurposeName = str(aPurposeName)
	a.State = str(aState)
	a.Min, msgs[aMin] = integerValue(vals[aMin])
	a.Max, msgs[aMax] = integerValue(vals[aMax])
	if k := vals[aFixed].Kind; k != Absent && k != Null {
		var v int64
		if v, msgs[aFixed] = integerValue(vals[aFixed]); msgs[aFixed] == "" {
			a.Fixed = &v
		}
	}
	switch v := vals[aFollows]; v.Kind {
	case Bool:
		a.FollowsConsideration = v.Bool
	case Absent, Null:
		msgs[aFollows] = msgRequired
	default:
		msgs[aFollows] = " must be a boolean"
	}
	switch v := vals[aFactor]; v.Kind {
	case Absent, Null:
	case Number:
		d, err := ParseDecimal(v.Text)
		switch {
		case errors.Is(err, ErrDecimalPrecision):
			msgs[aFactor] = " must have at most 18 decimal places"
		case err != nil:
			msgs[aFactor] = msgFactorRange
		default:
			a.Factor = &d
		}
	default:
		msgs[aFactor] = " must be a number"
	}

	rules, ruleErrs := readRules(vals[aRules])
	if ruleErrs != nil || rules != nil && !rules.Legacy() {
		// An article with rules of its own: the amount fields given (as
		// the list shows them) are ignored and replaced by the projection
		// when it is written (§1).
		a.Factor, a.Fixed, a.Min, a.Max, a.FollowsConsideration = nil, nil, 0, MaxAmount, false
		for _, i := range []int{aMin, aMax, aFixed, aFollows, aFactor} {
			msgs[i] = ""
		}
		a.Rules = rules // nil when they have problems: those are the article's errors
	}
	a.check(&msgs)
	// A legacy article (given without duty_rules, or with only the
	// migrated version) keeps Rules nil: its one version follows from its
	// fields (DutyRules), and the store writes it with the article.
	return a, append(append(articleErrors(&msgs), ruleErrs...), extra...)
}

// ArticleSortFields are the fields the article list sorts by.
var ArticleSortFields = []string{"id", "purpose_name", "state", "min", "max", "fixed"}

// CompareArticles orders two articles by one sort field, ascending: text
// byte-wise, numbers by value, a missing fixed amount after every amount
// (as NULL sorts in PostgreSQL). An unknown field compares equal.
func CompareArticles(a, b Article, field string) int {
	switch field {
	case "id":
		return cmp.Compare(a.ID, b.ID)
	case "purpose_name":
		return strings.Compare(a.PurposeName, b.PurposeName)
	case "state":
		return strings.Compare(a.State, b.State)
	case "min":
		return cmp.Compare(a.Min, b.Min)
	case "max":
		return cmp.Compare(a.Max, b.Max)
	case "fixed":
		switch {
		case a.Fixed == nil && b.Fixed == nil:
			return 0
		case a.Fixed == nil:
			return 1
		case b.Fixed == nil:
			return -1
		}
		return cmp.Compare(*a.Fixed, *b.Fixed)
	}
	return 0
}

// SortArticles sorts arts in place by field (descending when desc), ties
// by id ascending: the article list's order for a one-field sort.
func SortArticles(arts []Article, field string, desc bool) {
	slices.SortFunc(arts, func(a, b Article) int {
		c := CompareArticles(a, b, field)
		if desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.ID, b.ID))
	})
}

// ArticleOrder names the article list's order by one sort field: the
// field, with ":desc" when descending ("min", "min:desc").
func ArticleOrder(field string, desc bool) string {
	if desc {
		return field + ":desc"
	}
	return field
}

// ArticleOrders are the orders of ArticleSortFields, each way.
func ArticleOrders() []string {
	var out []string
	for _, f := range ArticleSortFields {
		out = append(out, ArticleOrder(f, false), ArticleOrder(f, true))
	}
	return out
}

// SortArticlesBy sorts arts in place in an ArticleOrder.
func SortArticlesBy(arts []Article, order string) {
	field, desc := strings.CutSuffix(order, ":desc")
	SortArticles(arts, field, desc)
}
