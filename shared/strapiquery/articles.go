package strapiquery

import (
	"math/big"
	"slices"

	"stampduty/shared/stampduty"
)

// ArticleFields are the filterable fields of an article and their kinds.
var ArticleFields = map[string]Kind{
	"id":                         Int,
	"documentId":                 Text,
	"purpose_name":               Text,
	"state":                      Text,
	"min":                        Int,
	"max":                        Int,
	"fixed":                      Int,
	"toFollowConsiderationPrice": Bool,
	"amountPercentConsideration": Number,
}

// ArticleRow returns a's values of the ArticleFields: fixed and
// amountPercentConsideration are NULL when the article has none.
func ArticleRow(a stampduty.Article) Row {
	return func(field string) Value {
		switch field {
		case "id":
			return intValue(a.ID)
		case "documentId":
			return Value{Text: a.DocumentID}
		case "purpose_name":
			return Value{Text: a.PurposeName}
		case "state":
			return Value{Text: a.State}
		case "min":
			return intValue(a.Min)
		case "max":
			return intValue(a.Max)
		case "fixed":
			if a.Fixed == nil {
				return Value{Null: true}
			}
			return intValue(*a.Fixed)
		case "toFollowConsiderationPrice":
			return Value{Bool: a.FollowsConsideration}
		case "amountPercentConsideration":
			if a.Factor == nil {
				return Value{Null: true}
			}
			r, _ := new(big.Rat).SetString(a.Factor.String())
			return Value{Num: r}
		}
		return Value{Null: true}
	}
}

func intValue(n int64) Value { return Value{Num: new(big.Rat).SetInt64(n)} }

// Articles returns the articles f selects, in their order.
func (f *Filter) Articles(all []stampduty.Article) []stampduty.Article {
	out := make([]stampduty.Article, 0, len(all))
	for _, a := range all {
		if f.Match(ArticleRow(a)) {
			out = append(out, a)
		}
	}
	return out
}

// MaxDocumentIDs is the most documentIds an order filter may name.
const MaxDocumentIDs = 100

// DocumentIDs reads an order filter: conditions on documentId with $eq or
// $in only, all of which must hold. It returns the ids that satisfy every
// condition, in the order first named, without repeats; ok is false when
// e has no condition at all. Any other field or operator is
// "Invalid key <key>"; more than MaxDocumentIDs ids is EINVALID.
func DocumentIDs(e Expr) (ids []string, ok bool, err error) {
	var conds []Expr
	var walk func(e Expr) error
	walk = func(e Expr) error {
		switch {
		case e.Op == "$and" && e.Field == "":
			for _, a := range e.Args {
				if err := walk(a); err != nil {
					return err
				}
			}
			return nil
		case e.Field == "" || len(e.Args) > 0:
			return InvalidKey(e.Op)
		case e.Field != "documentId":
			return InvalidKey(e.Field)
		case e.Op != "$eq" && e.Op != "$in":
			return InvalidKey(e.Op)
		}
		conds = append(conds, e)
		return nil
	}
	if err := walk(e); err != nil {
		return nil, false, err
	}
	if len(conds) == 0 {
		return nil, false, nil
	}
	for i, c := range conds {
		if len(c.Values) > MaxDocumentIDs {
			return nil, false, invalid(c, "takes at most 100 ids")
		}
		var next []string
		for _, v := range c.Values {
			if (i == 0 || slices.Contains(ids, v)) && !slices.Contains(next, v) {
				next = append(next, v)
			}
		}
		ids = next
	}
	return ids, true, nil
}
