package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// batchBody returns a batch of rows: {"data": [rows…]}.
func batchBody(rows ...string) string { return `{"data":[` + strings.Join(rows, ",") + `]}` }

// validRows returns n valid rows, each its own party name, quantity 1 or 2.
func validRows(prefix string, n int) []string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = body(map[string]any{"firstPartyName": fmt.Sprintf("%s %d", prefix, i), "quantity": 1 + i%2})
	}
	return rows
}

// batchRow is a row of a batch's answer.
type batchRow struct {
	Index       int             `json:"index"`
	Status      int             `json:"status"`
	OrderID     *string         `json:"orderId"`
	Amount      int64           `json:"amount"`
	Quantity    int64           `json:"quantity"`
	TotalAmount int64           `json:"total_amount"`
	Error       json.RawMessage `json:"error"`
	Fits        *bool           `json:"fits"`
}

// batchAnswer is a batch's 200 answer.
type batchAnswer struct {
	Data []batchRow `json:"data"`
	Meta struct {
		Created     int     `json:"created"`
		Failed      int     `json:"failed"`
		DryRun      bool    `json:"dryRun"`
		TotalAmount int64   `json:"total_amount"`
		Needed      *string `json:"needed"`
		Available   *string `json:"available"`
	} `json:"meta"`
}

// sendBatch sends a batch with headers and query.
func sendBatch(s *functest.Stack, headers map[string]string, query, b string) functest.Response {
	return s.Invoke(functest.Request("POST", "/api/live-orders/batch", query, headers, b))
}

// orderIDs returns the orderIds of the answer's 200 rows, in order.
func (a batchAnswer) orderIDs() []string {
	var ids []string
	for _, r := range a.Data {
		if r.Status == 200 && r.OrderID != nil {
			ids = append(ids, *r.OrderID)
		}
	}
	return ids
}

