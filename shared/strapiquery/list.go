package strapiquery

import (
	"maps"
	"net/url"
	"slices"
)

// listParams are the parameters a list endpoint reads, as Strapi v5 with
// strictParams off knows them; any other top-level parameter is ignored,
// and so are populate and locale, which Strapi knows but which change
// nothing here.
var listParams = []string{"sort", "pagination", "fields", "filters", "status"}

// ListSpec is what one list endpoint accepts.
type ListSpec struct {
	// Sortable are the fields sort may name.
	Sortable []string
	// Fields are the fields fields may name, besides id and documentId.
	Fields []string
	// TopLevelPage also takes page and pageSize at the top level, as
	// pagination[page] and pagination[pageSize] (the order list).
	TopLevelPage bool
}

// List is a list request's parameters.
type List struct {
	Paging Paging
	Sort   []SortKey
	// Fields are the fields each item keeps besides id and documentId; nil
	// keeps every field.
	Fields []string
	// Filters is an $and of the filters (Compile checks them).
	Filters Expr
	// Draft is status=draft: there are no drafts, so the list is empty.
	Draft bool
}

// ParseList reads a raw (still percent-encoded) query string of a list
// endpoint: unknown top-level parameters (the key up to its first [) are
// ignored; a known one with a bad value is EINVALID naming it.
func ParseList(raw string, spec ListSpec) (List, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return List{}, paramError("query", "The query string is malformed")
	}
	keep := url.Values{}
	for k, vs := range v {
		top := topLevel(k)
		if (top == "page" || top == "pageSize") && spec.TopLevelPage {
			keep[k] = vs
		}
		if slices.Contains(listParams, top) {
			keep[k] = vs
		}
	}
	q := Query{values: keep}
	var l List
	if l.Paging, err = q.paging(spec.TopLevelPage); err != nil {
		return List{}, err
	}
	// In key order, so that of two malformed sort keys the answer always
	// names the same one (a map's order would pick either).
	for _, k := range slices.Sorted(maps.Keys(keep)) {
		if topLevel(k) == "sort" && !IsSortKey(k) {
			return List{}, paramError("sort", "Invalid key "+k)
		}
	}
	if l.Sort, err = q.Sort(spec.Sortable); err != nil {
		return List{}, err
	}
	if l.Fields, err = q.fields(spec.Fields); err != nil {
		return List{}, err
	}
	if l.Filters, err = q.Filters(); err != nil {
		return List{}, err
	}
	if s, ok, err := q.one("status"); err != nil {
		return List{}, err
	} else if ok {
		switch s {
		case "published":
		case "draft":
			l.Draft = true
		default:
			return List{}, paramError("status", "status must be published or draft")
		}
	}
	return l, nil
}
