package strapiquery

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

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
