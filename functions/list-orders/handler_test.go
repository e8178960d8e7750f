package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

func TestMain(m *testing.M) { functest.Main(m) }

// addOrders stores n orders for owner, named "Party 1".."Party n" in order.
func addOrders(t *testing.T, s *functest.Stack, owner string, n int) {
	functest.AddOrders(t, s.Env, owner, n)
}

type listBody struct {
	Data       []map[string]any `json:"data"`
	Pagination map[string]int   `json:"pagination"`
}

// listing is TestListOrders's function over one set of tables, which each
// subtest lists in turn: 30 orders of the dev owner, 3 of someone else.
type listing struct{ *functest.Stack }

// list lists the orders with headers and the raw query.
func (l listing) list(headers map[string]string, query string) functest.Response {
	return l.Invoke(functest.Request("GET", "/api/live-orders", query, headers, ""))
}

// TestListOrders lists one caller's 30 orders, beside another's 3, with
// each query of the contract in turn; the last subtest checks the function
// against template.yaml with every call they made.
func TestListOrders(t *testing.T) {
	l := listing{functest.New(t, "ListOrdersFunction", wire)}
	addOrders(t, l.Stack, localdb.DevOwner, 30)
	addOrders(t, l.Stack, "someone-else", 3)
	for _, tc := range pageCases() {
		t.Run(tc.name, func(t *testing.T) { l.page(t, tc) })
	}
	t.Run("Shape", l.shape)
	t.Run("OnlyTheCallersOrders", l.onlyTheCallersOrders)
	t.Run("NeverAnotherCallersOrders", l.neverAnotherCallersOrders)
	for _, tc := range refusals() {
		t.Run(tc.name, func(t *testing.T) { l.refused(t, tc) })
	}
	t.Run("Offset", func(t *testing.T) {
		r := l.list(functest.DevHeaders, "pagination[start]=28&pagination[limit]=5")
		b := functest.OK[listBody](t, r)
		if got, want := fmt.Sprint(b.Pagination), "map[limit:5 start:28 total:30]"; got != want {
			t.Errorf("pagination = %s, want %s", got, want)
		}
		if got, want := partyNames(b), "Party 2,Party 1"; got != want {
			t.Errorf("orders = %s, want %s", got, want)
		}
	})
	t.Run("WithoutCount", func(t *testing.T) {
		b := functest.OK[listBody](t, l.list(functest.DevHeaders, "pagination[withCount]=false&pageSize=2"))
		if got, want := fmt.Sprint(b.Pagination), "map[page:1 pageSize:2]"; got != want {
			t.Errorf("pagination = %s, want %s", got, want)
		}
	})
	t.Run("DraftIsEmpty", func(t *testing.T) {
		b := functest.OK[listBody](t, l.list(functest.DevHeaders, "status=draft"))
		if got, want := fmt.Sprint(b.Pagination, len(b.Data)), "map[page:1 pageCount:0 pageSize:25 total:0] 0"; got != want {
			t.Errorf("pagination, count = %s, want %s", got, want)
		}
	})
	t.Run("Fields", func(t *testing.T) {
		b := functest.OK[listBody](t, l.list(functest.DevHeaders, "fields[0]=createdAt&pageSize=1"))
		var keys []string
		for k := range b.Data[0] {
			keys = append(keys, k)
		}
		if got, want := strings.Join(sortStrings(keys), ","), "cancellation,cancelledAt,createdAt,documentId,id,live_order_fulfillments,livemode,stamp_duty"; got != want {
			t.Errorf("keys = %s, want %s", got, want)
		}
	})
	t.Run("Events", func(t *testing.T) {
		l.CheckEvents(t, map[string]int{"list-orders": 200, "list-orders-no-token": 403, "list-orders-bad-page": 400})
	})
	t.Run("CancelledOrder", l.cancelledOrder)
	t.Run("PageNCostsWhatPage1Costs", l.pageNCostsWhatPage1Costs)
	t.Run("InByKey", l.inByKey)
	t.Run("VanishedCreateIsVoided", l.vanishedCreateIsVoided)
	t.Run("Template", func(t *testing.T) {
		l.CheckRoutes()
		l.CheckTemplate(l.Proxy.All())
	})
}