// storedDocs returns the documentIds of every order of the dev owner.
func storedDocs(t *testing.T, s *functest.Stack) []string {
	t.Helper()
	page, _, err := s.Env.DB().Orders(s.Env.Table("OrdersTable")).Page(context.Background(), localdb.DevOwner, 1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, o := range page {
		docs = append(docs, o.DocumentID)
	}
	return docs
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestBatchRowsAnswerAsCreates: every create body the create refuses
// (refusals: quantity 0, 21, "2", an unknown purpose's 404, a fixed amount
// differing, an unknown field, a repeated key, a 70 KB body's 413...) sent
// as a row of one batch, between valid rows, is answered with exactly the
// status and error object the create answers for it; the valid rows are
// created (one bad row never stops the others), and the meta adds up.
func TestBatchRowsAnswerAsCreates(t *testing.T) {
	c := creating{functest.New(t, "CreateOrderFunction", wire)}
	type bad struct{ name, body string }
	var bads []bad
	for _, tc := range refusals() {
		if !reflect.DeepEqual(tc.headers, functest.DevHeaders) || !strings.HasPrefix(tc.body, "{") {
			continue // a header's refusal, or a body that is no object: the whole batch's (TestBatchRefused)
		}
		bads = append(bads, bad{tc.name, tc.body})
	}
	bads = append(bads, bad{"LoneSurrogate", strings.Replace(body(map[string]any{"firstPartyName": "SURROGATE"}), "SURROGATE", `\ud800`, 1)},
		bad{"UnknownFieldAlone", `{"colour": "blue"}`})
	for _, want := range []string{"QuantityZero", "QuantityTwentyOne", "QuantityString", "UnknownPurpose", "FixedAmountDiffers", "AllFieldsAtOnce", "DuplicateKey", "TooLarge"} {
		if !slices.ContainsFunc(bads, func(b bad) bool { return b.name == want }) {
			t.Fatalf("refusals() has no row %s", want)
		}
	}
	var rows []string
	var singles []functest.Response
	for i, b := range bads {
		rows = append(rows, body(map[string]any{"firstPartyName": fmt.Sprintf("Good %d", i), "quantity": 3}), b.body)
		singles = append(singles, c.send(functest.DevHeaders, b.body))
	}
	before := listOrders(t, c.Stack)
	r := sendBatch(c.Stack, functest.DevHeaders, "", batchBody(rows...))
	got := functest.OK[batchAnswer](t, r)
	if got, want := len(got.Data), len(rows); got != want {
		t.Fatalf("%d rows answered, want %d", got, want)
	}
	for i, b := range bads {
		good, row := got.Data[2*i], got.Data[2*i+1]
		if good.Index != 2*i || good.Status != 200 || good.OrderID == nil || good.Amount != 200 || good.Quantity != 3 || good.TotalAmount != 600 || good.Error != nil {
			t.Errorf("row %d (valid) = %+v", 2*i, good)
		}
		single := singles[i]
		if single.Status == 200 {
			t.Fatalf("%s: the create answered 200: %s", b.name, single.Body)
		}
		var env struct{ Error json.RawMessage }
		if err := json.Unmarshal([]byte(single.Body), &env); err != nil {
			t.Fatal(err)
		}
		if row.Index != 2*i+1 || row.Status != single.Status || row.OrderID != nil || !sameJSON(t, row.Error, env.Error) {
			t.Errorf("%s: row = index %d status %d error %s; the create answered %d %s", b.name, row.Index, row.Status, row.Error, single.Status, env.Error)
		}
	}
	if got.Meta.Created != len(bads) || got.Meta.Failed != len(bads) || got.Meta.DryRun || got.Meta.TotalAmount != int64(600*len(bads)) {
		t.Errorf("meta = %+v", got.Meta)
	}
	if got, want := listOrders(t, c.Stack)-before, len(bads); got != want {
		t.Errorf("%d orders stored, want %d", got, want)
	}
	docs := storedDocs(t, c.Stack)
	for _, id := range got.orderIDs() {
		if !slices.Contains(docs, id) {
			t.Errorf("orderId %s is not stored", id)
		}
	}
}

// TestBatchRefused: a body that is not {"data": [1 to 100 objects]} is one
// 400 ValidationError naming data for the whole request, a body over 1 MiB
// is 413, a bad dryRun is 400 naming dryRun, the token is checked as the
// create checks it; none of them stores anything.
func TestBatchRefused(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	one := body(nil)
	big := body(map[string]any{"purchasedBy": strings.Repeat("x", 60000)}) // each row under 64 KiB
	var bigRows []string
	for range 18 {
		bigRows = append(bigRows, big)
	}
	for _, tc := range []struct {
		name, query, body string
		headers           map[string]string
		status            int
		errName, path     string
	}{
		{"Empty", "", `{"data": []}`, functest.DevHeaders, 400, "ValidationError", "data"},
		{"OneHundredOne", "", batchBody(validRows("Row", 101)...), functest.DevHeaders, 400, "ValidationError", "data"},
		{"DataNotArray", "", `{"data": ` + one + `}`, functest.DevHeaders, 400, "ValidationError", "data"},
		{"DataNull", "", `{"data": null}`, functest.DevHeaders, 400, "ValidationError", "data"},
		{"BodyIsArray", "", `[` + one + `]`, functest.DevHeaders, 400, "ValidationError", ""},
		{"NoData", "", one, functest.DevHeaders, 400, "ValidationError", "data"},
		{"DataBesideOther", "", `{"data": [` + one + `], "dryRun": true}`, functest.DevHeaders, 400, "ValidationError", "data"},
		{"DataTwice", "", `{"data": [` + one + `], "data": [` + one + `]}`, functest.DevHeaders, 400, "ValidationError", "data"},
		{"RowNotObject", "", batchBody(one, `5`), functest.DevHeaders, 400, "ValidationError", "data"},
		{"RowArray", "", batchBody(`[` + one + `]`), functest.DevHeaders, 400, "ValidationError", "data"},
		{"NotJSON", "", `{"data": [`, functest.DevHeaders, 400, "ValidationError", ""},
		{"OverOneMiB", "", batchBody(bigRows...), functest.DevHeaders, 413, "PayloadTooLargeError", ""},
		{"DryRunOne", "dryRun=1", batchBody(one), functest.DevHeaders, 400, "ValidationError", "dryRun"},
		{"DryRunTwice", "dryRun=true&dryRun=true", batchBody(one), functest.DevHeaders, 400, "ValidationError", "dryRun"},
		{"NotJSONContentType", "", batchBody(one), map[string]string{"authorization": "Bearer " + localdb.DevToken, "content-type": "text/plain"}, 415, "UnsupportedMediaTypeError", ""},
		{"NoToken", "", batchBody(one), map[string]string{"content-type": "application/json"}, 403, "ForbiddenError", ""},
		{"UnknownToken", "", batchBody(one), map[string]string{"authorization": "Bearer not-a-token"}, 401, "UnauthorizedError", ""},
		{"BadKey", "", batchBody(one), withKey(strings.Repeat("k", 256)), 400, "ValidationError", "Idempotency-Key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.name, "OverOneMiB") && len(tc.body) <= 1<<20 {
				t.Fatalf("body of %d bytes", len(tc.body))
			}
			before := listOrders(t, s)
			r := sendBatch(s, tc.headers, tc.query, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %.300s", r.Status, tc.status, r.Body)
			}
			e := r.Error(t)
			if e.Error.Name != tc.errName {
				t.Errorf("error %+v", e.Error)
			}
			if tc.path != "" && (len(e.Error.Details.Errors) == 0 || len(e.Error.Details.Errors[0].Path) == 0 || e.Error.Details.Errors[0].Path[0] != tc.path) {
				t.Errorf("error %+v does not name %s", e.Error, tc.path)
			}
			if got := listOrders(t, s) - before; got != 0 {
				t.Errorf("%d orders stored", got)
			}
		})
	}
	t.Run("OneHundredAccepted", func(t *testing.T) {
		if got := functest.OK[batchAnswer](t, sendBatch(s, functest.DevHeaders, "", batchBody(validRows("Hundred", 100)...))); got.Meta.Created != 100 {
			t.Errorf("meta %+v", got.Meta)
		}
	})
}

