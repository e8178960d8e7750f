package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/fake"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// fuzzAuthHeaders are the Authorization headers a fuzz input chooses from;
// the first fuzzAuthorized of them carry the dev token.
var fuzzAuthHeaders = []string{
	"Bearer " + localdb.DevToken,
	" bEaReR   " + localdb.DevToken + " ",
	"",
	"Bearer ",
	"Basic YWxhZGRpbjpvcGVuc2VzYW1l",
	"Bearer " + auth.Prefix + strings.Repeat("A", 43),
	"Bearer not-a-token",
	"Bearer " + localdb.DevToken + "x",
}

// fuzzAuthorized is how many of fuzzAuthHeaders carry the dev token.
const fuzzAuthorized = 2

// fuzzNow is the clock of the fuzz handler.
var fuzzNow = time.Date(2026, 11, 21, 4, 9, 0, 123e6, time.UTC)

// fuzzCatalogue returns the fuzz articles: Affidavit in Karnataka, fixed at
// 20; Rent Agreement in Karnataka, 100 to 500; Sale Deed in Delhi, 6% of the
// consideration price within 100 to 1,000,000.
func fuzzCatalogue(tb testing.TB) fake.Articles {
	tb.Helper()
	factor, err := stampduty.ParseDecimal("0.06")
	if err != nil {
		tb.Fatal(err)
	}
	fixed := int64(20)
	return fake.Articles{
		{ID: 1, DocumentID: "a00000000000000000000001", PurposeName: "Affidavit", State: "Karnataka", Min: 20, Max: 20, Fixed: &fixed},
		{ID: 2, DocumentID: "a00000000000000000000002", PurposeName: "Rent Agreement", State: "Karnataka", Min: 100, Max: 500},
		{ID: 3, DocumentID: "a00000000000000000000003", PurposeName: "Sale Deed", State: "Delhi", Min: 100, Max: 1000000, FollowsConsideration: true, Factor: &factor},
	}
}

// fuzzIDs is an orders.IDs that hands out ids from a counter, as the
// DynamoDB reserver does. The first id is last+1.
type fuzzIDs struct {
	mu   sync.Mutex
	last int64
}

// Reserve returns the first of n new ids.
func (r *fuzzIDs) Reserve(_ context.Context, n int64) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first := r.last + 1
	r.last += n
	return first, nil
}

// fuzzService is a create-order handler over in-memory fakes, keeping the
// fakes it needs to inspect.
type fuzzService struct {
	routes   http.Handler
	articles fake.Articles
	orders   *fake.Orders
}

// newFuzzService returns a handler with a fresh order store.
func newFuzzService(tb testing.TB) *fuzzService {
	tb.Helper()
	s := &fuzzService{articles: fuzzCatalogue(tb), orders: &fake.Orders{}}
	h := &handler{
		auth: auth.NewAuthenticator(fake.NewTokens(localdb.Hasher(), map[string]string{localdb.DevToken: localdb.DevOwner}), localdb.Hasher(), time.Minute),
		orders: &orders.Creator{
			Articles: s.articles,
			IDs:      &fuzzIDs{last: 1000},
			Orders:   s.orders,
			Now:      func() time.Time { return fuzzNow },
		},
	}
	s.routes = h.routes()
	return s
}

// post sends body to POST /api/live-orders with the given Authorization and
// Content-Type headers (each left out when empty). With chunked, the length
// is not declared, as for a chunked upload.
func (s *fuzzService) post(authorization, contentType string, body []byte, chunked bool) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/api/live-orders", bytes.NewReader(body))
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	if chunked {
		r.ContentLength = -1
	}
	w := httptest.NewRecorder()
	s.routes.ServeHTTP(w, r)
	return w
}

// checkCreated fails unless a 200 body answers exactly the one order the
// store recorded, for the dev owner, within its article's amount rule.
func checkCreated(tb testing.TB, s *fuzzService, body []byte) {
	tb.Helper()
	created := s.orders.Created()
	if got, want := len(created), 1; got != want {
		tb.Fatalf("200 with %d orders stored, want %d", got, want)
	}
	c := created[0]
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(body, &resp); err != nil {
		tb.Fatalf("200 body: %v: %s", err, body)
	}
	if got, want := functest.JSONKeys(resp), "livemode,message,orderId"; got != want {
		tb.Fatalf("200 keys = %s, want %s", got, want)
	}
	if got, want := string(resp["livemode"]), "true"; got != want { // the dev token is live
		tb.Fatalf("livemode = %s, want %s", got, want)
	}
	var msg, id string
	json.Unmarshal(resp["message"], &msg)
	json.Unmarshal(resp["orderId"], &id)
	if got, want := msg, "Successfully created the order!"; got != want {
		tb.Fatalf("message = %q, want %q", got, want)
	}
	if got, want := id, c.Order.DocumentID; got != want || len(id) != stampduty.DocumentIDLength {
		tb.Fatalf("orderId = %q, stored documentId %q", got, want)
	}
	if got, want := c.Owner, localdb.DevOwner; got != want {
		tb.Fatalf("stored for owner %q, want %q", got, want)
	}
	sd := c.Order.StampDuty
	art, err := s.articles.Get(context.Background(), sd.StatePurpose.PurposeName, sd.State)
	if err != nil || art.DocumentID != sd.StatePurpose.DocumentID {
		tb.Fatalf("stored under no article: %+v", sd.StatePurpose)
	}
	lo, hi := art.Min, art.Max
	if art.Fixed != nil {
		lo, hi = *art.Fixed, *art.Fixed
	}
	if sd.Amount < lo || sd.Amount > hi {
		tb.Fatalf("stored amount %d outside [%d, %d] of %s", sd.Amount, lo, hi, art.PurposeName)
	}
	if art.FollowsConsideration && sd.ConsiderationPrice <= 0 {
		tb.Fatalf("stored consideration price %d for an article that follows it", sd.ConsiderationPrice)
	}
}