// pageCase is a page asked for, and what it must hold: its number, size,
// count of orders, page count and first order's party.
type pageCase struct {
	name                  string
	query                 string
	page, size, count, pc int
	first                 string
}

// pageCases are the pages of the 30 orders the tests ask for.
func pageCases() []pageCase {
	pages := []pageCase{
		{"Defaults", "", 1, 25, 25, 2, "Party 30"},
		{"SecondPage", "page=2", 2, 25, 5, 2, "Party 5"},
		{"PastTheEnd", "page=3", 3, 25, 0, 2, ""},
		{"FarPastTheEnd", "page=99999999999999999999", 2147483647, 25, 0, 2, ""},
		{"SmallPages", "page=4&pageSize=7", 4, 7, 7, 5, "Party 9"},
		{"SizeCapped", "pageSize=1000", 1, 100, 30, 1, "Party 30"},
		{"LeadingZeros", "page=02&pageSize=010", 2, 10, 10, 3, "Party 20"},
		{"OwnerParamIgnored", "owner=someone-else", 1, 25, 25, 2, "Party 30"},
	}
	// Strapi's names and parameters (strapi-compat.md) on the same pages.
	strapiPages := []pageCase{
		{"PaginationAlias", "pagination%5Bpage%5D=2", 2, 25, 5, 2, "Party 5"},
		{"PaginationAliasSize", "pagination[page]=4&pagination[pageSize]=7", 4, 7, 7, 5, "Party 9"},
		{"UnknownParamsIgnored", "foo=1&populate=*&populate[0]=stamp_duty&locale=en&status=published", 1, 25, 25, 2, "Party 30"},
		{"SortNewestFirst", "sort=createdAt:desc", 1, 25, 25, 2, "Party 30"},
	}
	return append(pages, strapiPages...)
}

// page lists tc's page and checks what it holds.
func (l listing) page(t *testing.T, tc pageCase) {
	r := l.list(functest.DevHeaders, tc.query)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var b listBody
	if err := json.Unmarshal([]byte(r.Body), &b); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"page": tc.page, "pageSize": tc.size, "pageCount": tc.pc, "total": 30}
	if fmt.Sprint(b.Pagination) != fmt.Sprint(want) {
		t.Errorf("pagination = %v, want %v", b.Pagination, want)
	}
	if len(b.Data) != tc.count {
		t.Fatalf("%d orders, want %d", len(b.Data), tc.count)
	}
	if tc.count > 0 {
		if got := b.Data[0]["stamp_duty"].(map[string]any)["first_party_name"]; got != tc.first {
			t.Errorf("first order = %v, want %v", got, tc.first)
		}
	}
}

func (l listing) shape(t *testing.T) {
	r := l.list(functest.DevHeaders, "pageSize=1")
	var raw struct {
		Data []json.RawMessage `json:"data"`
	}
	json.Unmarshal([]byte(r.Body), &raw)
	var o map[string]any
	json.Unmarshal(raw.Data[0], &o)
	keys := func(m map[string]any) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		return fmt.Sprint(sortStrings(ks))
	}
	if got, want := keys(o), "[cancellation cancelledAt createdAt documentId id live_order_fulfillments livemode payment stamp_duty updatedAt]"; got != want {
		t.Errorf("order keys = %s, want %s", got, want)
	}
	sd := o["stamp_duty"].(map[string]any)
	if got, want := keys(sd), "[amount consideration_price description duty first_party_PAN first_party_address first_party_name id mobile_number paid_by purchased_by quantity second_party_PAN second_party_address second_party_name state state_purpose total_amount uploaded_document]"; got != want {
		t.Errorf("stamp_duty keys = %s\n want %s", got, want)
	}
	f := o["live_order_fulfillments"].([]any)[0].(map[string]any)
	if got, want := keys(f), "[certificate_file certificate_number documentId id order_status status_history unique_doc_ref]"; got != want {
		t.Errorf("fulfillment keys = %s, want %s", got, want)
	}
	if f["certificate_file"] != nil || f["order_status"] != "Pending" || sd["uploaded_document"] != nil {
		t.Errorf("fulfillment %v, uploaded_document %v", f, sd["uploaded_document"])
	}
	if got, want := keys(sd["state_purpose"].(map[string]any)), "[documentId id purpose_name]"; got != want {
		t.Errorf("state_purpose keys = %s, want %s", got, want)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", o["createdAt"].(string)); err != nil {
		t.Errorf("createdAt: %v", err)
	}
	if o["cancelledAt"] != nil || o["cancellation"] != nil {
		t.Errorf("an order not cancelled: cancelledAt %v, cancellation %v, want both null", o["cancelledAt"], o["cancellation"])
	}
}

