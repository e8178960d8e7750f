package main

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// entriesSpec is what the entries list accepts of Strapi's parameters: its
// one order (createdAt:desc), no field selection.
var entriesSpec = strapiquery.ListSpec{Sortable: []string{"createdAt"}}

// entriesResponse is a page of entries: {"data": [...], "meta":
// {"pagination": {...}, "nextCursor": "…" | null}}.
type entriesResponse struct {
	Data []accounts.EntryJSON `json:"data"`
	Meta entriesMeta          `json:"meta"`
}

// entriesMeta is a page's meta: Strapi's pagination block (page,
// pageSize, and pageCount and total when they are known without reading
// every entry: not under a type or order filter) and the cursor of the next
// page.
type entriesMeta struct {
	Pagination strapiquery.PageBlock `json:"pagination"`
	NextCursor *string               `json:"nextCursor"`
}

// entries answers a page of the caller's entries, newest first.
func (h *handler) entries(r *http.Request, owner string) (any, error) {
	if err := function.CheckMode(r, owner); err != nil {
		return nil, err
	}
	q, paged, err := entryQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	p, err := h.accounts.Entries(r.Context(), owner, q)
	if err != nil {
		return nil, err
	}
	out := entriesResponse{Data: make([]accounts.EntryJSON, 0, len(p.Entries))}
	for _, e := range p.Entries {
		out.Data = append(out.Data, accounts.EntryView(e))
	}
	size := q.PageSize
	out.Meta.Pagination.PageSize = &size
	if paged {
		page := max(q.Page, 1)
		out.Meta.Pagination.Page = &page
	}
	if p.Total >= 0 {
		total, count := int(p.Total), int((p.Total+int64(size)-1)/int64(size))
		out.Meta.Pagination.Total, out.Meta.Pagination.PageCount = &total, &count
	}
	if p.Next > 0 {
		c := accounts.FormatCursor(p.Next)
		out.Meta.NextCursor = &c
	}
	return out, nil
}

// entryQuery reads the entries list's query: Strapi's pagination by page
// (pagination[page], pagination[pageSize] ≤ 100, default 25; not by
// offset), or a cursor (a page's nextCursor) with pagination[pageSize];
// sort createdAt:desc only; filters on createdAt ($gte, $lt), type ($eq,
// $in) and order ($eq), all of which must hold; any other filter is
// "Invalid key". paged says the query asks for a page by number; a
// filter on type or order without one reads by cursor (one read of the
// ledger, which may come back short with a nextCursor).
func entryQuery(raw string) (accounts.EntryQuery, bool, error) {
	l, err := strapiquery.ParseList(raw, entriesSpec)
	if err != nil {
		return accounts.EntryQuery{}, false, err
	}
	if l.Paging.Offset {
		const msg = "The entries list is paged by pagination[page] and pagination[pageSize], or by cursor"
		return accounts.EntryQuery{}, false, &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "pagination", Message: msg}}}
	}
	for _, k := range l.Sort {
		if !k.Desc {
			const msg = "The entries list is sorted newest first only: sort=createdAt:desc"
			return accounts.EntryQuery{}, false, &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "sort", Message: msg}}}
		}
	}
	q := accounts.EntryQuery{Page: l.Paging.Page, PageSize: l.Paging.PageSize}
	if err := entryFilters(l.Filters, &q); err != nil {
		return accounts.EntryQuery{}, false, err
	}
	v, _ := url.ParseQuery(raw) // ParseList has read it
	_, paged := v["pagination[page]"]
	if cs, ok := v["cursor"]; ok {
		if paged {
			return accounts.EntryQuery{}, false, paramError("cursor", "Use either cursor or pagination[page], not both")
		}
		if len(cs) > 1 {
			return accounts.EntryQuery{}, false, paramError("cursor", "cursor must be given once")
		}
		if q.Cursor, err = accounts.ParseCursor(cs[0]); err != nil {
			return accounts.EntryQuery{}, false, err
		}
		q.Page = 0
	} else if !paged && (len(q.Filter.Types) > 0 || q.Filter.Order != "") {
		q.Page = 0 // a filtered first page is the cursor's: one read
	}
	return q, paged || q.Page > 0, nil
}

// entryFilters reads the conditions of e (an $and of them) into q.
func entryFilters(e strapiquery.Expr, q *accounts.EntryQuery) error {
	seen := map[string]bool{}
	var walk func(e strapiquery.Expr) error
	walk = func(e strapiquery.Expr) error {
		if e.Op == "$and" && e.Field == "" {
			for _, a := range e.Args {
				if err := walk(a); err != nil {
					return err
				}
			}
			return nil
		}
		path := "filters[" + e.Field + "][" + e.Op + "]"
		switch {
		case e.Field == "" || len(e.Args) > 0:
			return strapiquery.InvalidKey(e.Op)
		case e.Field != "createdAt" && e.Field != "type" && e.Field != "order":
			return strapiquery.InvalidKey(e.Field)
		case seen[path]:
			return paramError(path, path+" must be given once")
		case len(e.Values) == 0:
			return paramError(path, path+" needs a value")
		}
		seen[path] = true
		switch key := e.Field + " " + e.Op; key {
		case "createdAt $gte", "createdAt $lt":
			if len(e.Values) != 1 {
				return paramError(path, path+" takes one time")
			}
			t, err := parseTime(path, e.Values[0])
			if err != nil {
				return err
			}
			if e.Op == "$gte" {
				q.From = t
			} else {
				q.Before = t
			}
		case "type $eq", "type $in":
			if e.Op == "$eq" && len(e.Values) != 1 {
				return paramError(path, path+" takes one type; use filters[type][$in] for several")
			}
			for _, v := range e.Values {
				if !slices.Contains(accounts.Types, v) {
					return paramError(path, path+" must be one of "+strings.Join(accounts.Types, ", "))
				}
			}
			if q.Filter.Types != nil { // both $eq and $in: both must hold
				q.Filter.Types = slices.DeleteFunc(q.Filter.Types, func(t string) bool { return !slices.Contains(e.Values, t) })
				if len(q.Filter.Types) == 0 {
					return paramError(path, path+" leaves no type that the other type filter allows")
				}
			} else {
				q.Filter.Types = slices.Compact(slices.Sorted(slices.Values(e.Values)))
			}
		case "order $eq":
			if len(e.Values) != 1 || e.Values[0] == "" {
				return paramError(path, path+" takes one order's documentId")
			}
			q.Filter.Order = e.Values[0]
		default:
			return strapiquery.InvalidKey(e.Op)
		}
		return nil
	}
	return walk(e)
}

// parseTime reads a createdAt bound: an RFC 3339 time, or a date
// (YYYY-MM-DD), India's midnight starting it.
func parseTime(path, s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := accounts.ParseDay(path, s); err == nil {
		return t, nil
	}
	return time.Time{}, paramError(path, path+" must be a time (RFC 3339, such as 2026-04-01T00:00:00Z) or a date (YYYY-MM-DD, India's)")
}

// paramError is a 400 naming the query parameter key.
func paramError(key, msg string) error {
	return &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: key, Message: msg}}}
}