// fuzzValidBody is a valid order for Rent Agreement in Karnataka.
const fuzzValidBody = `{"amount": 200, "considerationPrice": 0, "description": "Rent for flat 4B",
 "purpose": "Rent Agreement", "state": "Karnataka", "paidBy": "First Party",
 "purchasedBy": "Asha Rao", "firstPartyMobileNumber": "9876543210",
 "firstPartyName": "Asha Rao", "secondPartyName": "Vikram Shah",
 "firstPartyAddress": "12, MG Road, Bengaluru - 560001", "secondPartyAddress": "",
 "firstPartyPan": "ABCDE1234F", "secondPartyPan": ""}`

// FuzzCreateOrder sends arbitrary bodies, Content-Types and a choice of
// Authorization headers through the create-order handler over in-memory
// fakes. It must never panic or answer 5xx; every body is JSON; every non-200
// is a Strapi envelope whose error.status is the HTTP status; a 200 stored
// exactly one order, within its article's rule, and a 4xx stored none; the
// token is checked before anything else.
func FuzzCreateOrder(f *testing.F) {
	for _, b := range []string{
		fuzzValidBody,
		`{"amount": 20, "considerationPrice": 0, "purpose": "Affidavit", "state": "Karnataka", "paidBy": "Second Party",
		  "firstPartyMobileNumber": "9876543210", "firstPartyName": "Asha Rao", "secondPartyName": "Vikram Shah"}`,
		`{"amount": 0, "considerationPrice": 2500000, "purpose": " Sale Deed ", "state": "Delhi", "paidBy": "First Party",
		  "firstPartyMobileNumber": "9876543210", "firstPartyName": "Asha Rao", "secondPartyName": "Vikram Shah", "description": "  "}`,
		`{"amount": 25, "considerationPrice": 0, "purpose": "Affidavit", "state": "Karnataka"}`,
		`{"amount": 1e400, "considerationPrice": -1e400, "purpose": "Moon Lease", "state": "Karnataka"}`,
		`{"purpose": {"$ne": null}, "amount": {"$gt": 0}}`,
		`{"amount": 200, "amount": 200}`, `{"\u0061mount": 1, "amount": 2}`,
		`{"purpose": "Rent\u0000Agreement", "state": "Karnataka"}`, `{"purpose": "\ud800", "state": "\udc00"}`,
		"{\"purpose\": \"\xff\"}", "\xef\xbb\xbf{}", "{\x00}", `{}x`, `{}{}`, `[]`, `null`, ``, ` `,
		`{"data": ` + fuzzValidBody + `}`, `{"data": {"data": {}}}`, `{"data": 5, "amount": 20}`, `{"data": null}`,
		strings.Repeat("[", 1000), `{"x":` + strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 41),
	} {
		f.Add([]byte(b), "application/json", uint8(0), false)
	}
	f.Add([]byte(fuzzValidBody), "", uint8(1), true)
	f.Add([]byte(fuzzValidBody), "application/vnd.api+json; charset=utf-8", uint8(0), false)
	f.Add([]byte(fuzzValidBody), "text/plain", uint8(0), false)
	f.Add([]byte(fuzzValidBody), "application/json", uint8(2), false)
	f.Add([]byte(fuzzValidBody), "application/json", uint8(5), false)
	f.Add([]byte(`{`), "application/json", uint8(6), false)
	f.Add(bytes.Repeat([]byte(" "), function.MaxBody+1), "application/json", uint8(0), true)

	f.Fuzz(func(t *testing.T, body []byte, contentType string, authChoice uint8, chunked bool) {
		s := newFuzzService(t)
		choice := int(authChoice) % len(fuzzAuthHeaders)
		w := s.post(fuzzAuthHeaders[choice], contentType, body, chunked)
		status, resp := w.Code, w.Body.Bytes()
		if status >= 500 {
			t.Fatalf("status %d: %s", status, resp)
		}
		if _, ok := functest.ErrorNames[status]; !ok && status != 200 {
			t.Fatalf("unexpected status %d: %s", status, resp)
		}
		if !json.Valid(resp) {
			t.Fatalf("status %d: body is not JSON: %q", status, resp)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("status %d: Content-Type %q", status, ct)
		}
		authorized := choice < fuzzAuthorized
		if refused := status == 401 || status == 403; refused == authorized {
			t.Fatalf("status %d with the Authorization header %q", status, fuzzAuthHeaders[choice])
		}
		if status == 413 && len(body) <= function.MaxBody {
			t.Fatalf("413 for a body of %d bytes", len(body))
		}
		if status == 415 && contentType == "" {
			t.Fatalf("415 without a Content-Type")
		}
		if status == 200 {
			checkCreated(t, s, resp)
			return
		}
		functest.CheckEnvelope(t, status, resp)
		if got := len(s.orders.Created()); got != 0 {
			t.Fatalf("status %d stored %d orders", status, got)
		}
	})
}