// writes returns the calls among calls that wrote something: write
// operations that succeeded (a failed conditional write changes nothing).
func writes(calls []storetest.ProxyCall) []storetest.ProxyCall {
	return slices.DeleteFunc(slices.Clone(calls), func(c storetest.ProxyCall) bool {
		return c.ErrType != "" || !slices.Contains([]string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}, c.Operation)
	})
}

// TestBatchDryRun: ?dryRun=true answers every row as the batch would
// (priced, or the create's error), with orderId null and meta.dryRun, and
// makes no DynamoDB write at all, with or without a key; the same batch
// without dryRun then creates, and the key a dry run was sent with is
// still free.
func TestBatchDryRun(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	rows := []string{body(map[string]any{"quantity": 4}), body(map[string]any{"quantity": 0}), body(map[string]any{"purpose": "Affidavit", "amount": 20})}
	sendBatch(s, functest.DevHeaders, "dryRun=true", batchBody(rows...)) // warm: the token and articles read
	before := listOrders(t, s)
	s.Proxy.Take()
	dry := functest.OK[batchAnswer](t, sendBatch(s, withKey("dry-key"), "dryRun=true", batchBody(rows...)))
	calls := s.Proxy.Take()
	if w := writes(calls); len(w) != 0 {
		t.Errorf("a dry run wrote: %s", s.Env.Operations(w))
	}
	if w := slices.DeleteFunc(calls, func(c storetest.ProxyCall) bool { return c.Operation == "GetItem" || c.Operation == "Query" }); len(w) != 0 {
		t.Errorf("a dry run tried a write: %s", s.Env.Operations(w))
	}
	t.Logf("dry run of %d rows: %s", len(rows), s.Env.Operations(calls))
	if got := listOrders(t, s) - before; got != 0 {
		t.Errorf("%d orders stored", got)
	}
	if !dry.Meta.DryRun || dry.Meta.Created != 2 || dry.Meta.Failed != 1 || dry.Meta.TotalAmount != 820 {
		t.Errorf("meta %+v", dry.Meta)
	}
	for _, i := range []int{0, 2} {
		if r := dry.Data[i]; r.Status != 200 || r.OrderID != nil || r.TotalAmount == 0 {
			t.Errorf("row %d = %+v", i, r)
		}
	}
	if !strings.Contains(sendBatch(s, withKey("dry-key"), "dryRun=true", batchBody(rows...)).Body, `"orderId":null`) {
		t.Error("a dry run's orderId is not null")
	}
	real := functest.OK[batchAnswer](t, sendBatch(s, withKey("dry-key"), "", batchBody(rows...)))
	for i, r := range real.Data {
		d := dry.Data[i]
		if r.Status != d.Status || r.Amount != d.Amount || r.TotalAmount != d.TotalAmount || !reflect.DeepEqual(r.Error, d.Error) {
			t.Errorf("row %d: created %+v, dry run %+v", i, r, d)
		}
	}
	if got := listOrders(t, s) - before; got != 2 {
		t.Errorf("%d orders stored after the real batch, want 2", got)
	}
}

