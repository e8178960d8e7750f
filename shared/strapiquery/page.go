package strapiquery

import (
	"math"
	"strconv"
	"strings"
)

// Page sizes of list endpoints.
const (
	DefaultPageSize = 25
	MaxPageSize     = 100
)

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

// Page reads the page number and page size from the parameters named
// pageKey and sizeKey. Both must be whole numbers of at least 1; page
// defaults to 1 and size to DefaultPageSize, and a size over MaxPageSize is
// taken as MaxPageSize.
func (q Query) Page(pageKey, sizeKey string) (page, size int, err error) {
	page, size = 1, DefaultPageSize
	if s, ok, err := q.one(pageKey); err != nil {
		return 0, 0, err
	} else if ok {
		if page, err = positive(pageKey, s); err != nil {
			return 0, 0, err
		}
	}
	if s, ok, err := q.one(sizeKey); err != nil {
		return 0, 0, err
	} else if ok {
		if size, err = positive(sizeKey, s); err != nil {
			return 0, 0, err
		}
	}
	return page, min(size, MaxPageSize), nil
}

// positive parses a whole number of at least 1 written in ASCII digits
// (digits).
func positive(key, s string) (int, error) {
	return digits(key, s, 1, key+" must be a whole number of at least 1")
}

// digits parses a whole number of at least least written in ASCII digits,
// or answers EINVALID with msg. Numbers too large for an int32 are taken as
// the largest: a page that far is past the end, a size or a limit that
// large is capped anyway.
func digits(key, s string, least int64, msg string) (int, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, paramError(key, msg)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt32 {
		n = math.MaxInt32 // only digits, so the only failure is the range
	}
	if n < least {
		return 0, paramError(key, msg)
	}
	return int(n), nil
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
