package main

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/testkit/functest"
)

// largestOrderBody is a create-order body with every field at the bound
// decisions.md sets, each made of the character that takes the most bytes
// in a JSON answer among those the field accepts: a 4-byte character for
// free text (control and separator characters, which JSON would escape to
// six bytes, are refused, and < > & are written as they are), a backslash
// for addresses (escaped to two bytes).
func largestOrderBody() string {
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
	return `{"amount":999999999999999,"considerationPrice":999999999999999,` +
		`"description":` + q(strings.Repeat("?", 100)) + `,` +
		`"purpose":` + q(strings.Repeat("😀", stampduty.MaxFreeTextLength)) + `,` +
		`"state":"Dadra and Nagar Haveli and Daman and Diu","paidBy":"Second Party",` +
		`"purchasedBy":` + q(strings.Repeat("😀", stampduty.MaxFreeTextLength)) + `,` +
		`"firstPartyMobileNumber":"9876543210",` +
		`"firstPartyName":` + q(strings.Repeat("W", 40)) + `,"secondPartyName":` + q(strings.Repeat("W", 40)) + `,` +
		`"firstPartyAddress":` + q(strings.Repeat(`\`, 120)) + `,"secondPartyAddress":` + q(strings.Repeat(`\`, 120)) + `,` +
		`"firstPartyPan":"ABCDE1234F","secondPartyPan":"ABCDE1234F"}`
}

// TestLargestPageFitsTheResponseLimit stores 100 orders, each as large as an
// accepted create can make one, and reads them as one page of the largest
// size: the answer must stay far under the 6 MB Lambda and API Gateway
// allow, so that no caller can make their own list unreadable.
func TestLargestPageFitsTheResponseLimit(t *testing.T) {
	const (
		owner    = "largest-orders"
		limit    = 6 << 20 // Lambda's synchronous response payload
		wellFits = limit / 8
	)
	members, err := function.DecodeObject([]byte(largestOrderBody()))
	if err != nil {
		t.Fatal(err)
	}
	req, err := stampduty.NewOrderBody(stampjson.Fields(members)).Validate()
	if err != nil {
		t.Fatalf("the largest order is not acceptable: %v", err)
	}
	factor, err := stampduty.ParseDecimal("1")
	if err != nil {
		t.Fatal(err)
	}
	art := stampduty.Article{ID: math.MaxInt64, DocumentID: strings.Repeat("z", 24), PurposeName: req.Purpose, State: req.State,
		Min: 0, Max: stampduty.MaxAmount, FollowsConsideration: true, Factor: &factor}
	if errs := art.Validate(); errs != nil {
		t.Fatalf("the largest article is not acceptable: %v", errs)
	}
	amount, err := art.Amount(req.Amount, req.ConsiderationPrice)
	if err != nil {
		t.Fatal(err)
	}

	s := functest.New(t, "ListOrdersFunction", wire)
	functest.AddToken(t, s.Env, largestToken, owner)
	orders := s.Env.DB().Orders(s.Env.Table("OrdersTable"))
	for i := range 100 {
		id := int64(math.MaxInt64 - 3*i - 2)
		o, err := stampduty.NewOrder(req, art, amount, stampduty.NewOrderIDs(id, 1), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := orders.Create(context.Background(), owner, o); err != nil {
			t.Fatal(err)
		}
	}

	r := s.Invoke(functest.Request("GET", "/api/live-orders", "page=1&pageSize=100", map[string]string{"authorization": "Bearer " + largestToken}, ""))
	if r.Status != 200 {
		t.Fatalf("status %d: %.300s", r.Status, r.Body)
	}
	if got, want := strings.Count(r.Body, `"purchased_by":"`+req.PurchasedBy+`"`), 100; got != want {
		t.Fatalf("%d orders with the largest purchased_by on the page, want %d", got, want)
	}
	t.Logf("largest page of orders: %d bytes (%.1f%% of Lambda's 6 MB)", len(r.Body), 100*float64(len(r.Body))/limit)
	if got := len(r.Body); got > wellFits {
		t.Errorf("the largest page is %d bytes, want at most %d (1/8 of the 6 MB limit)", got, wellFits)
	}
}

// largestToken is a well-formed token of the largest-orders owner.
var largestToken = "sdt_" + strings.Repeat("L", 43)