// TestBatchCalls: a batch of 100 valid rows (with a key, its caller
// listening to order.created) answers within 10 s and makes at most 3
// DynamoDB requests per row (the order's and its hold's two) plus a constant (counted at the wire, the
// SDK's retries left out); it logs the seconds, calls and units per row,
// and every order carries its own order.created event.
func TestBatchCalls(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	listen(t, s, "order.created")
	sendBatch(s, withKey("warm"), "", batchBody(validRows("Warm", 3)...)) // token, article and webhooks cached or read
	const n = 100
	for _, tc := range []struct{ name, key string }{{"WithKey", "calls-key"}, {"WithoutKey", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			s.Proxy.SetMode(storetest.Record)
			s.Proxy.Take()
			start := time.Now()
			r := sendBatch(s, withKey(tc.key), "", batchBody(validRows(tc.name, n)...))
			took := time.Since(start)
			got := functest.OK[batchAnswer](t, r)
			calls := s.Env.Made(s.Proxy.Take())
			if got.Meta.Created != n {
				t.Fatalf("meta %+v", got.Meta)
			}
			if took >= 10*time.Second {
				t.Errorf("%d rows took %v, want under 10 s", n, took)
			}
			// papers.md allows 2 a row; the design makes 1 (the row's
			// PutItem), and accounts.md 2 more for its hold (the account's
			// UpdateItem, the entry's BatchWriteItem).
			if max := 3*n + batchConstant; len(calls) > max {
				t.Errorf("%d DynamoDB requests for %d rows, want at most %d: %s", len(calls), n, max, s.Env.Operations(calls))
			}
			t.Logf("%d rows: %.2f s (%.1f ms a row), %d requests (%.2f a row): %s", n, took.Seconds(), took.Seconds()*1000/n, len(calls), float64(len(calls))/n, s.Env.Operations(calls))
			// Units, by DynamoDB's rules, for the same batch again.
			s.Proxy.SetMode(storetest.Account)
			s.Proxy.Take()
			key := tc.key
			if key != "" {
				key += "-units"
			}
			functest.OK[batchAnswer](t, sendBatch(s, withKey(key), "", batchBody(validRows(tc.name+" units", n)...)))
			var units storetest.Capacity
			by := map[string]storetest.Capacity{}
			logical := map[string]string{}
			for id, name := range s.Env.Names {
				logical[name] = id
			}
			for _, c := range s.Proxy.Take() {
				units = units.Add(c.Billed)
				k := c.Operation + ":" + logical[c.Table]
				by[k] = by[k].Add(c.Billed)
			}
			if err := s.Proxy.Err(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d rows: %.1f RCU %.1f WCU (%.2f RCU, %.2f WCU a row); by call: %v", n, units.Read, units.Write, units.Read/n, units.Write/n, by)
		})
	}
	s.Proxy.SetMode(storetest.Record)
	// Every created order carries its own order.created event (its outbox).
	table := s.Env.DB().Orders(s.Env.Table("OrdersTable"))
	docs := storedDocs(t, s)
	for _, doc := range docs {
		st, err := table.ByDocument(context.Background(), doc)
		if err == nil {
			st, err = table.Reread(context.Background(), st)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Outbox) != 1 || st.Outbox[0].Type != stampduty.EventOrderCreated || st.Outbox[0].Order.DocumentID != doc {
			t.Errorf("order %s: outbox %+v, want its one order.created", doc, st.Outbox)
		}
	}
	if got, want := len(docs), 3+4*n; got != want {
		t.Errorf("%d orders, want %d", got, want)
	}
}

// listen registers a webhook of the dev owner for the event types.
func listen(t *testing.T, s *functest.Stack, types ...string) {
	t.Helper()
	ctx := context.Background()
	hooks := s.Env.DB().Webhooks(s.Env.Table("WebhooksTable"))
	set, err := hooks.Webhooks(ctx, localdb.DevOwner)
	if err != nil {
		t.Fatal(err)
	}
	set.Live = append(set.Live, webhooks.Webhook{ID: 1, DocumentID: "wbatch000000000000000000", URL: "https://hooks.example.com/x", Events: types, Enabled: true, Secret: "whsec_x"})
	if err := hooks.SaveWebhooks(ctx, localdb.DevOwner, set, set.V); err != nil {
		t.Fatal(err)
	}
}

// batchConstant is the DynamoDB requests a batch makes besides its rows':
// the key's claim, plan and completion, the webhooks read, the seq counter,
// a few id blocks, the token and article reads of a cold cache.
const batchConstant = 10

// TestBatchIdempotent: the same key and the same body answer the same rows
// (the same bytes, refused rows' answers kept too: a 400 and a row's 413)
// and write nothing; the same key with another body,
// or with a create's body on the create, is 409.
func TestBatchIdempotent(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	rows := append(validRows("Idem", 5), body(map[string]any{"quantity": 21}), body(map[string]any{"purchasedBy": strings.Repeat("x", 70000)}))
	first := sendBatch(s, withKey("batch-key"), "", batchBody(rows...))
	ids := functest.OK[batchAnswer](t, first).orderIDs()
	before := listOrders(t, s)
	s.Proxy.Take()
	again := sendBatch(s, withKey("batch-key"), "", batchBody(rows...))
	if again.Status != 200 || again.Body != first.Body {
		t.Errorf("replay answered %d %s\nfirst %s", again.Status, again.Body, first.Body)
	}
	if w := writes(s.Proxy.Take()); len(w) != 0 {
		t.Errorf("the replay wrote: %s", s.Env.Operations(w))
	}
	if got := listOrders(t, s) - before; got != 0 {
		t.Errorf("the replay stored %d orders", got)
	}
	if r := sendBatch(s, withKey("batch-key"), "", batchBody(rows[1:]...)); r.Status != 409 {
		t.Errorf("another body: %d %s", r.Status, r.Body)
	}
	if r := s.Invoke(functest.Request("POST", "/api/live-orders", "", withKey("batch-key"), rows[0])); r.Status != 409 {
		t.Errorf("the create with the batch's key: %d %s", r.Status, r.Body)
	}
	if got, want := len(ids), 5; got != want {
		t.Errorf("%d orderIds, want %d", got, want)
	}
}

