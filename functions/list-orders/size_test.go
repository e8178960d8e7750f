package main

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/links"
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
	req, err := stampduty.NewOrderBody(stampjson.Fields(members)).Validate(false)
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
	amount := req.ConsiderationPrice // a factor of 1 prices the paper at its consideration price

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

// TestLargestPageOfPrintedPapers builds the page papers.md bounds: 100
// orders of 20 papers each, every paper Printed with its certificate, and
// every field at its bound (the largest order of
// TestLargestPageFitsTheResponseLimit; references, certificate numbers,
// file names and sizes at their longest; ids at their largest), read as
// one page: it must stay under half of Lambda's 6 MB. Each certificate's
// address is a download link of the service's own (package links), whose
// length does not depend on the credentials that sign it (an S3 address
// signed on AWS carries the role's session token: 2,277 characters, which
// made this page 6.5 MB). Here the links name the test's API domain; the
// page is measured again as on AWS, with each link under the longest
// execute-api domain (a 14-character region).
func TestLargestPageOfPrintedPapers(t *testing.T) {
	const (
		owner     = "largest-papers"
		limit     = 6 << 20
		half      = limit / 2
		localBase = "https://api.example.com"
		awsBase   = "https://abcdefghij.execute-api.ap-southeast-2.amazonaws.com"
	)
	members, err := function.DecodeObject([]byte(largestOrderBody()))
	if err != nil {
		t.Fatal(err)
	}
	req, err := stampduty.NewOrderBody(stampjson.Fields(members)).Validate(false)
	if err != nil {
		t.Fatal(err)
	}
	req.Quantity = stampduty.MaxQuantity
	factor, _ := stampduty.ParseDecimal("1")
	art := stampduty.Article{ID: math.MaxInt64, DocumentID: strings.Repeat("z", 24), PurposeName: req.Purpose, State: req.State,
		Min: 0, Max: stampduty.MaxAmount, FollowsConsideration: true, Factor: &factor}
	amount := stampduty.MaxAmount / stampduty.MaxQuantity

	s := functest.New(t, "ListOrdersFunction", wire)
	functest.AddToken(t, s.Env, papersToken, owner)
	orders := s.Env.DB().Orders(s.Env.Table("OrdersTable"))
	name := strings.Repeat("(", 100) // each written %28 in an address
	at := stampduty.FormatTime(time.Now())
	by := "arn:aws:sts::123456789012:assumed-role/" + strings.Repeat("R", 64) + "/" + strings.Repeat("S", 64)
	for i := range 100 {
		id := int64(math.MaxInt64 - 50*int64(i) - 30)
		o, err := stampduty.NewOrder(req, art, amount, stampduty.NewOrderIDs(id, stampduty.MaxQuantity), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for k := range o.Fulfillments {
			f := &o.Fulfillments[k]
			f.Status, f.UniqueDocRef, f.CertificateNumber = stampduty.StatusPrinted, strings.Repeat("/", 64), "IN-KA99999999999999Z"
			f.CertificateFile = &stampduty.File{ID: math.MaxInt64 - int64(k), DocumentID: strings.Repeat("y", 24), Name: name, Mime: stampduty.MimePDF,
				Size: stampduty.MaxDirectCertificateSize, SHA256: strings.Repeat("f", 64), CreatedAt: at,
				Key: "certificates/" + o.DocumentID + "/" + strings.Repeat("y", 24)}
			for _, st := range []string{stampduty.StatusCreated, stampduty.StatusProcured, stampduty.StatusPrinted} {
				f.History = append(f.History, stampduty.StatusEntry{Status: st, At: at, By: by})
			}
		}
		// Stored as the create stores an order of 20 papers; its papers
		// as the reader shows them once printed (the answer is the same
		// whichever items hold them).
		if _, err := orders.Create(context.Background(), owner, o); err != nil {
			t.Fatal(err)
		}
	}

	r := s.Invoke(functest.Request("GET", "/api/live-orders", "page=1&pageSize=100", map[string]string{"authorization": "Bearer " + papersToken}, ""))
	if r.Status != 200 {
		t.Fatalf("status %d: %.300s", r.Status, r.Body)
	}
	if got, want := strings.Count(r.Body, `"order_status":"Printed","unique_doc_ref"`), 100*stampduty.MaxQuantity; got != want {
		t.Fatalf("%d printed papers on the page, want %d", got, want)
	}
	urls := regexp.MustCompile(`"url":"([^"]*)"`).FindAllStringSubmatch(r.Body, -1)
	if got, want := len(urls), 100*stampduty.MaxQuantity; got != want {
		t.Fatalf("%d addresses on the page, want %d, one per certificate", got, want)
	}
	for _, u := range urls {
		if !strings.HasPrefix(u[1], localBase+links.Path) {
			t.Fatalf("address %.100s…: want a link at %s", u[1], localBase+links.Path)
		}
	}
	onAWS := len(r.Body) + len(urls)*(len(awsBase)-len(localBase))
	spare := (half - onAWS) / len(urls)
	t.Logf("largest page of 100 orders of 20 printed papers: %d bytes here, %d on AWS (%.1f%% of 6 MB; links of %d characters); a custom domain %d characters longer than execute-api's would still fit",
		len(r.Body), onAWS, 100*float64(onAWS)/limit, len(urls[0][1])+len(awsBase)-len(localBase), spare)
	if onAWS > half {
		t.Errorf("the largest page would be %d bytes on AWS, want at most %d (half of 6 MB)", onAWS, half)
	}
}

// papersToken is a well-formed token of the largest-papers owner.
var papersToken = "sdt_" + strings.Repeat("P", 43)
