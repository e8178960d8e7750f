package strapiquery

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"stampduty/shared/stampduty"
)

// Page sizes of list endpoints.
const (
	DefaultPageSize = 25
	MaxPageSize     = 100
)

// Query is a parsed query string.
type Query struct {
	values url.Values
}

// ParseQuery parses a raw (still percent-encoded) query string and refuses
// keys for which known returns false.
func ParseQuery(raw string, known func(key string) bool) (Query, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return Query{}, paramError("query", "The query string is malformed")
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known(k) {
			return Query{}, paramError(k, fmt.Sprintf("Invalid query parameter %s", k))
		}
	}
	return Query{values: v}, nil
}

func paramError(key, msg string) error {
	return &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: key, Message: msg}}}
}

// Value returns the single value of key; ok is false when the key is
// absent, and a key given more than once is EINVALID.
func (q Query) Value(key string) (v string, ok bool, err error) { return q.one(key) }

// one returns the single value of key; ok is false when the key is absent.
func (q Query) one(key string) (string, bool, error) {
	vs, ok := q.values[key]
	if !ok {
		return "", false, nil
	}
	if len(vs) > 1 {
		return "", false, paramError(key, key+" must be given once")
	}
	return vs[0], true, nil
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

// SortKey is one key of a sort: a field and its direction.
type SortKey struct {
	Field string
	Desc  bool
}

// IsSortKey reports whether key is a sort parameter: sort or sort[N], N
// written without leading zeros.
func IsSortKey(key string) bool {
	_, ok := sortIndex(key)
	return ok || key == "sort"
}

func sortIndex(key string) (int, bool) {
	if !strings.HasPrefix(key, "sort[") || !strings.HasSuffix(key, "]") {
		return 0, false
	}
	n := key[len("sort[") : len(key)-1]
	// One spelling per index: sort[00] would be a second sort[0].
	if n == "" || len(n) > 3 || (n[0] == '0' && n != "0") {
		return 0, false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return 0, false
		}
	}
	i, _ := strconv.Atoi(n)
	return i, true
}

// Sort reads the sort keys: sort[0]=field:dir, sort[1]=..., or
// sort=field:dir (several separated by commas). The direction is asc or desc
// (any case) and defaults to asc; fields must be in allowed.
func (q Query) Sort(allowed []string) ([]SortKey, error) {
	type item struct {
		index int
		key   string
	}
	var items []item
	for k := range q.values {
		if i, ok := sortIndex(k); ok {
			items = append(items, item{i, k})
		}
	}
	sort.Slice(items, func(a, b int) bool { return items[a].index < items[b].index })
	var specs []string
	var keys []string
	if _, ok := q.values["sort"]; ok {
		if len(items) > 0 {
			return nil, paramError("sort", "Use either sort or sort[N], not both")
		}
		v, _, err := q.one("sort")
		if err != nil {
			return nil, err
		}
		specs = append(specs, v)
		keys = append(keys, "sort")
	}
	for _, it := range items {
		v, _, err := q.one(it.key)
		if err != nil {
			return nil, err
		}
		specs = append(specs, v)
		keys = append(keys, it.key)
	}
	var out []SortKey
	for i, spec := range specs {
		for _, part := range strings.Split(spec, ",") {
			k, err := parseSortKey(keys[i], strings.TrimSpace(part), allowed)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	return out, nil
}

func parseSortKey(param, s string, allowed []string) (SortKey, error) {
	field, dir, hasDir := strings.Cut(s, ":")
	k := SortKey{Field: field}
	known := false
	for _, a := range allowed {
		known = known || a == field
	}
	if !known {
		return k, paramError(param, fmt.Sprintf("%s: cannot sort by %q; sortable fields are %s", param, field, strings.Join(allowed, ", ")))
	}
	if hasDir {
		switch strings.ToLower(dir) {
		case "asc":
		case "desc":
			k.Desc = true
		default:
			return k, paramError(param, fmt.Sprintf("%s: the direction must be asc or desc", param))
		}
	}
	return k, nil
}