// TestBatchCutOff: a first attempt cut off after k of its rows were
// stored (every DynamoDB call after the k-th order's PutItem fails, as
// when the instance dies) leaves those k orders; the retry with the same
// key, once the first attempt's lease has run out, recognises them (the
// same orderIds), creates the rest, and every row is stored exactly once.
// A first attempt whose puts fail but which ends normally yields its key,
// and the retry goes ahead at once.
func TestBatchCutOff(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	table := s.Env.Table("OrdersTable")
	const n, k = 30, 12
	faultAfter := func(stop bool) {
		var puts atomic.Int64
		s.Proxy.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
			if c.Operation == "PutItem" && c.Table == table && puts.Add(1) > k {
				return &storetest.Fault{Status: 400, Type: "ValidationException"}
			}
			if stop && puts.Load() > k {
				return &storetest.Fault{Status: 400, Type: "ValidationException"}
			}
			return nil
		})
	}
	for _, tc := range []struct {
		name string
		stop bool // every call fails after the k-th put: the instance died
	}{{"InstanceDies", true}, {"PutsFail", false}} {
		t.Run(tc.name, func(t *testing.T) {
			key := "cut-" + tc.name
			rows := validRows(tc.name, n)
			before := storedDocs(t, s)
			faultAfter(tc.stop)
			first := sendBatch(s, withKey(key), "", batchBody(rows...))
			s.Proxy.SetFault(nil)
			t.Logf("first attempt: %d %.200s", first.Status, first.Body)
			after := storedDocs(t, s)
			kept := slices.DeleteFunc(slices.Clone(after), func(d string) bool { return slices.Contains(before, d) })
			if got := len(kept); got != k {
				t.Fatalf("the first attempt stored %d orders, want %d", got, k)
			}
			if tc.stop {
				// The lease still runs: a retry now waits, then answers 409.
				if r := sendBatch(s, withKey(key), "", batchBody(rows...)); r.Status != 409 {
					t.Errorf("retry within the lease: %d %.200s", r.Status, r.Body)
				}
				s.Restart(func(d function.Deps) http.Handler {
					return wireAt(d, func() time.Time { return time.Now().Add(orders.KeyLease + time.Second) })
				})
				defer s.Restart(wire)
			}
			s.Proxy.Take()
			r := sendBatch(s, withKey(key), "", batchBody(rows...))
			got := functest.OK[batchAnswer](t, r)
			ids := got.orderIDs()
			// The k stored orders are recognised, not written again (which
			// would also record their order.created once more).
			puts := 0
			for _, c := range writes(s.Proxy.Take()) {
				if c.Operation == "PutItem" && c.Table == table {
					puts++
				}
			}
			if puts != n-k {
				t.Errorf("the retry stored %d orders, want the %d the first attempt had not", puts, n-k)
			}
			if got.Meta.Created != n || len(ids) != n {
				t.Fatalf("retry: meta %+v", got.Meta)
			}
			for _, d := range kept {
				if !slices.Contains(ids, d) {
					t.Errorf("order %s of the first attempt is not among the retry's orderIds", d)
				}
			}
			now := storedDocs(t, s)
			added := slices.DeleteFunc(slices.Clone(now), func(d string) bool { return slices.Contains(before, d) })
			slices.Sort(added)
			sorted := slices.Sorted(slices.Values(ids))
			if !slices.Equal(added, sorted) {
				t.Errorf("stored %d new orders %v\nanswered %d %v", len(added), added, len(sorted), sorted)
			}
			for i, r := range got.Data {
				if !strings.Contains(fmt.Sprint(orderParty(t, s, *r.OrderID)), fmt.Sprintf("%s %d", tc.name, i)) {
					t.Errorf("row %d answered order %s of another row", i, *r.OrderID)
				}
			}
			if replay := sendBatch(s, withKey(key), "", batchBody(rows...)); replay.Body != r.Body {
				t.Errorf("replay %s\nwant %s", replay.Body, r.Body)
			}
		})
	}
}

