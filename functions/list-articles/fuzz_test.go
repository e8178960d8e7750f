package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"stampduty/shared/catalogue"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
	"stampduty/shared/testkit/fake"
	"stampduty/shared/testkit/functest"
)

// newFuzzCatalogue returns 20 articles, not stored in id order, with ties on
// every sort field and a missing fixed amount on most of them. Its All
// returns the same slice every time, as the article cache does, so a
// handler that reorders it in place is caught.
func newFuzzCatalogue(tb testing.TB) fake.Articles {
	tb.Helper()
	factor, err := stampduty.ParseDecimal("0.06")
	if err != nil {
		tb.Fatal(err)
	}
	purposes := []string{"Affidavit", "Rent Agreement", "Sale Deed", "affidavit", "Gift Deed", "Zeta Bond", "Éclat Deed"}
	states := []string{"Karnataka", "Delhi", "Tamil Nadu", "Goa"}
	var c fake.Articles
	for i := range 20 {
		id := int64((i*7)%20 + 1) // 1..20, shuffled
		a := stampduty.Article{ID: id, DocumentID: fmt.Sprintf("a%023d", id), PurposeName: purposes[i%len(purposes)],
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

// fuzzSpec is what the article list accepts, per the README.
var fuzzSpec = strapiquery.ListSpec{
	Sortable: []string{"id", "purpose_name", "state", "min", "max", "fixed"},
	Fields: []string{"purpose_name", "state", "min", "max", "fixed",
		"toFollowConsiderationPrice", "amountPercentConsideration"},
}

// sortValue is an article's value for a sort field, per the README: text
// compared byte-wise, numbers by value, a missing fixed after every amount.
func sortValue(a stampduty.Article, field string) (text string, num int64) {
	switch field {
	case "purpose_name":
		return a.PurposeName, 0
	case "state":
		return a.State, 0
	case "id":
		return "", a.ID
	case "min":
		return "", a.Min
	case "max":
		return "", a.Max
	case "fixed":
		if a.Fixed == nil {
			return "", math.MaxInt64
		}
		return "", *a.Fixed
	}
	panic("unknown sort field " + field)
}

// byKey orders two articles by one sort key, its direction included.
func byKey(k strapiquery.SortKey) func(a, b stampduty.Article) int {
	return func(a, b stampduty.Article) int {
		ta, na := sortValue(a, k.Field)
		tb, nb := sortValue(b, k.Field)
		c := cmp.Or(strings.Compare(ta, tb), cmp.Compare(na, nb))
		if k.Desc {
			return -c
		}
		return c
	}
}

// expectedOrder returns the ids of the catalogue sorted by keys, ties broken
// by id ascending: sorted by id, then stably by each key from the last to
// the first, so that the first key decides and each next one breaks ties.
func expectedOrder(arts []stampduty.Article, keys []strapiquery.SortKey) []int64 {
	sorted := slices.Clone(arts)
	slices.SortFunc(sorted, byKey(strapiquery.SortKey{Field: "id"}))
	for _, k := range slices.Backward(keys) {
		slices.SortStableFunc(sorted, byKey(k))
	}
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
		"filters[state][$eq]=Goa&sort=min:desc", "filters[$or][0][fixed][$null]=true&filters[$or][1][min][$gt]=0",
		"filters[$not][purpose_name][$containsi]=DEED&pagination[start]=2&pagination[limit]=3",
		"filters[fixed][$notIn][0]=0&pagination[withCount]=false", "fields[0]=state&populate=*&status=draft",
		"filters[amountPercentConsideration][$between][0]=0.01&filters[amountPercentConsideration][$between][1]=1",
		"filters[price][$eq]=1", "filters[min][$gt]=x", "pagination[start]=1&pagination[page]=1",
	} {
		f.Add(s)
	}
	for _, s := range functest.QueryCorpus(f) {
		f.Add(s)
	}
	arts := newFuzzCatalogue(f)
	before := slices.Clone(arts)
	routes := (&handler{articles: &catalogue.Lister{Articles: arts}}).routes()
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
		if !slices.EqualFunc(arts, before, func(a, b stampduty.Article) bool { return a.ID == b.ID }) {
			t.Fatalf("query %q reordered the cached catalogue", raw)
		}
		switch status {
		case 200:
			checkArticlePage(t, raw, arts, body)
		case 400:
			functest.CheckQueryRefused(t, status, body)
		default:
			t.Fatalf("query %q: status %d, want 200 or 400: %s", raw, status, body)
		}
	})
}

// checkArticlePage fails unless body is {"data": [...], "meta":
// {"pagination": {...}}} with data exactly the named window of the
// catalogue, filtered as the query's filters say, in the order its sort
// parameters give.
func checkArticlePage(t *testing.T, raw string, arts []stampduty.Article, body []byte) {
	t.Helper()
	// The query, read as the README says.
	l, err := strapiquery.ParseList(raw, fuzzSpec)
	if err != nil {
		t.Fatalf("query %q: 200, but ParseList refuses it: %v", raw, err)
	}
	f, err := strapiquery.Compile(l.Filters, strapiquery.ArticleFields)
	if err != nil {
		t.Fatalf("query %q: 200, but its filters are refused: %v", raw, err)
	}
	var kept []stampduty.Article
	for _, a := range arts {
		if f.Match(strapiquery.ArticleRow(a)) && !l.Draft {
			kept = append(kept, a)
		}
	}
	got, start, limit := functest.CheckPage(t, raw, body, "meta", len(kept))
	if sameSortIndex(raw) {
		// sort[0] and sort[00] would both be index 0, in no stable order:
		// such a query must be refused, never answered.
		t.Fatalf("query %q: 200 with two sort[N] keys of the same N", raw)
	}
	order := expectedOrder(kept, l.Sort)
	var want []int64
	if start < len(order) {
		want = order[start:min(start+limit, len(order))]
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("query %q: sort %v, items %d+%d: ids %v, want %v", raw, l.Sort, start, limit, got, want)
	}
	if len(l.Sort) > 0 && len(got) > 1 {
		// The first key alone, in the response as sent.
		byID := map[int64]stampduty.Article{}
		for _, a := range arts {
			byID[a.ID] = a
		}
		for i := 1; i < len(got); i++ {
			if byKey(l.Sort[0])(byID[got[i-1]], byID[got[i]]) > 0 {
				t.Fatalf("query %q: ids %d, %d out of %v order", raw, got[i-1], got[i], l.Sort[0])
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
		if k == "sort" || !strapiquery.IsSortKey(k) {
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
