package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"stampduty/shared/fake"
	"stampduty/shared/functest"
	"stampduty/shared/rules"
	"stampduty/shared/strapi"
)

// newFuzzCatalogue returns 20 articles, not stored in id order, with ties on
// every sort field and a missing fixed amount on most of them. Its All
// returns the same slice every time, as the article cache does, so a
// handler that reorders it in place is caught.
func newFuzzCatalogue(tb testing.TB) fake.Articles {
	tb.Helper()
	factor, err := rules.ParseDecimal("0.06")
	if err != nil {
		tb.Fatal(err)
	}
	purposes := []string{"Affidavit", "Rent Agreement", "Sale Deed", "affidavit", "Gift Deed", "Zeta Bond", "Éclat Deed"}
	states := []string{"Karnataka", "Delhi", "Tamil Nadu", "Goa"}
	var c fake.Articles
	for i := range 20 {
		id := int64((i*7)%20 + 1) // 1..20, shuffled
		a := rules.Article{ID: id, DocumentID: fmt.Sprintf("a%023d", id), PurposeName: purposes[i%len(purposes)],
			State: states[i%len(states)], Min: int64(i%3) * 100, Max: 500 + int64(i%4)*250}
		switch i % 4 {
		case 0:
			fixed := a.Min + int64(i%2)*50
			a.Fixed = &fixed
		case 1:
			a.FollowsConsideration, a.Factor = true, &factor
		}
		c = append(c, a)
	}
	return c
}

// fuzzSortFields are the sortable fields, per the README.
var fuzzSortFields = []string{"id", "purpose_name", "state", "min", "max", "fixed"}

// fuzzKnownParam reports the article list's parameters, per the README.
func fuzzKnownParam(k string) bool {
	return k == "pagination[page]" || k == "pagination[pageSize]" || strapi.IsSortKey(k)
}

// compareBy orders two articles by one field, per the README: strings
// byte-wise, a missing fixed after every amount (before them descending).
func compareBy(a, b rules.Article, field string) int {
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
		const missing = math.MaxInt64 // after every amount
		fa, fb := int64(missing), int64(missing)
		if a.Fixed != nil {
			fa = *a.Fixed
		}
		if b.Fixed != nil {
			fb = *b.Fixed
		}
		return cmp.Compare(fa, fb)
	}
	panic("unknown sort field " + field)
}

