package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/fake"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { functest.Main(m) }

// body returns a valid order for the sample article "Rent Agreement" in
// Karnataka (range 100-500), changed by edits: a nil value deletes the key.
func body(edits map[string]any) string {
	m := map[string]any{
		"amount": 200, "considerationPrice": 0, "description": "Rent for flat 4B", "purpose": "Rent Agreement",
		"state": "Karnataka", "paidBy": "First Party", "purchasedBy": "", "firstPartyMobileNumber": "9876543210",
		"firstPartyName": "Asha Rao", "secondPartyName": "Vikram Shah", "firstPartyAddress": "12, MG Road, Bengaluru - 560001",
		"secondPartyAddress": "", "firstPartyPan": "ABCDE1234F", "secondPartyPan": "",
	}
	for k, v := range edits {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// wrap returns a body in Strapi's create shape: {"data": b}.
func wrap(b string) string { return `{"data": ` + b + `}` }

// withKey returns the dev token's headers with an Idempotency-Key, none
// when key is empty.
func withKey(key string) map[string]string {
	h := maps.Clone(functest.DevHeaders)
	if key != "" {
		h["idempotency-key"] = key
	}
	return h
}

// orderID returns the orderId of a 200 answer to a create, and fails the
// test on any other answer.
func orderID(t *testing.T, r functest.Response) string {
	t.Helper()
	var got struct {
		OrderID string `json:"orderId"`
	}
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &got) != nil || got.OrderID == "" {
		t.Fatalf("status %d, want 200 with an orderId: %s", r.Status, r.Body)
	}
	return got.OrderID
}

// listOrders reads the dev owner's orders straight from the table.
func listOrders(t *testing.T, s *functest.Stack) int {
	t.Helper()
	n, err := s.Env.DB().Orders(s.Env.Table("OrdersTable")).Count(context.Background(), localdb.DevOwner)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// creating is TestCreateOrder's function over one set of tables, which
// each subtest sends its requests to in turn.
type creating struct{ *functest.Stack }

// send sends a create with headers and body b.
func (c creating) send(headers map[string]string, b string) functest.Response {
	return c.Invoke(functest.Request("POST", "/api/live-orders", "", headers, b))
}

// newest returns the dev owner's newest stored order.
func (c creating) newest(t *testing.T) stampduty.Order {
	t.Helper()
	orders, _, err := c.Env.DB().Orders(c.Env.Table("OrdersTable")).Page(context.Background(), localdb.DevOwner, 1, 1)
	if err != nil || len(orders) != 1 {
		t.Fatal(orders, err)
	}
	return orders[0]
}

// TestCreateOrder sends one function, over one set of tables, each rule of
// the contract's create in turn; the last subtest checks the function
// against template.yaml with every call they made.
func TestCreateOrder(t *testing.T) {
	c := creating{functest.New(t, "CreateOrderFunction", wire)}
	t.Run("Created", c.created)
	for _, tc := range refusals() {
		t.Run(tc.name, func(t *testing.T) { c.refused(t, tc) })
	}
	t.Run("AmountRules", c.amountRules)
	t.Run("DataWrapped", func(t *testing.T) {
		id := orderID(t, c.send(functest.DevHeaders, wrap(body(map[string]any{"purpose": "Affidavit", "amount": 20, "firstPartyName": "Wrapped Party"}))))
		o := c.newest(t)
		sd := o.StampDuty
		if o.DocumentID != id || sd.FirstPartyName != "Wrapped Party" || sd.Amount != 20 || sd.StatePurpose.PurposeName != "Affidavit" {
			t.Errorf("stored order = %+v", o)
		}
	})
	t.Run("DataWrappedKeyFingerprintIsTheBytesSent", func(t *testing.T) {
		b := body(map[string]any{"firstPartyName": "Fingerprint Party"})
		first := orderID(t, c.send(withKey("key-wrapped"), wrap(b)))
		if got := orderID(t, c.send(withKey("key-wrapped"), wrap(b))); got != first {
			t.Fatalf("the wrapped body replayed: orderId %s, want %s", got, first)
		}
		before := listOrders(t, c.Stack)
		r := c.send(withKey("key-wrapped"), b)
		if got, want := r.Status, 409; got != want {
			t.Fatalf("the bare body under the wrapped body's key: status %d, want %d: %s", got, want, r.Body)
		}
		if after := listOrders(t, c.Stack); after != before {
			t.Errorf("orders %d -> %d", before, after)
		}
	})
	t.Run("Defaults", func(t *testing.T) {
		r := c.send(functest.DevHeaders, body(map[string]any{"description": nil, "purchasedBy": nil, "firstPartyPan": nil, "secondPartyPan": nil, "firstPartyAddress": nil, "secondPartyAddress": nil}))
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		sd := c.newest(t).StampDuty
		if sd.Description != "N/A" || sd.PurchasedBy != "" || sd.FirstPartyPAN != "" || sd.SecondPartyPAN != "" || sd.FirstPartyAddress != "" || sd.Quantity != 1 || sd.UploadedDocument != nil {
			t.Errorf("stamp duty = %+v", sd)
		}
	})
	t.Run("OneFulfillmentPerPaper", func(t *testing.T) {
		id := orderID(t, c.send(functest.DevHeaders, body(map[string]any{"amount": 150, "quantity": 3})))
		o := c.newest(t)
		sd := o.StampDuty
		if o.DocumentID != id || sd.Amount != 150 || sd.Quantity != 3 || sd.TotalAmount != 450 {
			t.Errorf("amount %d quantity %d total_amount %d, want 150 3 450", sd.Amount, sd.Quantity, sd.TotalAmount)
		}
		if got, want := len(o.Fulfillments), 3; got != want {
			t.Fatalf("%d fulfillments, want %d", got, want)
		}
		ids := map[string]bool{}
		for k, f := range o.Fulfillments {
			if f.Status != stampduty.StatusPending || ids[f.DocumentID] || (k > 0 && f.ID != o.Fulfillments[k-1].ID+1) {
				t.Errorf("paper %d = %+v: want Pending, its own documentId, ids oldest first", k, f)
			}
			ids[f.DocumentID] = true
		}
	})
	t.Run("Events", func(t *testing.T) {
		c.CheckEvents(t, map[string]int{"create-order": 200, "create-order-no-token": 403, "create-order-bad-body": 400, "create-order-unknown-purpose": 404})
	})
	t.Run("DynamoDBDown", c.dynamoDBDown)
	t.Run("IdempotencyKey", c.idempotencyKey)
	t.Run("TestOrdersScheduleTheirSteps", c.testOrdersScheduleTheirSteps)
	t.Run("PaymentRequired", c.paymentRequired)
	t.Run("LimitBelowHeld", c.limitBelowHeld)
	t.Run("Template", func(t *testing.T) {
		c.CheckRoutes()
		c.CheckTemplate(c.Proxy.All())
	})
}

func (c creating) created(t *testing.T) {
	r := c.send(functest.DevHeaders, body(nil))
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var got struct {
		Message string `json:"message"`
		OrderID string `json:"orderId"`
	}
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
		t.Fatal(err)
	}
	if got, want := got.Message, "Successfully created the order!"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if !regexp.MustCompile(`^[a-z][0-9a-z]{23}$`).MatchString(got.OrderID) {
		t.Errorf("orderId = %q", got.OrderID)
	}
	if !strings.HasPrefix(r.Headers["Content-Type"], "application/json") {
		t.Errorf("content-type = %q", r.Headers["Content-Type"])
	}
	o := c.newest(t)
	if o.DocumentID != got.OrderID || o.StampDuty.Amount != 200 || o.StampDuty.FirstPartyPAN != "ABCDE1234F" ||
		o.StampDuty.StatePurpose.PurposeName != "Rent Agreement" || o.StampDuty.MobileNumber != "9876543210" ||
		len(o.Fulfillments) != 1 || o.Fulfillments[0].Status != "Pending" {
		t.Errorf("stored order = %+v", o)
	}
}

// refusal is one rule of the contract a create breaks: the status, error
// name and message (or its prefix) it must give.
type refusal struct {
	name    string
	headers map[string]string
	body    string
	status  int
	errName string
	message string // exact, or a prefix when it ends in "…"
	paths   []string
}

// refusals are the creates the contract refuses, each with its answer.
func refusals() []refusal {
	return []refusal{
		{"NoToken", map[string]string{"content-type": "application/json"}, body(nil), 403, "ForbiddenError", "Forbidden", nil},
		{"EmptyBearer", map[string]string{"authorization": "Bearer ", "content-type": "application/json"}, body(nil), 403, "ForbiddenError", "Forbidden", nil},
		{"OtherScheme", map[string]string{"authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l"}, body(nil), 403, "ForbiddenError", "Forbidden", nil},
		{"UnknownToken", map[string]string{"authorization": "Bearer sdt_" + strings.Repeat("A", 43)}, body(nil), 401, "UnauthorizedError", "Missing or invalid credentials", nil},
		{"MalformedToken", map[string]string{"authorization": "Bearer not-a-token"}, body(nil), 401, "UnauthorizedError", "Missing or invalid credentials", nil},
		{"NoTokenBeatsBadBody", nil, "{", 403, "ForbiddenError", "Forbidden", nil},
		{"NotJSON", functest.DevHeaders, "amount=5", 400, "ValidationError", "Invalid data. The body is not valid JSON", nil},
		{"EmptyBody", functest.DevHeaders, "", 400, "ValidationError", "Invalid data. …", nil},
		{"NotAnObject", functest.DevHeaders, `[1,2]`, 400, "ValidationError", "Invalid data. The body must be a JSON object", nil},
		{"NotJSONContentType", map[string]string{"authorization": "Bearer " + localdb.DevToken, "content-type": "text/plain"}, body(nil), 415, "UnsupportedMediaTypeError", "…", nil},
		{"TooLarge", functest.DevHeaders, body(map[string]any{"purchasedBy": strings.Repeat("x", 70000)}), 413, "PayloadTooLargeError", "…", nil},
		{"UnknownPurpose", functest.DevHeaders, body(map[string]any{"purpose": "Moon Lease"}), 404, "NotFoundError", "Purpose with the name: Moon Lease cannot be found.", nil},
		{"PurposeTrimmedForLookup", functest.DevHeaders, body(map[string]any{"purpose": "  Rent Agreement  ", "amount": 1}), 400, "ValidationError", "The purpose can take an amount in the range of: 100-500, while the amount passed is equal to: 1", []string{"amount"}},
		{"PurposeWrongState", functest.DevHeaders, body(map[string]any{"state": "Delhi"}), 404, "NotFoundError", "Purpose with the name: Rent Agreement cannot be found.", nil},
		{"UnknownPurposeBeatsBadFields", functest.DevHeaders, body(map[string]any{"purpose": "Moon Lease", "firstPartyName": ""}), 404, "NotFoundError", "Purpose with the name: Moon Lease cannot be found.", nil},
		{"PurposeMissing", functest.DevHeaders, body(map[string]any{"purpose": nil, "firstPartyName": ""}), 400, "ValidationError", "Invalid data. purpose is a required field; firstPartyName must not be empty", []string{"purpose", "firstPartyName"}},
		{"StateNotString", functest.DevHeaders, body(map[string]any{"state": 5}), 400, "ValidationError", "Invalid data. state must be a string", []string{"state"}},
		{"AllFieldsAtOnce", functest.DevHeaders, body(map[string]any{"amount": "200", "firstPartyName": strings.Repeat("a", 41), "firstPartyPan": "abcde1234f", "firstPartyPAN": "ABCDE1234F"}), 400, "ValidationError",
			"Invalid data. amount must be an integer; firstPartyName must be at most 40 characters; firstPartyPan must be empty or a PAN: 5 capital letters, 4 digits, 1 capital letter; firstPartyPAN is not an allowed field",
			[]string{"amount", "firstPartyName", "firstPartyPan", "firstPartyPAN"}},
		{"DuplicateKey", functest.DevHeaders, `{"amount":200,"amount":300}`, 400, "ValidationError", "Invalid data. amount is given more than once", []string{"amount"}},
		{"FixedAmountDiffers", functest.DevHeaders, body(map[string]any{"purpose": "Affidavit", "amount": 25}), 400, "ValidationError", "The purpose have a fixed amount of: 20, while the amount passed is equal to: 25", []string{"amount"}},
		{"RangeBelow", functest.DevHeaders, body(map[string]any{"amount": 99}), 400, "ValidationError", "The purpose can take an amount in the range of: 100-500, while the amount passed is equal to: 99", []string{"amount"}},
		{"RangeAbove", functest.DevHeaders, body(map[string]any{"amount": 501}), 400, "ValidationError", "The purpose can take an amount in the range of: 100-500, while the amount passed is equal to: 501", []string{"amount"}},
		{"ConsiderationZero", functest.DevHeaders, body(map[string]any{"purpose": "Sale Deed", "state": "Delhi", "considerationPrice": 0}), 400, "ValidationError",
			"The consideration price must be greater than 0 for the selected purpose. Please provide a valid consideration price.", []string{"considerationPrice"}},
		// Quantity: an integer from 1 to 20 (papers.md), else 400 naming quantity.
		{"QuantityZero", functest.DevHeaders, body(map[string]any{"quantity": 0}), 400, "ValidationError", "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityTwentyOne", functest.DevHeaders, body(map[string]any{"quantity": 21}), 400, "ValidationError", "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityNegative", functest.DevHeaders, body(map[string]any{"quantity": -2}), 400, "ValidationError", "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityFraction", functest.DevHeaders, body(map[string]any{"quantity": 1.5}), 400, "ValidationError", "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityString", functest.DevHeaders, body(map[string]any{"quantity": "2"}), 400, "ValidationError", "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityBoolean", functest.DevHeaders, body(map[string]any{"quantity": true}), 400, "ValidationError", "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		// Strapi's create shape, {"data": {…}}: the object inside is the body.
		{"DataWrappedFieldsKeepTheirPaths", functest.DevHeaders, wrap(body(map[string]any{"amount": "200", "firstPartyName": ""})), 400, "ValidationError",
			"Invalid data. amount must be an integer; firstPartyName must not be empty", []string{"amount", "firstPartyName"}},
		{"DataWrappedUnknownPurpose", functest.DevHeaders, wrap(body(map[string]any{"purpose": "Moon Lease"})), 404, "NotFoundError", "Purpose with the name: Moon Lease cannot be found.", nil},
		{"DataWrappedAmountRule", functest.DevHeaders, wrap(body(map[string]any{"amount": 99})), 400, "ValidationError", "The purpose can take an amount in the range of: 100-500, while the amount passed is equal to: 99", []string{"amount"}},
		{"DataWrappedDuplicateKey", functest.DevHeaders, `{"data": {"amount":200,"amount":300}}`, 400, "ValidationError", "Invalid data. amount is given more than once", []string{"amount"}},
		{"DataBesideFields", functest.DevHeaders, `{"data": ` + body(nil) + `, "amount": 200}`, 400, "ValidationError", "Invalid data. data must be the only member of the body when it is sent", []string{"data"}},
		{"DataNotAnObject", functest.DevHeaders, `{"data": 5}`, 400, "ValidationError", `Missing "data" payload in the request body`, []string{"data"}},
		{"DataNull", functest.DevHeaders, `{"data": null}`, 400, "ValidationError", `Missing "data" payload in the request body`, []string{"data"}},
		{"DataArray", functest.DevHeaders, `{"data": [` + body(nil) + `]}`, 400, "ValidationError", `Missing "data" payload in the request body`, []string{"data"}},
		{"DataTwice", functest.DevHeaders, `{"data": ` + body(nil) + `, "data": ` + body(nil) + `}`, 400, "ValidationError", "Invalid data. data is given more than once", []string{"data"}},
		{"DataUnwrappedOnce", functest.DevHeaders, wrap(wrap(body(nil))), 400, "ValidationError", "Invalid data. amount is a required field; …", nil},
		{"DataKeyIsCaseSensitive", functest.DevHeaders, `{"Data": ` + body(nil) + `}`, 400, "ValidationError", "Invalid data. amount is a required field; …", nil},
	}
}

// refused sends tc's create and checks its answer, and that it stored
// nothing.
func (c creating) refused(t *testing.T, tc refusal) {
	before := listOrders(t, c.Stack)
	r := c.send(tc.headers, tc.body)
	if r.Status != tc.status {
		t.Fatalf("status = %d, want %d: %s", r.Status, tc.status, r.Body)
	}
	e := r.Error(t)
	if got, want := e.Error.Name, tc.errName; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if prefix, ok := strings.CutSuffix(tc.message, "…"); ok {
		if !strings.HasPrefix(e.Error.Message, prefix) {
			t.Errorf("message = %q, want prefix %q", e.Error.Message, prefix)
		}
	} else if got, want := e.Error.Message, tc.message; got != want {
		t.Errorf("message = %q\n want %q", got, want)
	}
	if paths := e.Paths(); tc.paths != nil && fmt.Sprint(paths) != fmt.Sprint(tc.paths) {
		t.Errorf("detail paths = %v, want %v", paths, tc.paths)
	}
	if after := listOrders(t, c.Stack); after != before {
		t.Errorf("orders %d -> %d: a refused request stored an order", before, after)
	}
}

func (c creating) amountRules(t *testing.T) {
	for _, tc := range []struct {
		name          string
		edits         map[string]any
		want          int64
		considerPrice int64
	}{
		{"FixedEqual", map[string]any{"purpose": "Affidavit", "amount": 20}, 20, 0},
		{"RangeAtMin", map[string]any{"amount": 100}, 100, 0},
		{"RangeAtMax", map[string]any{"amount": 500}, 500, 0},
		{"FollowsExact", map[string]any{"purpose": "Gift Deed", "state": "Tamil Nadu", "considerationPrice": 100, "amount": 999999}, 7, 100},
		{"FollowsRoundsUp", map[string]any{"purpose": "Gift Deed", "state": "Tamil Nadu", "considerationPrice": 101, "amount": 0}, 8, 101},
		{"FollowsClampedToMin", map[string]any{"purpose": "Sale Deed", "state": "Delhi", "considerationPrice": 10}, 100, 10},
		{"FollowsClampedToMax", map[string]any{"purpose": "Sale Deed", "state": "Delhi", "considerationPrice": 999999999999999}, 1000000, 999999999999999},
		{"FollowsFixedWins", map[string]any{"purpose": "Partnership Deed", "considerationPrice": 5000000, "amount": 3}, 1000, 5000000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.send(functest.DevHeaders, body(tc.edits))
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			o := c.newest(t)
			if got := o.StampDuty.Amount; got != tc.want {
				t.Errorf("stored amount = %d, want %d", got, tc.want)
			}
			if got := o.StampDuty.ConsiderationPrice; got != tc.considerPrice {
				t.Errorf("stored consideration = %d, want %d", got, tc.considerPrice)
			}
		})
	}
}

func (c creating) dynamoDBDown(t *testing.T) {
	c.Proxy.SetFault(func(call storetest.ProxyCall) *storetest.Fault {
		if call.Operation == "PutItem" {
			return &storetest.Fault{Status: 400, Type: "ThrottlingException"}
		}
		return nil
	})
	defer c.Proxy.SetFault(nil)
	before := listOrders(t, c.Stack)
	r := c.send(functest.DevHeaders, body(nil))
	if r.Status != 503 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	e := r.Error(t)
	if e.Error.Name != "ServiceUnavailableError" || e.Error.Message != "Service Unavailable" || r.Headers["Retry-After"] == "" {
		t.Errorf("503 = %+v, headers %v", e.Error, r.Headers)
	}
	if strings.Contains(r.Body, "Table") || strings.Contains(r.Body, "Throttling") || strings.Contains(r.Body, "127.0.0.1") {
		t.Errorf("503 body leaks internals: %s", r.Body)
	}
	if after := listOrders(t, c.Stack); after != before {
		t.Errorf("orders %d -> %d", before, after)
	}
}

// TestWarmCreateCalls: a warm instance creates an order with one GetItem
// (does the caller listen to order.created?), one UpdateItem (the caller's
// counter: its seq) and one PutItem: the token, the article and the ids
// come from memory; and the order's hold (accounts.md): the account item's
// UpdateItem and one BatchWriteItem of its entry (and the one before it).
func TestWarmCreateCalls(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	send := func() {
		if r := s.Invoke(functest.Request("POST", "/api/live-orders", "", functest.DevHeaders, body(nil))); r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	send()
	s.Proxy.SetMode(storetest.Account)
	s.Proxy.Take()
	send()
	calls := s.Proxy.Take()
	if got, want := s.Env.Operations(calls), "BatchWriteItem:LedgerTable=1 GetItem:WebhooksTable=1 PutItem:OrdersTable=1 UpdateItem:LedgerTable=1 UpdateItem:OrdersTable=1"; got != want {
		t.Errorf("warm create calls = %s, want %s", got, want)
	}
	// The hold's share (accounts.md: at most 2 calls and 3 WCU more).
	var hold, all float64
	for _, c := range s.Env.Made(calls) {
		if !c.Accounted {
			t.Fatalf("%s on %s not accounted", c.Operation, c.Table)
		}
		all += c.Billed.Write
		if c.Table == s.Env.Table("LedgerTable") {
			hold += c.Billed.Write
		}
	}
	if hold > 3 {
		t.Errorf("the hold costs %.1f WCU, want at most 3", hold)
	}
	t.Logf("a warm create: %.1f WCU, of which the hold %.1f", all, hold)
}

// idempotencyKey checks the Idempotency-Key's rules, on TestCreateOrder's
// function.
func (c creating) idempotencyKey(t *testing.T) {
	t.Run("ReplayReturnsTheOriginal", func(t *testing.T) {
		b := body(map[string]any{"firstPartyName": "Replay Party"})
		first := orderID(t, c.keyed("key-replay", b))
		before := listOrders(t, c.Stack)
		for i := 0; i < 3; i++ {
			if got := orderID(t, c.keyed("key-replay", b)); got != first {
				t.Errorf("replay %d: orderId %s, want %s", i, got, first)
			}
		}
		if after := listOrders(t, c.Stack); after != before {
			t.Errorf("replays created %d orders", after-before)
		}
	})
	t.Run("OtherBodyIsConflict", func(t *testing.T) {
		orderID(t, c.keyed("key-conflict", body(nil)))
		before := listOrders(t, c.Stack)
		r := c.keyed("key-conflict", body(map[string]any{"amount": 300}))
		if r.Status != 409 || r.Error(t).Error.Name != "ConflictError" {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		if after := listOrders(t, c.Stack); after != before {
			t.Error("a conflicting request created an order")
		}
	})
	t.Run("ScopedToTheCaller", func(t *testing.T) {
		other := "sdt_" + strings.Repeat("K", 43)
		functest.AddToken(t, c.Env, other, "other-business")
		b := body(nil)
		mine := orderID(t, c.keyed("key-shared", b))
		theirs := orderID(t, c.keyed("key-shared", b, other))
		if mine == theirs {
			t.Errorf("two callers' orders share the id %s", mine)
		}
	})
	t.Run("InvalidKey", func(t *testing.T) {
		for _, k := range []string{strings.Repeat("k", 256), "tab\there", "é"} {
			r := c.keyed(k, body(nil))
			if r.Status != 400 || len(r.Error(t).Error.Details.Errors) != 1 || r.Error(t).Error.Details.Errors[0].Path[0] != "Idempotency-Key" {
				t.Errorf("key %.20q: status %d: %s", k, r.Status, r.Body)
			}
		}
		if r := c.keyed(strings.Repeat("k", 255), body(nil)); r.Status != 200 {
			t.Errorf("255-character key: status %d", r.Status)
		}
	})
	t.Run("ConcurrentOneOrder", c.concurrentOneOrder)
	t.Run("FailureReleasesTheKey", c.failureReleasesTheKey)
	t.Run("VanishedHolderTakenOver", c.vanishedHolderTakenOver)
	t.Run("WithoutKeyUnchanged", func(t *testing.T) {
		before := listOrders(t, c.Stack)
		b := body(nil)
		a, d := orderID(t, c.send(functest.DevHeaders, b)), orderID(t, c.send(functest.DevHeaders, b))
		if a == d || listOrders(t, c.Stack) != before+2 {
			t.Error("two requests without a key should make two orders")
		}
	})
}

// keyed sends a create of body b with the Idempotency-Key key, with the
// dev token or the token given.
func (c creating) keyed(key, b string, token ...string) functest.Response {
	h := map[string]string{"authorization": "Bearer " + localdb.DevToken, "content-type": "application/json", "idempotency-key": key}
	if len(token) > 0 {
		h["authorization"] = "Bearer " + token[0]
	}
	return c.send(h, b)
}

func (c creating) concurrentOneOrder(t *testing.T) {
	b := body(map[string]any{"firstPartyName": "Concurrent Party"})
	before := listOrders(t, c.Stack)
	const n = 20
	var wg sync.WaitGroup
	results := make(chan functest.Response, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); results <- c.keyed("key-concurrent", b) }()
	}
	wg.Wait()
	close(results)
	ids := map[string]bool{}
	for r := range results {
		switch r.Status {
		case 200:
			ids[orderID(t, r)] = true
		case 409:
			if r.Headers["Retry-After"] == "" {
				t.Error("409 in progress without Retry-After")
			}
		default:
			t.Errorf("status %d: %s", r.Status, r.Body)
		}
	}
	if len(ids) != 1 {
		t.Errorf("%d different orderIds, want 1", len(ids))
	}
	if after := listOrders(t, c.Stack); after != before+1 {
		t.Errorf("%d orders created, want 1", after-before)
	}
}

func (c creating) failureReleasesTheKey(t *testing.T) {
	c.Proxy.SetFault(func(call storetest.ProxyCall) *storetest.Fault {
		if call.Operation == "PutItem" && call.Table == c.Env.Table("OrdersTable") {
			return &storetest.Fault{Status: 400, Type: "ProvisionedThroughputExceededException"}
		}
		return nil
	})
	b := body(map[string]any{"firstPartyName": "Retry Party"})
	r := c.keyed("key-retry", b)
	c.Proxy.SetFault(nil)
	if r.Status != 503 {
		t.Fatalf("status %d under throttling: %s", r.Status, r.Body)
	}
	before := listOrders(t, c.Stack)
	orderID(t, c.keyed("key-retry", b))
	if after := listOrders(t, c.Stack); after != before+1 {
		t.Errorf("%d orders after the retry, want 1", after-before)
	}
}

func (c creating) vanishedHolderTakenOver(t *testing.T) {
	keys := c.Env.DB().Idempotency(c.Env.Table("IdempotencyTable"))
	for _, stored := range []bool{false, true} {
		name := fmt.Sprintf("Stored%v", stored)
		b := body(map[string]any{"firstPartyName": "Takeover " + name})
		sum := sha256.Sum256([]byte(b))
		doc := "takeover" + strings.ToLower(name) + "xxxxxxxxxxxxx"
		doc = doc[:24]
		past := time.Now().Add(-time.Minute)
		if _, ok, err := keys.Claim(context.Background(), localdb.DevOwner, "key-"+name, hex.EncodeToString(sum[:]), doc, past, 15*time.Second, 24*time.Hour); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if stored { // the holder stored its order, then vanished before completing the key
			o := newOrderWithID(t, c.Stack, doc)
			if _, err := c.Env.DB().Orders(c.Env.Table("OrdersTable")).Create(context.Background(), localdb.DevOwner, o); err != nil {
				t.Fatal(err)
			}
		}
		before := listOrders(t, c.Stack)
		// Stored, the holder's order is the key's; not stored, the order is
		// created under the holder's documentId with its seq put in.
		got := orderID(t, c.keyed("key-"+name, b))
		if _, seqd := stampduty.IDSeq(got); !stampduty.SameOrderID(got, doc) || stored && got != doc || !stored && !seqd {
			t.Errorf("%s: orderId %s, want the holder's %s", name, got, doc)
		}
		want := before + 1
		if stored {
			want = before
		}
		if after := listOrders(t, c.Stack); after != want {
			t.Errorf("%s: %d orders created, want %d", name, after-before, want-before)
		}
		if replay := orderID(t, c.keyed("key-"+name, b)); replay != got {
			t.Errorf("%s: replay after takeover: %s, want %s", name, replay, got)
		}
	}
}

// newOrderWithID builds a valid order with the given documentId, as a
// create that was interrupted would have stored it.
func newOrderWithID(t *testing.T, s *functest.Stack, doc string) stampduty.Order {
	t.Helper()
	db := s.Env.DB()
	art, err := db.Articles(s.Env.Table("ArticlesTable")).Get(context.Background(), "Rent Agreement", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	first, err := db.IDs(s.Env.Table("CountersTable"), 3).Reserve(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	req := stampduty.OrderRequest{Amount: 200, Purpose: art.PurposeName, State: art.State, PaidBy: stampduty.FirstParty, Description: "N/A",
		FirstPartyMobileNumber: "9876543210", FirstPartyName: "Takeover", SecondPartyName: "B"}
	o, err := stampduty.NewOrder(req, art, 200, stampduty.NewOrderIDs(first, 1), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o.DocumentID = doc
	return o
}

// TestKeyReusedInTheSecondItExpires: a key whose record expires in the very
// second it is used again (now.Unix() == expires) is free: the request
// claims it and creates its order at once, instead of looping between a
// claim that says the record holds and a read that says it is gone until
// the request's time runs out.
func TestKeyReusedInTheSecondItExpires(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	now := time.Unix(time.Now().Unix(), 700*int64(time.Millisecond))
	db := store.Open(config.New(s.Env.Getenv("CreateOrderFunction", nil)))
	keys := db.Idempotency(s.Env.Table("IdempotencyTable"))
	h := &handler{
		auth: auth.NewAuthenticator(fake.NewTokens(localdb.Hasher(), map[string]string{localdb.DevToken: localdb.DevOwner}), localdb.Hasher(), time.Minute),
		orders: &orders.Creator{
			Articles: db.Articles(s.Env.Table("ArticlesTable")),
			IDs:      db.IDs(s.Env.Table("CountersTable"), store.IDBlock),
			Orders:   db.Orders(s.Env.Table("OrdersTable")),
			Keys:     keys,
			Now:      func() time.Time { return now },
		},
	}
	s.Handler = h.routes()
	// Yesterday's use of the key, with another body: its record expires now.
	old, ok, err := keys.Claim(context.Background(), localdb.DevOwner, "key-expiring", "other-body", "expiringxxxxxxxxxxxxxxxx", now.Add(-orders.KeyTTL), orders.KeyLease, orders.KeyTTL)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if got, want := old.Expires.Unix(), now.Unix(); got != want {
		t.Fatalf("record expires at %d, want %d", got, want)
	}

	before := listOrders(t, s)
	s.Proxy.Take()
	headers := withKey("key-expiring")
	start := time.Now()
	r := s.Invoke(functest.Request("POST", "/api/live-orders", "", headers, body(nil)))
	calls := s.Proxy.Take()
	t.Logf("status %d after %v, %d DynamoDB calls: %s", r.Status, time.Since(start).Round(time.Millisecond), len(calls), s.Env.Operations(calls))
	created := orderID(t, r)
	if created == old.OrderID {
		t.Errorf("orderId %s is the expired record's", created)
	}
	if got, want := listOrders(t, s)-before, 1; got != want {
		t.Errorf("%d orders created, want %d", got, want)
	}
	// The key now stands for the new order, in the same second too.
	r = s.Invoke(functest.Request("POST", "/api/live-orders", "", headers, body(nil)))
	if got := orderID(t, r); got != created {
		t.Errorf("replay: orderId %s, want %s", got, created)
	}
}

// paymentRequired: with a limit, an order that does not fit what is
// available is 402 PaymentRequiredError with the contract's message and
// details, and nothing is stored: no order, no entry; once the account is
// credited, the same create holds its total (accounts.md).
func (c creating) paymentRequired(t *testing.T) {
	ctx := context.Background()
	ledger := c.Env.DB().Ledger(c.Env.Table("LedgerTable"))
	a := functest.Account(t, c.Env, localdb.DevOwner)
	zero := accounts.Money(0)
	if _, err := ledger.Configure(ctx, localdb.DevOwner, a.Seq, &zero, nil, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		a := functest.Account(t, c.Env, localdb.DevOwner)
		if _, err := ledger.Configure(ctx, localdb.DevOwner, a.Seq, nil, nil, false, time.Now()); err != nil {
			t.Fatal(err)
		}
	}()
	// What is available: nothing credited, what earlier creates hold.
	avail := -a.Held
	orders := listOrders(t, c.Stack)
	r := c.send(functest.DevHeaders, body(map[string]any{"amount": 150, "quantity": 2}))
	if r.Status != 402 {
		t.Fatalf("status %d, want 402: %s", r.Status, r.Body)
	}
	e := r.Error(t)
	wantMsg := "The order needs ₹300.00 and " + avail.Indian() + " is available. Top up the account or ask for a higher credit limit."
	if e.Error.Name != "PaymentRequiredError" || e.Error.Message != wantMsg {
		t.Errorf("error %s %q, want PaymentRequiredError %q", e.Error.Name, e.Error.Message, wantMsg)
	}
	var details struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.Body), &details); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(details.Error.Details), fmt.Sprintf("map[available:%s needed:300.00]", avail); got != want {
		t.Errorf("details %s, want %s", got, want)
	}
	if after := listOrders(t, c.Stack); after != orders {
		t.Errorf("orders %d -> %d: a refused create stored an order", orders, after)
	}
	if b := functest.Account(t, c.Env, localdb.DevOwner); b.Seq != a.Seq || b.Held != a.Held {
		t.Errorf("account %+v after the 402, want it as it was (%+v)", b, a)
	}
	// Credited exactly what the order needs above what is held: it fits.
	credit := accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID("UTR-402"), Type: accounts.TypeCredit,
		Amount: accounts.Rupees(300) + a.Held, Reference: "UTR-402", By: accounts.ByAdmin, CreatedAt: time.Now()}}
	if _, err := ledger.Apply(ctx, localdb.DevOwner, credit); err != nil {
		t.Fatal(err)
	}
	if r := c.send(functest.DevHeaders, body(map[string]any{"amount": 150, "quantity": 2})); r.Status != 200 {
		t.Fatalf("after the credit: status %d: %s", r.Status, r.Body)
	}
	if b := functest.Account(t, c.Env, localdb.DevOwner); *b.Available() != 0 || b.Held != a.Held+accounts.Rupees(300) {
		t.Errorf("account %+v after the create, want 0.00 available", b)
	}
}
