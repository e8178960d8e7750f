package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
	"stampduty/shared/testkit/fake"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// fuzzTotal is how many orders the dev owner has.
const fuzzTotal = 37

// newFuzzOrders returns a store where the dev owner has fuzzTotal orders; the
// order of seq n has id n.
func newFuzzOrders(tb testing.TB) *fake.Orders {
	s := &fake.Orders{}
	for seq := int64(1); seq <= fuzzTotal; seq++ {
		_, err := s.Create(context.Background(), localdb.DevOwner, stampduty.Order{
			ID:           seq,
			DocumentID:   fmt.Sprintf("o%023d", seq),
			CreatedAt:    stampduty.FormatTime(time.Date(2026, 11, 21, 4, 9, int(seq), 0, time.UTC)),
			Fulfillments: []stampduty.Fulfillment{{ID: 1000 + seq, Status: stampduty.StatusPending}},
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// fuzzList sends GET /api/live-orders with the raw query string as is and
// the dev token.
func fuzzList(routes http.Handler, rawQuery string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/api/live-orders", nil)
	r.URL.RawQuery = rawQuery
	r.Header.Set("Authorization", "Bearer "+localdb.DevToken)
	w := httptest.NewRecorder()
	routes.ServeHTTP(w, r)
	return w
}

// FuzzListOrders sends arbitrary raw query strings to the order list over
// an in-memory store of fuzzTotal orders. It must never panic or answer 5xx:
// a 200 is {data, pagination} with the page the pagination names, newest
// first; anything else is a 400 in the Strapi envelope.
func FuzzListOrders(f *testing.F) {
	for _, s := range []string{
		"", "page=1&pageSize=25", "page=2", "page=4&pageSize=7", "page=02&pageSize=010", "pageSize=1000", "pageSize=1",
		"page=99999999999999999999", "page=2147483647&pageSize=100", "page=0", "page=-1", "page=+1", "page=%201",
		"page=1e2", "page=1.0", "page=", "page", "pageSize=0", "page=1&page=1", "page=1&page=2", "pagination[page]=1",
		"pagination%5Bpage%5D=1", "limit=5", "page=%", "%zz", "page=1;pageSize=2", "page=%00", "page=%EF%BC%91",
		"&&&", "=", "==", "page==1", "Page=1", "page=1#frag", "sort=id", "page=1&x",
		"filters[documentId][$eq]=o00000000000000000000005", "filters[documentId][$in][0]=o00000000000000000000003&filters[documentId][$in][1]=o00000000000000000000030&filters[documentId][$in][2]=nope&pageSize=1&page=2",
		"filters[documentId][$in][0]=o00000000000000000000003&pagination[withCount]=false", "pagination[start]=35&pagination[limit]=5",
		"status=draft", "sort=createdAt:desc", "sort=createdAt", "fields[0]=createdAt", "filters[state][$eq]=Goa",
		"page=1&pagination[page]=1",
	} {
		f.Add(s)
	}
	for _, s := range functest.QueryCorpus(f) {
		f.Add(s)
	}
	tokens := fake.NewTokens(localdb.Hasher(), map[string]string{localdb.DevToken: localdb.DevOwner})
	routes := (&handler{auth: auth.NewAuthenticator(tokens, localdb.Hasher(), time.Minute), orders: newFuzzOrders(f), files: fake.Files{}}).routes()
	f.Fuzz(func(t *testing.T, raw string) {
		w := fuzzList(routes, raw)
		status, body := w.Code, w.Body.Bytes()
		if status >= 500 {
			t.Fatalf("query %q: status %d: %s", raw, status, body)
		}
		if !json.Valid(body) {
			t.Fatalf("query %q: status %d: body is not JSON: %q", raw, status, body)
		}
		switch status {
		case 200:
			checkOrderPage(t, raw, body)
		case 400:
			functest.CheckQueryRefused(t, status, body)
		default:
			t.Fatalf("query %q: status %d, want 200 or 400: %s", raw, status, body)
		}
	})
}

// fuzzSpec is what the order list accepts, per the README.
var fuzzSpec = strapiquery.ListSpec{Sortable: []string{"createdAt"}, Fields: []string{"createdAt", "updatedAt"}, TopLevelPage: true}

// checkOrderPage fails unless body is {"data": [...], "pagination": {...}}
// with a pagination block in range and data exactly the orders of the
// window it names, newest first: of the documentIds the filters name, when
// they name some.
func checkOrderPage(t *testing.T, raw string, body []byte) {
	t.Helper()
	l, err := strapiquery.ParseList(raw, fuzzSpec)
	if err != nil {
		t.Fatalf("query %q: 200, but ParseList refuses it: %v", raw, err)
	}
	docs, filtered, err := strapiquery.DocumentIDs(l.Filters)
	if err != nil {
		t.Fatalf("query %q: 200, but its filters are refused: %v", raw, err)
	}
	var all []int64 // the ids of the orders the query selects, newest first
	for seq := int64(fuzzTotal); seq >= 1 && !l.Draft; seq-- {
		if !filtered || slices.Contains(docs, fmt.Sprintf("o%023d", seq)) {
			all = append(all, seq)
		}
	}
	got, start, limit := functest.CheckPage(t, raw, body, "pagination", len(all))
	var want []int64
	if start < len(all) {
		want = all[start:min(start+limit, len(all))]
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("query %q: items %d+%d: ids %v, want %v", raw, start, limit, got, want)
	}
}