// orderParty returns the first party of the dev owner's order doc.
func orderParty(t *testing.T, s *functest.Stack, doc string) string {
	t.Helper()
	page, _, err := s.Env.DB().Orders(s.Env.Table("OrdersTable")).Page(context.Background(), localdb.DevOwner, 1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range page {
		if o.DocumentID == doc {
			return o.StampDuty.FirstPartyName
		}
	}
	t.Fatalf("order %s not stored", doc)
	return ""
}

// TestBatchConcurrent: several batches of one caller at once (with and
// without keys) neither lose nor double an order: the list's total grows
// by the rows sent, and its documentIds are exactly the answered ones.
func TestBatchConcurrent(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	before := storedDocs(t, s)
	const batches, n = 6, 20
	answers := make([]batchAnswer, batches)
	var wg sync.WaitGroup
	for b := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := ""
			if b%2 == 0 {
				key = fmt.Sprintf("concurrent-%d", b)
			}
			answers[b] = functest.OK[batchAnswer](t, sendBatch(s, withKey(key), "", batchBody(validRows(fmt.Sprintf("Batch %d", b), n)...)))
		}()
	}
	wg.Wait()
	var ids []string
	for _, a := range answers {
		ids = append(ids, a.orderIDs()...)
	}
	if got, want := listOrders(t, s)-len(before), batches*n; got != want {
		t.Errorf("the list counts %d new orders, want %d", got, want)
	}
	now := storedDocs(t, s)
	added := slices.DeleteFunc(slices.Clone(now), func(d string) bool { return slices.Contains(before, d) })
	slices.Sort(added)
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != batches*n || !slices.Equal(added, ids) {
		t.Errorf("stored %d new documentIds, answered %d (distinct %d)", len(added), len(ids), len(slices.Compact(slices.Clone(ids))))
	}
}

// TestBatchHugeRefusalsReplay: a batch under a key whose refused rows have
// megabytes of messages (rows naming thousands of unknown fields, each row
// under 64 KiB) is answered, completes its key though a record holds 400
// KB at most, and its replay answers the same bytes and writes nothing.
// With more such rows, whose errors would make an answer larger than a
// Lambda may send, the batch is one 400 naming data, and nothing is stored.
func TestBatchHugeRefusalsReplay(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	var keys []string
	for i := range 4000 {
		keys = append(keys, fmt.Sprintf(`"k%04d":1`, i))
	}
	huge := "{" + strings.Join(keys, ",") + "}"
	rows := []string{body(nil)}
	for range 4 {
		rows = append(rows, huge)
	}
	first := sendBatch(s, withKey("huge"), "", batchBody(rows...))
	got := functest.OK[batchAnswer](t, first)
	if got.Meta.Created != 1 || got.Meta.Failed != 4 || len(first.Body) < 1<<20 {
		t.Fatalf("meta %+v, %d bytes", got.Meta, len(first.Body))
	}
	s.Proxy.Take()
	again := sendBatch(s, withKey("huge"), "", batchBody(rows...))
	if again.Body != first.Body {
		t.Errorf("the replay answered otherwise (%d bytes, first %d)", len(again.Body), len(first.Body))
	}
	if w := writes(s.Proxy.Take()); len(w) != 0 {
		t.Errorf("the replay wrote: %s", s.Env.Operations(w))
	}
	for range 10 {
		rows = append(rows, huge)
	}
	before := listOrders(t, s)
	r := sendBatch(s, withKey("huger"), "", batchBody(rows...))
	if r.Status != 400 || len(r.Body) > 1000 || !strings.Contains(r.Body, `"path":["data"]`) {
		t.Errorf("%d rows naming 4,000 unknown fields: %d %.300s", len(rows)-1, r.Status, r.Body)
	}
	if got := listOrders(t, s) - before; got != 0 {
		t.Errorf("%d orders stored", got)
	}
}

// rowNested returns a create body nested depth levels deep (the body
// itself is level 1): amount holds depth-1 arrays around 200.
func rowNested(depth int) string { return `{"amount":` + nested("[", "200", "]", depth-1) + `}` }