// expectedOrder returns the ids of the catalogue sorted by keys, ties broken
// by id ascending.
func expectedOrder(arts []rules.Article, keys []strapi.SortKey) []int64 {
	sorted := slices.Clone(arts)
	slices.SortFunc(sorted, func(a, b rules.Article) int {
		for _, k := range keys {
			c := compareBy(a, b, k.Field)
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	ids := make([]int64, len(sorted))
	for i, a := range sorted {
		ids[i] = a.ID
	}
	return ids
}

// FuzzListArticles sends arbitrary raw query strings to the article list
// over a 20-article catalogue. It must never panic or answer 5xx, nor
// reorder the cached catalogue; a 200 is {data, meta: {pagination}} whose
// data is the named page of the catalogue sorted as the sort parameters say
// (ties by id); anything else is a 400 in the Strapi envelope.
func FuzzListArticles(f *testing.F) {
	for _, s := range []string{
		"", "pagination%5Bpage%5D=1&pagination%5BpageSize%5D=25&sort%5B0%5D=purpose_name%3Aasc",
		"sort=fixed", "sort=fixed:desc", "sort[0]=fixed:DESC&sort[1]=purpose_name", "sort=state:asc,min:desc,max",
		"sort[1]=id:desc&sort[0]=state", "sort[10]=max&sort[2]=state:desc", "sort[999]=min", "sort[1000]=min",
		"sort=price", "sort[0]=id:sideways", "sort=id&sort[0]=id", "sort[0]=id&sort[0]=state", "sort=id&sort=min:desc",
		"sort=", "sort=id,", "sort=%20fixed%20:%20desc", "sort[-1]=id", "sort[]=id", "sort[0]=min:asc&sort[00]=max:desc", "sort[0]=id:asc:desc",
		"pagination[page]=2&pagination[pageSize]=7", "pagination[pageSize]=1000", "pagination[page]=99999999999999999999",
		"pagination[page]=0", "pagination[pageSize]=-1", "pagination[page]=1&pagination[page]=1", "page=1",
		"pagination[page]=%", "%zz", "sort=id;min", "sort=%00", "&&&", "=",
	} {
		f.Add(s)
	}
	for _, s := range functest.QueryCorpus(f) {
		f.Add(s)
	}
	catalogue := newFuzzCatalogue(f)
	before := slices.Clone(catalogue)
	routes := (&handler{articles: catalogue}).routes()
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest(http.MethodGet, "/api/stamp-duty-datas", nil)
		r.URL.RawQuery = raw
		w := httptest.NewRecorder()
		routes.ServeHTTP(w, r)
		status, body := w.Code, w.Body.Bytes()
		if status >= 500 {
			t.Fatalf("query %q: status %d: %s", raw, status, body)
		}
		if !json.Valid(body) {
			t.Fatalf("query %q: status %d: body is not JSON: %q", raw, status, body)
		}
		if !slices.EqualFunc(catalogue, before, func(a, b rules.Article) bool { return a.ID == b.ID }) {
			t.Fatalf("query %q reordered the cached catalogue", raw)
		}
		switch status {
		case 200:
			checkArticlePage(t, raw, catalogue, body)
		case 400:
			checkEnvelope(t, status, body)
		default:
			t.Fatalf("query %q: status %d, want 200 or 400: %s", raw, status, body)
		}
	})
}

// checkArticlePage fails unless body is {"data": [...], "meta":
// {"pagination": {...}}} with data exactly the named page of the catalogue
// in the order the query's sort parameters give.
func checkArticlePage(t *testing.T, raw string, arts []rules.Article, body []byte) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatalf("query %q: 200 body: %v", raw, err)
	}
	if got, want := functest.JSONKeys(top), "data,meta"; got != want {
		t.Fatalf("query %q: keys = %s, want %s", raw, got, want)
	}
	if !strings.HasPrefix(string(top["data"]), "[") {
		t.Fatalf("query %q: data = %s, want an array", raw, top["data"])
	}
	var resp struct {
		Data []struct {
			ID int64 `json:"id"`
		} `json:"data"`
		Meta struct {
			Pagination map[string]int `json:"pagination"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("query %q: 200 body: %v", raw, err)
	}
	p := resp.Meta.Pagination
	if got, want := fmt.Sprint(slices.Sorted(maps.Keys(p))), "[page pageCount pageSize total]"; got != want {
		t.Fatalf("query %q: pagination keys = %s, want %s", raw, got, want)
	}
	page, size, total := p["page"], p["pageSize"], len(arts)
	if page < 1 || page > math.MaxInt32 || size < 1 || size > strapi.MaxPageSize {
		t.Fatalf("query %q: pagination %v out of range", raw, p)
	}
	if p["total"] != total || p["pageCount"] != (total+size-1)/size {
		t.Fatalf("query %q: pagination %v for %d articles", raw, p, total)
	}
	// The sort the query asks for, read as the README says.
	q, err := strapi.ParseQuery(raw, fuzzKnownParam)
	if err != nil {
		t.Fatalf("query %q: 200, but ParseQuery refuses it: %v", raw, err)
	}
	keys, err := q.Sort(fuzzSortFields)
	if err != nil {
		t.Fatalf("query %q: 200, but Sort refuses it: %v", raw, err)
	}
	if sameSortIndex(raw) {
		// sort[0] and sort[00] would both be index 0, in no stable order:
		// such a query must be refused, never answered.
		t.Fatalf("query %q: 200 with two sort[N] keys of the same N", raw)
	}
	order := expectedOrder(arts, keys)
	var want []int64
	if start := (page - 1) * size; start < total {
		want = order[start:min(start+size, total)]
	}
	var got []int64
	for _, a := range resp.Data {
		got = append(got, a.ID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("query %q: sort %v, page %d of %d: ids %v, want %v", raw, keys, page, size, got, want)
	}
	if len(keys) > 0 && len(resp.Data) > 1 {
		// The first key alone, in the response as sent.
		byID := map[int64]rules.Article{}
		for _, a := range arts {
			byID[a.ID] = a
		}
		for i := 1; i < len(got); i++ {
			c := compareBy(byID[got[i-1]], byID[got[i]], keys[0].Field)
			if keys[0].Desc {
				c = -c
			}
			if c > 0 {
				t.Fatalf("query %q: ids %d, %d out of %v order", raw, got[i-1], got[i], keys[0])
			}
		}
	}
	if _, err := url.ParseQuery(raw); err != nil {
		t.Fatalf("query %q: 200, but net/url refuses it: %v", raw, err)
	}
}

// sameSortIndex reports whether the query gives two sort[N] parameters
// whose N have the same value, such as sort[0] and sort[00].
func sameSortIndex(raw string) bool {
	v, _ := url.ParseQuery(raw)
	seen := map[int]bool{}
	for k := range v {
		if k == "sort" || !strapi.IsSortKey(k) {
			continue
		}
		i, err := strconv.Atoi(k[len("sort[") : len(k)-1])
		if err != nil {
			continue
		}
		if seen[i] {
			return true
		}
		seen[i] = true
	}
	return false
}

// checkEnvelope fails unless body is a Strapi ValidationError envelope for
// status with at least one failing parameter in its details.
func checkEnvelope(t *testing.T, status int, body []byte) {
	t.Helper()
	e := functest.CheckEnvelope(t, status, body)
	if e.Name != "ValidationError" || len(e.Paths) == 0 {
		t.Fatalf("status %d: want a ValidationError naming a parameter: %s", status, body)
	}
}
