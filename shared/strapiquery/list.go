package strapiquery

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
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
	for k := range keep {
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

// fields reads fields=a,b or fields[0]=a&fields[1]=b: nil when absent or *.
func (q Query) fields(allowed []string) ([]string, error) {
	root, found, err := q.tree("fields")
	if err != nil || !found {
		return nil, err
	}
	items, ok := root.list()
	if !ok {
		return nil, paramError("fields", "fields must be a list of field names, such as fields[0]=name")
	}
	out := []string{}
	for _, it := range items {
		if it.kids != nil {
			return nil, paramError("fields", "fields must be a list of field names, such as fields[0]=name")
		}
		for _, v := range it.values {
			for _, f := range strings.Split(v, ",") {
				f = strings.TrimSpace(f)
				switch {
				case f == "*":
					return nil, nil
				case f == "id" || f == "documentId":
				case !slices.Contains(allowed, f):
					return nil, paramError("fields", "Invalid key "+f)
				default:
					out = append(out, f)
				}
			}
		}
	}
	return out, nil
}

// Paging is how a list is paged: by page (Page, PageSize) or by offset
// (Start, Limit), and whether the total is counted.
type Paging struct {
	Offset         bool
	Page, PageSize int
	Start, Limit   int
	NoCount        bool
}

// Window returns the first item (from 0) and the number of items asked for.
func (p Paging) Window() (start, limit int) {
	if p.Offset {
		return p.Start, p.Limit
	}
	return (p.Page - 1) * p.PageSize, p.PageSize
}

// PageBlock is a list's pagination block: {page, pageSize, pageCount,
// total} by page, {start, limit, total} by offset; without the count,
// total and pageCount are left out.
type PageBlock struct {
	Page      *int `json:"page,omitempty"`
	PageSize  *int `json:"pageSize,omitempty"`
	Start     *int `json:"start,omitempty"`
	Limit     *int `json:"limit,omitempty"`
	PageCount *int `json:"pageCount,omitempty"`
	Total     *int `json:"total,omitempty"`
}

// Block returns the pagination block of a list of total items.
func (p Paging) Block(total int) PageBlock {
	var b PageBlock
	if p.Offset {
		b.Start, b.Limit = ptr(p.Start), ptr(p.Limit)
	} else {
		b.Page, b.PageSize = ptr(p.Page), ptr(p.PageSize)
		if !p.NoCount {
			b.PageCount = ptr((total + p.PageSize - 1) / p.PageSize)
		}
	}
	if !p.NoCount {
		b.Total = ptr(total)
	}
	return b
}

func ptr(n int) *int { return &n }

// The pagination keys.
const (
	kPage      = "pagination[page]"
	kPageSize  = "pagination[pageSize]"
	kStart     = "pagination[start]"
	kLimit     = "pagination[limit]"
	kWithCount = "pagination[withCount]"
)

// paging reads the pagination parameters; other pagination[...] keys are
// ignored. With topLevel, page and pageSize are pagination[page] and
// pagination[pageSize] under another name, and giving both names is
// EINVALID.
func (q Query) paging(topLevel bool) (Paging, error) {
	pageKey, sizeKey := kPage, kPageSize
	if topLevel {
		_, top := q.values["page"]
		_, topSize := q.values["pageSize"]
		_, nested := q.values[kPage]
		_, nestedSize := q.values[kPageSize]
		if (top || topSize) && (nested || nestedSize) {
			return Paging{}, paramError("pagination", "Use either page and pageSize or pagination[page] and pagination[pageSize], not both")
		}
		if top || topSize {
			pageKey, sizeKey = "page", "pageSize"
		}
	}
	_, hasPage := q.values[pageKey]
	_, hasSize := q.values[sizeKey]
	_, hasStart := q.values[kStart]
	_, hasLimit := q.values[kLimit]
	var p Paging
	if s, ok, err := q.one(kWithCount); err != nil {
		return Paging{}, err
	} else if ok {
		switch s {
		case "true", "t", "1":
		case "false", "f", "0":
			p.NoCount = true
		default:
			return Paging{}, paramError(kWithCount, `Invalid withCount parameter. Expected "t","1","true","false","0","f"`)
		}
	}
	if (hasPage || hasSize) && (hasStart || hasLimit) {
		return Paging{}, paramError("pagination", "Cannot use both page & offset pagination in the same query")
	}
	if !hasStart && !hasLimit {
		page, size, err := q.Page(pageKey, sizeKey)
		p.Page, p.PageSize = page, size
		return p, err
	}
	p.Offset, p.Limit = true, DefaultPageSize
	if s, ok, err := q.one(kStart); err != nil {
		return Paging{}, err
	} else if ok {
		if p.Start, err = whole(kStart, s); err != nil {
			return Paging{}, err
		}
	}
	if s, ok, err := q.one(kLimit); err != nil {
		return Paging{}, err
	} else if ok {
		if s == "-1" {
			p.Limit = MaxPageSize
		} else if p.Limit, err = whole(kLimit, s); err != nil {
			return Paging{}, err
		}
	}
	p.Limit = min(max(p.Limit, 1), MaxPageSize)
	return p, nil
}

// whole parses a whole number of at least 0 written in ASCII digits
// (digits).
func whole(key, s string) (int, error) {
	msg := key + " must be a whole number of at least 0"
	if key == kLimit {
		msg += ", or -1"
	}
	return digits(key, s, 0, msg)
}

// PageOf returns the items of items that p's window holds: none past the
// end.
func PageOf[T any](p Paging, items []T) []T {
	start, limit := p.Window()
	if start >= len(items) {
		return []T{}
	}
	return items[start:min(start+limit, len(items))]
}

// Select returns items as JSON objects that keep only id, documentId, the
// given fields and always; fields nil returns items as they are.
func Select[T any](items []T, fields []string, always ...string) (any, error) {
	if fields == nil {
		return items, nil
	}
	out := make([]map[string]json.RawMessage, len(items))
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, fmt.Errorf("select fields: %w", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("select fields: %w", err)
		}
		for k := range m {
			if k != "id" && k != "documentId" && !slices.Contains(fields, k) && !slices.Contains(always, k) {
				delete(m, k)
			}
		}
		out[i] = m
	}
	return out, nil
}