// TestBatchNestedRows: a row nested deeper than a create's body may be is
// answered in its row with exactly the status and error object a create
// with that body answers, its depth measured from the row as the create's
// from its body, and the valid rows beside it are created, or priced in a
// dry run (papers.md: one bad row never stops the others). The rows: the
// attack's {"amount": [[[…40 levels…]]]}, the first level refused (33)
// and the last allowed (32, refused for its amount alone), 33 counted
// from a {"data": …} row, 5,000 objects in an otherwise valid order, and
// 9,998 levels, the deepest a row can nest (the body then nests 10,000).
func TestBatchNestedRows(t *testing.T) {
	c := creating{functest.New(t, "CreateOrderFunction", wire)}
	bads := []struct{ name, body string }{
		{"Attack41", rowNested(41)},
		{"Depth33", rowNested(33)},
		{"Depth32", rowNested(32)},
		{"Depth33InData", wrap(rowNested(32))},
		{"Objects5000InValidOrder", string(orderJSON([2]string{"purpose", nested(`{"$ne":`, "null", "}", 5000)}))},
		{"Depth9998", rowNested(9998)},
	}
	var rows []string
	var singles []json.RawMessage
	for i, b := range bads {
		rows = append(rows, body(map[string]any{"firstPartyName": fmt.Sprintf("Nested %d", i)}), b.body)
		r := c.send(functest.DevHeaders, b.body)
		if r.Status != 400 {
			t.Fatalf("%s: the create answered %d: %.300s", b.name, r.Status, r.Body)
		}
		var env struct{ Error json.RawMessage }
		if err := json.Unmarshal([]byte(r.Body), &env); err != nil {
			t.Fatal(err)
		}
		singles = append(singles, env.Error)
	}
	for _, tc := range []struct {
		name, query string
		stored      int
	}{{"DryRun", "dryRun=true", 0}, {"Create", "", len(bads)}} {
		t.Run(tc.name, func(t *testing.T) {
			before := listOrders(t, c.Stack)
			got := functest.OK[batchAnswer](t, sendBatch(c.Stack, functest.DevHeaders, tc.query, batchBody(rows...)))
			if got, want := len(got.Data), len(rows); got != want {
				t.Fatalf("%d rows answered, want %d", got, want)
			}
			for i, b := range bads {
				good, row := got.Data[2*i], got.Data[2*i+1]
				if good.Status != 200 || (good.OrderID == nil) != (tc.stored == 0) || good.TotalAmount != 200 || good.Error != nil {
					t.Errorf("row %d (valid, beside %s) = %+v", 2*i, b.name, good)
				}
				if row.Index != 2*i+1 || row.Status != 400 || row.OrderID != nil || !sameJSON(t, row.Error, singles[i]) {
					t.Errorf("%s: row = index %d status %d error %s; the create answered 400 %s", b.name, row.Index, row.Status, row.Error, singles[i])
				}
			}
			if m := got.Meta; m.Created != len(bads) || m.Failed != len(bads) || m.DryRun != (tc.stored == 0) || m.TotalAmount != int64(200*len(bads)) {
				t.Errorf("meta = %+v", m)
			}
			if got := listOrders(t, c.Stack) - before; got != tc.stored {
				t.Errorf("%d orders stored, want %d", got, tc.stored)
			}
		})
	}
}

// TestBatchNestingLimit: what stays a refusal of the whole request. A
// body nested deeper than encoding/json reads any JSON (10,000 levels: a
// row of 9,999) is one 400 "The body is not valid JSON", as a create's
// body that deep is; 1 MiB of brackets or members opened and never closed
// is refused after 10,000 of them. 100 rows nested 1,951 objects deep
// each (1 MiB) are read whole and each answered in its row, within the
// 10 s papers.md gives a batch. Nothing is stored.
func TestBatchNestingLimit(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	const mib = 1 << 20
	open := func(unit string) string { // {"data":[ then unit repeated up to 1 MiB
		head := `{"data":[`
		return head + strings.Repeat(unit, (mib-len(head))/len(unit))
	}
	for _, tc := range []struct{ name, body string }{
		{"Depth10001", batchBody(body(nil), rowNested(9999))},
		{"Depth10001InData", batchBody(body(nil), wrap(rowNested(9998)))},
		{"OneMiBOfOpenArrays", open("[")},
		{"OneMiBOfOpenObjects", open(`{"":`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := listOrders(t, s)
			start := time.Now()
			r := sendBatch(s, functest.DevHeaders, "", tc.body)
			t.Logf("%d bytes answered %d in %v", len(tc.body), r.Status, time.Since(start).Round(time.Millisecond))
			if r.Status != 400 {
				t.Fatalf("status %d, want 400: %.300s", r.Status, r.Body)
			}
			e := r.Error(t)
			if got, want := e.Error.Message, "Invalid data. The body is not valid JSON"; got != want {
				t.Errorf("message = %q, want %q", got, want)
			}
			if paths := e.Paths(); len(paths) != 1 || paths[0] != "" {
				t.Errorf("paths = %q, want the body's alone", paths)
			}
			if got := listOrders(t, s) - before; got != 0 {
				t.Errorf("%d orders stored", got)
			}
		})
	}
	t.Run("HundredDeepRows", func(t *testing.T) {
		row := string(orderJSON([2]string{"purpose", nested(`{"":`, "null", "}", 1950)}))
		rows := make([]string, 100)
		for i := range rows {
			rows[i] = row
		}
		b := batchBody(rows...)
		if len(b) > mib {
			t.Fatalf("%d bytes", len(b))
		}
		start := time.Now()
		got := functest.OK[batchAnswer](t, sendBatch(s, functest.DevHeaders, "", b))
		took := time.Since(start)
		t.Logf("%d rows of 1,951 levels, %d bytes: %v", len(rows), len(b), took.Round(time.Millisecond))
		if got.Meta.Created != 0 || got.Meta.Failed != len(rows) {
			t.Errorf("meta = %+v", got.Meta)
		}
		for _, r := range got.Data {
			if r.Status != 400 || !strings.Contains(string(r.Error), "The body is nested too deeply") {
				t.Fatalf("row %d = %d %s", r.Index, r.Status, r.Error)
			}
		}
	})
}

