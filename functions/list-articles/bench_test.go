package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"stampduty/shared/catalogue"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/fake"
)

// benchArticles returns n articles: fixed amounts, ranges and articles
// that follow the consideration price, over several purposes and states.
func benchArticles(b *testing.B, n int) []stampduty.Article {
	b.Helper()
	purposes := []string{"Affidavit", "Rent Agreement", "Sale Deed", "Power of Attorney", "Gift Deed",
		"Mortgage Deed", "Partnership Deed", "Indemnity Bond", "Leave and License Agreement", "Conveyance Deed"}
	states := []string{"Karnataka", "Maharashtra", "Delhi", "Tamil Nadu", "Telangana",
		"Uttar Pradesh", "West Bengal", "Gujarat", "Kerala", "Dadra and Nagar Haveli and Daman and Diu"}
	factor, err := stampduty.ParseDecimal("0.06")
	if err != nil {
		b.Fatal(err)
	}
	arts := make([]stampduty.Article, 0, n)
	for i := range n {
		doc, err := stampduty.NewDocumentID()
		if err != nil {
			b.Fatal(err)
		}
		a := stampduty.Article{ID: int64(i + 1), DocumentID: doc, PurposeName: purposes[i%len(purposes)],
			State: states[(i/len(purposes))%len(states)], Min: 100, Max: 500000}
		switch i % 3 {
		case 0:
			fixed := int64(20 + i)
			a.Min, a.Max, a.Fixed = fixed, fixed, &fixed
		case 1:
			a.FollowsConsideration, a.Factor = true, &factor
		}
		arts = append(arts, a)
	}
	return arts
}

// BenchmarkEncodeArticles measures a warm list-articles request with the
// catalogue cached: parsing the query, sorting 100 articles by purpose name
// and encoding them, through the handler's routes.
func BenchmarkEncodeArticles(b *testing.B) {
	h := &handler{articles: &catalogue.Lister{Articles: fake.Articles(benchArticles(b, 100))}}
	srv := h.routes()
	req := httptest.NewRequest(http.MethodGet, "/api/stamp-duty-datas?pagination%5BpageSize%5D=100&sort%5B0%5D=purpose_name%3Aasc", nil)
	w := &fake.DiscardWriter{}
	srv.ServeHTTP(w, req)
	if w.Status != http.StatusOK {
		b.Fatalf("status %d", w.Status)
	}
	b.SetBytes(int64(w.N))
	b.ReportAllocs()
	for b.Loop() {
		w.N, w.Status = 0, 0
		srv.ServeHTTP(w, req)
		if w.Status != http.StatusOK {
			b.Fatalf("status %d", w.Status)
		}
	}
}