// cancelledOrder: a cancelled order stays in the list, with its cancel,
// whatever fields selects.
func (l listing) cancelledOrder(t *testing.T) {
	// The oldest of the dev caller's orders, which the other subtests have read.
	b := functest.OK[listBody](t, l.list(functest.DevHeaders, "pagination[start]=29&pagination[limit]=1"))
	doc := b.Data[0]["documentId"].(string)
	if _, err := functest.Fulfiller(l.Env).Cancel(context.Background(), localdb.DevOwner, doc); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"", "&fields[0]=createdAt", "&fields[0]=cancelledAt"} {
		b := functest.OK[listBody](t, l.list(functest.DevHeaders, "filters[documentId][$eq]="+doc+q))
		if len(b.Data) != 1 {
			t.Fatalf("%s: %d orders, want the cancelled one", q, len(b.Data))
		}
		o := b.Data[0]
		x, _ := o["cancellation"].(map[string]any)
		if at, _ := o["cancelledAt"].(string); at == "" || x == nil || x["by"] != "caller" || x["reason"] != nil {
			t.Errorf("%s: cancelledAt %v, cancellation %v", q, o["cancelledAt"], o["cancellation"])
		}
	}
}

func (l listing) onlyTheCallersOrders(t *testing.T) {
	other := "sdt_" + strings.Repeat("B", 43)
	functest.AddToken(t, l.Env, other, "someone-else")
	r := l.list(map[string]string{"authorization": "Bearer " + other}, "pageSize=100")
	var b listBody
	json.Unmarshal([]byte(r.Body), &b)
	if r.Status != 200 || b.Pagination["total"] != 3 || len(b.Data) != 3 {
		t.Errorf("status %d, total %d, %d orders; want 200, 3, 3", r.Status, b.Pagination["total"], len(b.Data))
	}
	for _, o := range b.Data {
		if name := o["stamp_duty"].(map[string]any)["first_party_name"]; name == "Party 30" || name == "Party 4" {
			t.Errorf("another caller's order listed: %v", name)
		}
	}
}

// neverAnotherCallersOrders: whatever the query, a caller sees only its
// own orders: the owner comes from the token and no parameter can name
// another.
func (l listing) neverAnotherCallersOrders(t *testing.T) {
	other := "sdt_" + strings.Repeat("D", 43)
	functest.AddToken(t, l.Env, other, "third-party")
	addOrders(t, l.Stack, "third-party", 2)
	theirs, _, err := l.Env.DB().Orders(l.Env.Table("OrdersTable")).Page(context.Background(), "third-party", 1, 10)
	if err != nil || len(theirs) != 2 {
		t.Fatal(len(theirs), err)
	}
	own := map[string]bool{theirs[0].DocumentID: true, theirs[1].DocumentID: true}
	queries := []string{"", "page=1", "pageSize=100", "page=1&pageSize=100", "owner=dev", "owner=someone-else",
		"caller=dev", "filters[owner][$eq]=dev", "page=1&owner=dev", "pageSize=100&pageSize=100", "page=0", "page=-1",
		"page=1%26owner%3Ddev", "page=1;owner=dev", "pagination[page]=1", "populate=*", "page=99999999999999999999",
		"page=1&pageSize=1", "page=2&pageSize=1", "page=3&pageSize=1", "%70age=1", "page=1&", "&&&", "=", "page"}
	for _, q := range queries {
		r := l.list(map[string]string{"authorization": "Bearer " + other}, q)
		if r.Status >= 500 {
			t.Errorf("query %q: status %d", q, r.Status)
			continue
		}
		if r.Status != 200 {
			continue // refused: nothing shown
		}
		var b listBody
		json.Unmarshal([]byte(r.Body), &b)
		if b.Pagination["total"] != 2 {
			t.Errorf("query %q: total %d, want the caller's 2", q, b.Pagination["total"])
		}
		for _, o := range b.Data {
			if doc := o["documentId"].(string); !own[doc] {
				t.Errorf("query %q: listed %s, another caller's order", q, doc)
			}
		}
	}
}

