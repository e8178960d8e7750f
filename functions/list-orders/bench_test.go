package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/strapiquery"
	"stampduty/shared/testkit/fake"
)

// benchOrders returns n realistic orders, every free-text field near its
// maximum length, built the way create-order builds them: from a validated
// request body, through stampduty.NewOrder.
func benchOrders(b *testing.B, n int) []stampduty.Order {
	b.Helper()
	doc, err := stampduty.NewDocumentID()
	if err != nil {
		b.Fatal(err)
	}
	art := stampduty.Article{ID: 7, DocumentID: doc, PurposeName: "Rent Agreement", State: "Karnataka", Min: 100, Max: 500}
	first := []string{"Venkata Subramanian Raghunathan Iyer", "Lakshmi Narasimha Srinivasa Murthy", "Mohammed Abdul Rahman Siddiqui Khan"}
	second := []string{"Prestige Estates Projects Limited", "Sobha Developers Private Limited", "Chandrasekhar Venkataraman Pillai"}
	now := time.Date(2026, 11, 21, 4, 9, 0, 0, time.UTC)
	orders := make([]stampduty.Order, 0, n)
	for i := range n {
		body := fmt.Sprintf(`{"amount": %d, "considerationPrice": 0,
			"description": "Rental agreement for residential flat %d in Prestige Lakeside Habitat, 11 months from 1 April 2026",
			"purpose": "Rent Agreement", "state": "Karnataka", "paidBy": "First Party", "purchasedBy": %q,
			"firstPartyMobileNumber": "98450%05d", "firstPartyName": %q, "secondPartyName": %q,
			"firstPartyAddress": "Flat %d, Prestige Lakeside Habitat, Varthur Main Road, Whitefield, Bengaluru - 560087",
			"secondPartyAddress": "No. 14, 2nd Cross, 5th Main Road, Indiranagar 1st Stage, Bengaluru, Karnataka - 560038",
			"firstPartyPan": "ABCPV%04dK", "secondPartyPan": "AAACP%04dQ"}`,
			100+i%400, 100+i, first[i%len(first)], i, first[i%len(first)], second[i%len(second)], 100+i, i, i)
		members, err := function.DecodeObject([]byte(body))
		if err != nil {
			b.Fatal(err)
		}
		req, err := stampduty.NewOrderBody(stampjson.Fields(members)).Validate(false)
		if err != nil {
			b.Fatalf("order %d: %v", i, err)
		}
		id := int64(100000 + 3*i)
		o, err := stampduty.NewOrder(req, art, req.Amount, stampduty.NewOrderIDs(id, 1), now.Add(time.Duration(i)*time.Minute))
		if err != nil {
			b.Fatal(err)
		}
		orders = append(orders, o)
	}
	return orders
}

// BenchmarkEncodeOrders measures what list-orders does after its DynamoDB
// calls: encoding a page of 100 orders as the response body, exactly as the
// handler writes it.
func BenchmarkEncodeOrders(b *testing.B) {
	resp := listResponse{Data: benchOrders(b, 100), Pagination: strapiquery.Paging{Page: 1, PageSize: 100}.Block(10000)}
	w := &fake.DiscardWriter{}
	function.WriteJSON(w, http.StatusOK, resp)
	if w.Status != http.StatusOK {
		b.Fatalf("status %d", w.Status)
	}
	b.SetBytes(int64(w.N))
	b.ReportAllocs()
	for b.Loop() {
		w.N = 0
		function.WriteJSON(w, http.StatusOK, resp)
	}
}