// TestBatchRowsCarryDuty: each created row, in a dry run too, carries the
// explained duty of one paper (duty-rules.md §15), whose total is its
// amount; a replay of the batch's Idempotency-Key answers the same duty.
func TestBatchRowsCarryDuty(t *testing.T) {
	s := functest.New(t, "CreateOrderFunction", wire)
	b := batchBody(validRows("Duty", 3)...)
	type dutyRow struct {
		Amount int64 `json:"amount"`
		Duty   *struct {
			Total string `json:"total"`
			Rule  struct {
				Hash string `json:"hash"`
			} `json:"rule"`
		} `json:"duty"`
	}
	read := func(r functest.Response) []dutyRow {
		t.Helper()
		var a struct {
			Data []dutyRow `json:"data"`
		}
		if r.Status != 200 || json.Unmarshal([]byte(r.Body), &a) != nil {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		for i, row := range a.Data {
			if row.Duty == nil || row.Duty.Total != fmt.Sprintf("%d.00", row.Amount) || row.Duty.Rule.Hash == "" {
				t.Errorf("row %d: amount %d, duty %+v", i, row.Amount, row.Duty)
			}
		}
		return a.Data
	}
	read(sendBatch(s, functest.DevHeaders, "dryRun=true", b))
	first := sendBatch(s, withKey("duty-batch"), "", b)
	read(first)
	again := sendBatch(s, withKey("duty-batch"), "", b)
	read(again)
	if again.Body != first.Body {
		t.Errorf("the replay answers\n%s\nthe batch answered\n%s", again.Body, first.Body)
	}
}

// TestBatchHoldsRowsInTheirOrder: with a limit, a batch's rows are held in
// their order and a row that does not fit answers its own 402 while the
// others go on (accounts.md); the dry run answers each row as the real
// batch then does, with fits, meta.needed (every row passing its checks)
// and meta.available (now).
func TestBatchHoldsRowsInTheirOrder(t *testing.T) {
	ctx := context.Background()
	s := functest.New(t, "CreateOrderFunction", wire)
	ledger := s.Env.DB().Ledger(s.Env.Table("LedgerTable"))
	zero := accounts.Money(0)
	if _, err := ledger.Configure(ctx, localdb.DevOwner, 0, &zero, nil, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	credit := accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID("UTR-batch"), Type: accounts.TypeCredit,
		Amount: accounts.Rupees(500), Reference: "UTR-batch", By: accounts.ByAdmin, CreatedAt: time.Now()}}
	if _, err := ledger.Apply(ctx, localdb.DevOwner, credit); err != nil {
		t.Fatal(err)
	}
	// 300 fits, 300 more does not (200 left), a refused row, 150 fits.
	rows := []string{body(map[string]any{"amount": 150, "quantity": 2}), body(map[string]any{"amount": 150, "quantity": 2}),
		body(map[string]any{"quantity": 0}), body(map[string]any{"amount": 150})}
	dry := functest.OK[batchAnswer](t, sendBatch(s, functest.DevHeaders, "dryRun=true", batchBody(rows...)))
	fits := func(a batchAnswer) string {
		var out []string
		for _, r := range a.Data {
			f := "-"
			if r.Fits != nil {
				f = fmt.Sprint(*r.Fits)
			}
			out = append(out, fmt.Sprintf("%d:%s", r.Status, f))
		}
		return strings.Join(out, " ")
	}
	if got, want := fits(dry), "200:true 402:false 400:- 200:true"; got != want {
		t.Errorf("dry run rows %s, want %s", got, want)
	}
	if dry.Meta.Needed == nil || *dry.Meta.Needed != "750.00" || dry.Meta.Available == nil || *dry.Meta.Available != "500.00" {
		t.Errorf("dry run meta needed %v available %v, want 750.00 and 500.00", dry.Meta.Needed, dry.Meta.Available)
	}
	real := functest.OK[batchAnswer](t, sendBatch(s, functest.DevHeaders, "", batchBody(rows...)))
	for i, r := range real.Data {
		if d := dry.Data[i]; r.Status != d.Status || !sameJSON(t, orNull(r.Error), orNull(d.Error)) {
			t.Errorf("row %d: batch %d %s, dry run %d %s", i, r.Status, r.Error, d.Status, d.Error)
		}
	}
	if real.Meta.Needed != nil || real.Meta.Available != nil {
		t.Errorf("a real batch's meta has needed %v, available %v: a dry run's only", real.Meta.Needed, real.Meta.Available)
	}
	a := functest.Account(t, s.Env, localdb.DevOwner)
	if got, want := a.Held, accounts.Rupees(450); got != want || *a.Available() != accounts.Rupees(50) {
		t.Errorf("held %s, available %s after the batch; want %s held, 50.00 available", got, *a.Available(), want)
	}
	if got := len(storedDocs(t, s)); got != 2 {
		t.Errorf("%d orders stored, want the 2 that fit", got)
	}
}

// orNull is b, or the JSON null when b is empty.
func orNull(b json.RawMessage) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}