// refusal is a list the contract refuses: its status, error name and the
// one parameter its details name ("" for none).
type refusal struct {
	name, query string
	headers     map[string]string
	status      int
	errName     string
	path        string
}

// refusals are the lists the contract refuses, each with its answer.
func refusals() []refusal {
	return []refusal{
		{"NoToken", "", nil, 403, "ForbiddenError", ""},
		{"UnknownToken", "", map[string]string{"authorization": "Bearer sdt_" + strings.Repeat("C", 43)}, 401, "UnauthorizedError", ""},
		{"PageZero", "page=0", functest.DevHeaders, 400, "ValidationError", "page"},
		{"PageNegative", "page=-1", functest.DevHeaders, 400, "ValidationError", "page"},
		{"PageNotNumber", "page=two", functest.DevHeaders, 400, "ValidationError", "page"},
		{"PageFraction", "page=1.5", functest.DevHeaders, 400, "ValidationError", "page"},
		{"PageEmpty", "page=", functest.DevHeaders, 400, "ValidationError", "page"},
		{"PageTwice", "page=1&page=2", functest.DevHeaders, 400, "ValidationError", "page"},
		{"SizeZero", "pageSize=0", functest.DevHeaders, 400, "ValidationError", "pageSize"},
		{"SizePlus", "pageSize=%2B5", functest.DevHeaders, 400, "ValidationError", "pageSize"},
		{"BothPageForms", "page=2&pagination%5Bpage%5D=2", functest.DevHeaders, 400, "ValidationError", "pagination"},
		{"PageAndOffset", "page=2&pagination[start]=2", functest.DevHeaders, 400, "ValidationError", "pagination"},
		{"SortOldestFirst", "sort=createdAt:asc", functest.DevHeaders, 400, "ValidationError", "sort"},
		{"SortOtherField", "sort=id:desc", functest.DevHeaders, 400, "ValidationError", "sort"},
		{"FilterOwner", "filters[owner][$eq]=someone-else", functest.DevHeaders, 400, "ValidationError", "filters"},
		{"BadWithCount", "pagination[withCount]=no", functest.DevHeaders, 400, "ValidationError", "pagination[withCount]"},
		{"FieldsRelation", "fields[0]=stamp_duty", functest.DevHeaders, 400, "ValidationError", "fields"},
		{"FilterOtherField", "filters[createdAt][$gt]=2026", functest.DevHeaders, 400, "ValidationError", "filters"},
		{"FilterOtherOperator", "filters[documentId][$ne]=x", functest.DevHeaders, 400, "ValidationError", "filters"},
		{"FilterOr", "filters[$or][0][documentId][$eq]=x", functest.DevHeaders, 400, "ValidationError", "filters"},
		{"FilterOver100Ids", strings.Repeat("filters[documentId][$in][]=x&", 101), functest.DevHeaders, 400, "ValidationError", "filters[documentId][$in]"},
		{"BadEscape", "page=%zz", functest.DevHeaders, 400, "ValidationError", "query"},
	}
}

// refused sends tc's list and checks its answer.
func (l listing) refused(t *testing.T, tc refusal) {
	r := l.list(tc.headers, tc.query)
	if r.Status != tc.status {
		t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
	}
	e := r.Error(t)
	if e.Error.Name != tc.errName {
		t.Errorf("name = %q, want %q", e.Error.Name, tc.errName)
	}
	if tc.path != "" && !slices.Equal(e.Paths(), []string{tc.path}) {
		t.Errorf("details = %+v, want path %s", e.Error.Details, tc.path)
	}
	if tc.path != "" && !strings.Contains(e.Error.Message, tc.path) && !strings.HasPrefix(e.Error.Message, "Invalid ") {
		t.Errorf("message %q does not name %s", e.Error.Message, tc.path)
	}
}

