package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/fake"
	"stampduty/shared/functest"
	"stampduty/shared/rules"
	"stampduty/shared/store/localdb"
)

// fuzzTotal is how many orders the dev owner has.
const fuzzTotal = 37

// newFuzzOrders returns a store where the dev owner has fuzzTotal orders; the
// order of seq n has id n.
func newFuzzOrders(tb testing.TB) *fake.Orders {
	s := &fake.Orders{}
	for seq := int64(1); seq <= fuzzTotal; seq++ {
		_, err := s.Create(context.Background(), localdb.DevOwner, rules.Order{
			ID:           seq,
			DocumentID:   fmt.Sprintf("o%023d", seq),
			CreatedAt:    rules.FormatTime(time.Date(2026, 11, 21, 4, 9, int(seq), 0, time.UTC)),
			Fulfillments: []rules.Fulfillment{{ID: 1000 + seq, Status: rules.StatusPending}},
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

// checkOrderPage fails unless body is {"data": [...], "pagination": {...}}
// with a pagination block in range for fuzzTotal orders and data exactly
// the orders of that page, newest first.
func checkOrderPage(t *testing.T, raw string, body []byte) {
	t.Helper()
	got, page, size := functest.CheckPage(t, raw, body, "pagination", fuzzTotal)
	var want []int64
	for seq := fuzzTotal - (page-1)*size; seq > max(0, fuzzTotal-page*size); seq-- {
		want = append(want, int64(seq))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("query %q: page %d of %d: ids %v, want %v", raw, page, size, got, want)
	}
}
