package strapiquery

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// fuzzSortable are the sort fields of the article list.
var fuzzSortable = []string{"id", "purpose_name", "state", "min", "max", "fixed"}

// fuzzKnown are the parameter sets a list endpoint may accept: every key (so
// that Page and Sort see any query), the order list's and the article list's.
var fuzzKnown = []struct {
	name  string
	known func(string) bool
}{
	{"any", func(string) bool { return true }},
	{"orders", func(k string) bool { return k == "page" || k == "pageSize" }},
	{"articles", func(k string) bool {
		return k == "pagination[page]" || k == "pagination[pageSize]" || IsSortKey(k)
	}},
}

// fuzzPageNames are the two spellings of the page parameters.
var fuzzPageNames = [][2]string{{"page", "pageSize"}, {"pagination[page]", "pagination[pageSize]"}}

// FuzzQuery feeds raw query strings to Parse, Page and Sort. None may
// panic; every error is an EINVALID *stampduty.Error naming a parameter; a page
// that parses is at least 1 with a size in [1, MaxPageSize], and equals what
// the README's rules (ASCII digits only, given once, capped) say it is.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		"", "page=1&pageSize=25", "page=3&pageSize=10", "pageSize=101", "page=0", "page=-1", "page=+1",
		"page=%201", "page=1e2", "page=0001", "page=99999999999999999999999", "pageSize=99999999999999999999999",
		"page=1&page=2", "page=", "page", "=", "&&&", "page=%", "%zz=1", "page=1;pageSize=2", "page=%00",
		"page=%EF%BC%91", "pagination%5Bpage%5D=2&pagination%5BpageSize%5D=5", "pagination[page]=1&pagination[pageSize]=100",
		"sort=purpose_name", "sort=purpose_name:desc,id", "sort%5B0%5D=purpose_name%3Aasc", "sort[1]=id:DESC&sort[0]=state",
		"sort[10]=id&sort[2]=state", "sort=price", "sort[0]=id:sideways", "sort=id&sort[0]=id", "sort[0]=id&sort[0]=state",
		"sort=id&sort=min", "sort=", "sort=id,", "sort=fixed:DeSc", "sort[999]=id", "sort[1000]=id", "sort[-1]=id",
		"sort[00]=min&sort[0]=max", "sort[]=id", "sort=id:asc:desc", "sort=%20id%20:%20asc",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, urlErr := url.ParseQuery(raw)
		for _, k := range fuzzKnown {
			q, err := Parse(raw, k.known)
			if err != nil {
				requireInvalid(t, "Parse/"+k.name, raw, err)
				continue
			}
			if urlErr != nil {
				t.Fatalf("Parse/%s accepted %q, which net/url refuses: %v", k.name, raw, urlErr)
			}
			for _, names := range fuzzPageNames {
				page, size, err := q.Page(names[0], names[1])
				wantPage, pageOK := expectNumber(q.values[names[0]], 1, math.MaxInt32)
				wantSize, sizeOK := expectNumber(q.values[names[1]], DefaultPageSize, MaxPageSize)
				if err != nil {
					requireInvalid(t, "Page("+names[0]+")", raw, err)
					if pageOK && sizeOK {
						t.Fatalf("Page(%s) refused %q: %v", names[0], raw, err)
					}
					continue
				}
				if page < 1 || size < 1 || size > MaxPageSize {
					t.Fatalf("Page(%s) of %q = %d, %d: out of range", names[0], raw, page, size)
				}
				if !pageOK || !sizeOK {
					t.Fatalf("Page(%s) accepted %q as %d, %d", names[0], raw, page, size)
				}
				if got, want := page, wantPage; got != want {
					t.Fatalf("Page(%s) of %q: page = %d, want %d", names[0], raw, got, want)
				}
				if got, want := size, wantSize; got != want {
					t.Fatalf("Page(%s) of %q: size = %d, want %d", names[0], raw, got, want)
				}
			}
			keys, err := q.Sort(fuzzSortable)
			if err != nil {
				requireInvalid(t, "Sort", raw, err)
				continue
			}
			for _, key := range keys {
				if !slices.Contains(fuzzSortable, key.Field) {
					t.Fatalf("Sort of %q gave the field %q", raw, key.Field)
				}
			}
		}
	})
}

// requireInvalid fails unless err is an EINVALID *stampduty.Error (not merely
// wrapping one) with a message and at least one failing field.
func requireInvalid(t *testing.T, what, raw string, err error) {
	t.Helper()
	e, ok := err.(*stampduty.Error)
	if !ok {
		t.Fatalf("%s of %q: error %v is a %T, not a *stampduty.Error", what, raw, err, err)
	}
	if got, want := e.Code, stampduty.EINVALID; got != want {
		t.Fatalf("%s of %q: code = %q, want %q", what, raw, got, want)
	}
	if e.Message == "" || len(e.Fields) == 0 {
		t.Fatalf("%s of %q: error %+v has no message or no field", what, raw, e)
	}
	if got, want := function.NewErrorBody(err).Error.Status, 400; got != want {
		t.Fatalf("%s of %q: status = %d, want %d", what, raw, got, want)
	}
}

// expectNumber is the README's rule for a page parameter with the given
// values: def when absent; refused (ok false) when given more than once,
// empty, not only ASCII digits, or below 1; otherwise its value, capped at
// limit.
func expectNumber(values []string, def, limit int) (n int, ok bool) {
	switch len(values) {
	case 0:
		return def, true
	case 1:
	default:
		return 0, false
	}
	s := values[0]
	if s == "" {
		return 0, false
	}
	nonZero := false
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		nonZero = nonZero || s[i] != '0'
	}
	if !nonZero {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > uint64(limit) {
		return limit, true
	}
	return int(v), true
}

// FuzzParseList feeds raw query strings to ParseList with both lists'
// specs. It must never panic; every error is an EINVALID *stampduty.Error
// naming a parameter; a query it accepts has a window of at least one and
// at most MaxPageSize items, only allowed fields, and filters that
// Compile either accepts or refuses as EINVALID.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{
		"", "filters[state][$eq]=Goa", "filters[$or][0][state][$eq]=Goa&filters[$or][1][min][$gt]=1",
		"filters[state][$in][]=Goa", "filters[$not][fixed][$null]=1", "fields=state,min", "fields[0]=x",
		"pagination[start]=1&pagination[limit]=-1", "pagination[withCount]=f", "page=2&pagination[page]=2",
		"status=draft", "populate[a][b]=c", "filters[a][$eq][0][b]=1", "filters[[", "filters][", "filters[$and]=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, spec := range []ListSpec{articleSpec, orderSpec} {
			l, err := ParseList(raw, spec)
			if err != nil {
				requireInvalid(t, "ParseList", raw, err)
				continue
			}
			start, limit := l.Paging.Window()
			if start < 0 || limit < 1 || limit > MaxPageSize {
				t.Fatalf("ParseList(%q): window %d+%d out of range", raw, start, limit)
			}
			for _, fl := range l.Fields {
				if !slices.Contains(spec.Fields, fl) {
					t.Fatalf("ParseList(%q): field %q not allowed", raw, fl)
				}
			}
			if _, err := Compile(l.Filters, ArticleFields); err != nil {
				if got, want := stampduty.ErrorCode(err), stampduty.EINVALID; got != want {
					t.Fatalf("Compile of %q: code %q, want %q", raw, got, want)
				}
			}
		}
	})
}