// inByKey: filters[documentId][$in] reads the ids that carry their seq by
// key, in one BatchGetItem, and looks the others up in the documentId index
// (another caller's id names a slot of this caller's that holds another
// order: it is looked up there, and left out).
func (l listing) inByKey(t *testing.T) {
	page := functest.OK[listBody](t, l.list(functest.DevHeaders, "pageSize=2"))
	var q []string
	for i, o := range page.Data {
		q = append(q, fmt.Sprintf("filters[documentId][$in][%d]=%s", i, o["documentId"]))
	}
	theirs, _, err := l.Env.DB().Orders(l.Env.Table("OrdersTable")).Page(context.Background(), "someone-else", 1, 1)
	if err != nil || len(theirs) != 1 {
		t.Fatalf("someone else's order: %v", err)
	}
	l.Proxy.Take()
	b := functest.OK[listBody](t, l.list(functest.DevHeaders, strings.Join(q, "&")+"&filters[documentId][$in][2]=nope&filters[documentId][$in][3]="+theirs[0].DocumentID))
	if got, want := partyNames(b), "Party 30,Party 29"; got != want {
		t.Errorf("orders = %s, want %s", got, want)
	}
	if got, want := l.Env.Operations(l.Proxy.Take()), "BatchGetItem:OrdersTable=1 Query:OrdersTable/index/by-document-keys=2 Query:OrdersTable=1"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
}

// vanishedCreateIsVoided: a create that reserved a seq and vanished before
// storing its order (a killed instance) leaves a seq that holds nothing.
// Once an order above it is older than store.DeadAfter, the list voids it:
// the page holds what it should and the total is exact, and the next list
// costs what a list costs.
func (l listing) vanishedCreateIsVoided(t *testing.T) {
	if _, err := l.Env.DB().Orders(l.Env.Table("OrdersTable")).Reserve(context.Background(), localdb.DevOwner); err != nil {
		t.Fatal(err)
	}
	late := functest.AddOrdersAt(t, l.Env, localdb.DevOwner, 1, time.Now().Add(-2*store.DeadAfter))
	late[0].StampDuty.FirstPartyName = "Late"
	for i, wantCalls := range []string{"", "Query:OrdersTable=2"} {
		b := functest.OK[listBody](t, l.list(functest.DevHeaders, "pageSize=3"))
		if got, want := partyNames(b), "Party 1,Party 30,Party 29"; got != want {
			t.Errorf("list %d: orders = %s, want %s", i+1, got, want)
		}
		if got, want := b.Pagination["total"], 31; got != want {
			t.Errorf("list %d: total = %d, want %d", i+1, got, want)
		}
		if calls := l.Env.Operations(l.Proxy.Take()); wantCalls != "" && calls != wantCalls {
			t.Errorf("list %d: calls = %s, want %s", i+1, calls, wantCalls)
		}
	}
}

func (l listing) pageNCostsWhatPage1Costs(t *testing.T) {
	l.list(functest.DevHeaders, "page=1&pageSize=5")
	l.Proxy.Take()
	l.list(functest.DevHeaders, "page=1&pageSize=5")
	p1 := l.Env.Operations(l.Proxy.Take())
	l.list(functest.DevHeaders, "page=6&pageSize=5")
	p6 := l.Env.Operations(l.Proxy.Take())
	if want := "Query:OrdersTable=2"; p1 != want || p6 != want {
		t.Errorf("page 1: %s, page 6: %s; want %s each", p1, p6, want)
	}
}

// partyNames are the first party names of a list's orders, in order.
func partyNames(b listBody) string {
	var out []string
	for _, o := range b.Data {
		out = append(out, fmt.Sprint(o["stamp_duty"].(map[string]any)["first_party_name"]))
	}
	return strings.Join(out, ",")
}

// TestListOrdersByDocument lists orders by documentId: only the caller's,
// newest first, paged over those found; the ids that carry their seq in
// one BatchGetItem, the others (orders stored before ids carried it) one
// index Query each.
func TestListOrdersByDocument(t *testing.T) {
	s := functest.New(t, "ListOrdersFunction", wire)
	mine := functest.AddOrders(t, s.Env, localdb.DevOwner, 12)
	theirs := functest.AddOrders(t, s.Env, "someone-else", 2)
	// An order stored before ids carried their seq: its id is random.
	before := functest.AddOrders(t, s.Env, localdb.DevOwner, 1)[0]
	before.DocumentID = "b" + strings.Repeat("x", 23)
	if _, err := s.Env.DB().Orders(s.Env.Table("OrdersTable")).Create(context.Background(), localdb.DevOwner, before); err != nil {
		t.Fatal(err)
	}
	list := func(query string) functest.Response {
		return s.Invoke(functest.Request("GET", "/api/live-orders", query, functest.DevHeaders, ""))
	}
	in := func(docs ...string) string {
		var q []string
		for i, d := range docs {
			q = append(q, fmt.Sprintf("filters[documentId][$in][%d]=%s", i, d))
		}
		return strings.Join(q, "&")
	}
	for _, tc := range []struct {
		name, query, want, block string
	}{
		{"Eq", "filters[documentId][$eq]=" + mine[4].DocumentID, "Party 5", "map[page:1 pageCount:1 pageSize:25 total:1]"},
		{"ImplicitEq", "filters[documentId]=" + mine[4].DocumentID, "Party 5", "map[page:1 pageCount:1 pageSize:25 total:1]"},
		{"InNewestFirst", in(mine[1].DocumentID, mine[9].DocumentID, mine[5].DocumentID), "Party 10,Party 6,Party 2", "map[page:1 pageCount:1 pageSize:25 total:3]"},
		{"NeverAnotherCallers", in(theirs[0].DocumentID, mine[0].DocumentID, theirs[1].DocumentID), "Party 1", "map[page:1 pageCount:1 pageSize:25 total:1]"},
		{"UnknownLeftOut", in("nope", "", mine[2].DocumentID), "Party 3", "map[page:1 pageCount:1 pageSize:25 total:1]"},
		{"Paged", in(mine[0].DocumentID, mine[1].DocumentID, mine[2].DocumentID) + "&pageSize=2&page=2", "Party 1", "map[page:2 pageCount:2 pageSize:2 total:3]"},
		{"Offset", in(mine[0].DocumentID, mine[1].DocumentID, mine[2].DocumentID) + "&pagination[start]=1&pagination[limit]=1", "Party 2", "map[limit:1 start:1 total:3]"},
		{"NoneFound", "filters[documentId][$eq]=nope", "", "map[page:1 pageCount:0 pageSize:25 total:0]"},
		{"StoredBefore", in(mine[3].DocumentID, before.DocumentID), "Party 1,Party 4", "map[page:1 pageCount:1 pageSize:25 total:2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := functest.OK[listBody](t, list(tc.query))
			if got := partyNames(b); got != tc.want {
				t.Errorf("orders = %s, want %s", got, tc.want)
			}
			if got := fmt.Sprint(b.Pagination); got != tc.block {
				t.Errorf("pagination = %s, want %s", got, tc.block)
			}
		})
	}
	t.Run("CostFollowsIdsAsked", func(t *testing.T) {
		list("")
		s.Proxy.Take()
		var docs []string
		for _, o := range mine[:10] {
			docs = append(docs, o.DocumentID)
		}
		b := functest.OK[listBody](t, list(in(docs...)))
		if got, want := len(b.Data), 10; got != want {
			t.Fatalf("%d orders, want %d", got, want)
		}
		// Ten orders in a row: one Query of their range.
		if got, want := s.Env.Operations(s.Proxy.Take()), "Query:OrdersTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		// Spread over more than twice their number: one BatchGetItem.
		if b := functest.OK[listBody](t, list(in(mine[0].DocumentID, mine[5].DocumentID, mine[11].DocumentID))); len(b.Data) != 3 {
			t.Errorf("%d orders of 3 spread out", len(b.Data))
		}
		if got, want := s.Env.Operations(s.Proxy.Take()), "BatchGetItem:OrdersTable=1"; got != want {
			t.Errorf("spread out: calls = %s, want %s", got, want)
		}
		list(in(docs[0]))
		if got, want := s.Env.Operations(s.Proxy.Take()), "BatchGetItem:OrdersTable=1"; got != want {
			t.Errorf("one id: calls = %s, want %s", got, want)
		}
		list(in(docs[0], before.DocumentID))
		// The instance knows the key of before from StoredBefore: no Query.
		if got, want := s.Env.Operations(s.Proxy.Take()), "BatchGetItem:OrdersTable=1 Query:OrdersTable=1"; got != want {
			t.Errorf("an id without its seq: calls = %s, want %s", got, want)
		}
	})
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}
