package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
)

// listPageSize is the page size of the list-orders rows.
const listPageSize = 25

// request is a kind of request the report measures: its warm rows in
// section 4 (and a cold row for the first request of its function, which is
// also that function's first invocation in section 1) and its row in
// section 5. A function of template.yaml that requests() does not name is
// sent its default request (defaultRequests, generated from template.yaml
// and events/ by cmd/internal/generate).
type request struct {
	Function string // its function's logical id (load fills it in from its event's route)
	// Event names events/<Event>.json, the request sent; without one, the
	// request is Route's, with the dev caller's token.
	Event string
	// Route is the route key sent instead of the event's, if any (the
	// event's headers, body and authorizer are kept, its query is Query's).
	Route    string
	Query    string // the query string sent instead of the event's, if any
	Row      string // the name of its section 4 rows, with %s for warm or cold
	Endpoint string // the name of its section 5 row
	Orders   bool   // measured once the dev caller has exactly -orders orders
	// Order, if set, returns the path parameters of the request sent i-th
	// (from 0; a first request, in sections 1 and 4, is the 0th) given the
	// caller's orders, oldest first; the parameter "?", if any, is the query
	// string sent instead, and a parameter "body.<member>" sets that member
	// of the JSON body.
	Order func(refs []orderRef, i int) (map[string]string, error)
	Note  string // said of its section 4 rows

	ev      events.APIGatewayV2HTTPRequest // the event sent, as load reads it
	payload []byte                         // the same, encoded
}

// orderRef names one of the dev caller's orders: its documentId and its
// (first) fulfillment's.
type orderRef struct{ Doc, Fulfillment string }

// anyOrder is the Order of requests that may name an order again: the i-th
// names the caller's orders in turn, oldest first.
func anyOrder(refs []orderRef, i int) (map[string]string, error) {
	if len(refs) == 0 {
		return nil, errors.New("the caller has no orders")
	}
	return map[string]string{"documentId": refs[i%len(refs)].Doc}, nil
}

// documentOrder is the Order of the uploads: anyOrder's, skipping the
// second-oldest order, which the cancel's first request (section 1, when
// the caller has three orders) cancels; an upload to it would be refused.
func documentOrder(refs []orderRef, i int) (map[string]string, error) {
	if len(refs) < 3 {
		return nil, fmt.Errorf("the caller has %d orders, want at least 3", len(refs))
	}
	k := i % (len(refs) - 1)
	if k >= 1 {
		k++
	}
	return map[string]string{"documentId": refs[k].Doc}, nil
}

// newOrder is the Order of requests that change what they name, so that
// the same request again would change nothing: the i-th names the i-th
// newest of the caller's orders and its fulfillment, each only once.
func newOrder(refs []orderRef, i int) (map[string]string, error) {
	if i >= len(refs) {
		return nil, fmt.Errorf("request %d needs an order no earlier request changed; the caller has %d orders", i+1, len(refs))
	}
	o := refs[len(refs)-1-i]
	return map[string]string{"documentId": o.Doc, "fulfillmentDocumentId": o.Fulfillment}, nil
}

// numberedOrder is newOrder's, with a unique_doc_ref of the paper's own
// in the body: a number names one paper in the whole service (papers.md),
// so each move gives its paper a number no other paper has.
func numberedOrder(refs []orderRef, i int) (map[string]string, error) {
	params, err := newOrder(refs, i)
	if err != nil {
		return nil, err
	}
	params[bodyParam+"unique_doc_ref"] = "SUBIN-BENCH-" + strings.ToUpper(params["fulfillmentDocumentId"])
	return params, nil
}

// bodyParam starts the name of an Order's parameter that sets a member of
// the request's JSON body rather than of its path.
const bodyParam = "body."

// middleOrder is the Order of requests that end what they name (a
// cancel): the i-th names the order at the middle of the caller's, then the
// next ones (then the oldest), each only once — away from the oldest, which
// the uploads name, and from the newest, which the status changes move,
// as long as the requests are fewer than half the orders.
func middleOrder(refs []orderRef, i int) (map[string]string, error) {
	if i >= len(refs) {
		return nil, fmt.Errorf("request %d needs an order no earlier request cancelled; the caller has %d orders", i+1, len(refs))
	}
	return map[string]string{"documentId": refs[(len(refs)/2+i)%len(refs)].Doc}, nil
}

// filteredOrders is how many documentIds the filtered order list names.
const filteredOrders = 10

// byDocument is the Order of the filtered order list: the i-th names
// filteredOrders of the caller's orders, from the i-th oldest on.
func byDocument(refs []orderRef, i int) (map[string]string, error) {
	if len(refs) == 0 {
		return nil, errors.New("the caller has no orders")
	}
	var q []string
	for k := range filteredOrders {
		q = append(q, fmt.Sprintf("filters%%5BdocumentId%%5D%%5B%%24in%%5D%%5B%d%%5D=%s", k, refs[(i+k)%len(refs)].Doc))
	}
	return map[string]string{"?": strings.Join(q, "&")}, nil
}

// requests are the requests of the report, grouped by function; the last
// page of the caller's orders is lastPage.
func requests(lastPage int) []request {
	page := func(n int) string { return fmt.Sprintf("page %d (pageSize %d)", n, listPageSize) }
	query := func(n int) string { return fmt.Sprintf("page=%d&pageSize=%d", n, listPageSize) }
	queue := fmt.Sprintf("status Pending, pageSize %d", listPageSize)
	return []request{
		{Event: "create-order", Row: "create-order %s", Endpoint: "POST /api/live-orders (create-order)"},
		{Event: "list-orders", Query: query(1), Row: "list-orders %s, " + page(1),
			Endpoint: "GET /api/live-orders " + page(1), Orders: true},
		{Event: "list-orders", Query: query(lastPage), Row: "list-orders %s, " + page(lastPage),
			Endpoint: "GET /api/live-orders " + page(lastPage), Orders: true},
		{Event: "list-orders", Row: fmt.Sprintf("list-orders %%s, filters[documentId][$in] of %d ids", filteredOrders),
			Endpoint: fmt.Sprintf("GET /api/live-orders?filters[documentId][$in]=… (%d ids)", filteredOrders), Orders: true, Order: byDocument,
			Note: "one BatchGetItem of the ids' keys (an id carries its order's seq), whatever the caller's order count; an id without one (an order stored before ids carried it) costs a Query of the by-document index"},
		{Event: "list-articles", Row: "list-articles %s", Endpoint: "GET /api/stamp-duty-datas (list-articles)"},
		{Event: "stamp-duty-quotes", Row: "stamp-duty-quotes %s", Endpoint: "GET /api/stamp-duty-quotes (stamp-duty-quotes)"},
		{Event: "not-found", Row: "not-found %s", Endpoint: "$default (not-found, GET /api/nothing)"},
		{Event: "get-order", Row: "get-order %s", Endpoint: "GET /api/live-orders/{documentId} (get-order)",
			Orders: true, Order: anyOrder},
		{Event: "upload-document", Row: "upload-document %s, 47-byte PDF",
			Endpoint: "PUT /api/live-orders/{documentId}/document (upload-document, 47-byte PDF)", Orders: true, Order: documentOrder,
			Note: "the file is also stored in S3 (a PutObject, and a DeleteObject of the document it replaces if the order had one), " +
				"which the proxy does not see: these rows are DynamoDB calls only, and section 5 counts no S3 requests or storage; " +
				"each warm request uploads to another of the caller's orders, oldest first (but the second-oldest, which the cancel's first request cancels), the cold ones to the oldest"},
		{Event: "ops-queue", Query: fmt.Sprintf("status=Pending&pagination%%5BpageSize%%5D=%d", listPageSize),
			Row: "ops queue %s, " + queue, Endpoint: "GET /api/ops/live-orders " + queue + " (ops)", Orders: true},
		{Event: "ops-queue", Route: "GET /api/ops/live-orders/{documentId}", Row: "ops get-order %s",
			Endpoint: "GET /api/ops/live-orders/{documentId} (ops)", Orders: true, Order: anyOrder},
		{Event: "ops-advance", Row: "ops status change %s, Pending → Created", Orders: true, Order: numberedOrder,
			Endpoint: "PATCH /api/ops/live-orders/{documentId}/fulfillments/{fulfillmentDocumentId} (ops, Pending → Created)",
			Note:     "each request moves the fulfillment of another of the caller's orders, newest first, from Pending to Created with a unique_doc_ref (the same move again would change nothing)"},
		{Event: "cancel-order", Row: "cancel-order %s", Endpoint: "DELETE /api/live-orders/{documentId} (cancel-order)", Orders: true, Order: middleOrder,
			Note: "each request cancels another of the caller's orders, from the middle of its list on (a second cancel of one would write nothing)"},
		{Event: "webhooks-list", Row: "webhooks list %s", Endpoint: "GET /api/webhooks (webhooks)"},
	}
}

// setBody sets the body members params names (bodyParam) in ev's JSON
// body and removes them from params.
func setBody(ev *events.APIGatewayV2HTTPRequest, params map[string]string) error {
	var body map[string]any
	for k, v := range params {
		member, ok := strings.CutPrefix(k, bodyParam)
		if !ok {
			continue
		}
		if body == nil {
			if err := json.Unmarshal([]byte(ev.Body), &body); err != nil {
				return fmt.Errorf("the body of %s: %w", ev.RouteKey, err)
			}
		}
		body[member] = v
		delete(params, k)
	}
	if body == nil {
		return nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ev.Body = string(b)
	return nil
}

// rowName is the name of r's section 4 row of kind "warm" or "cold".
func (r request) rowName(kind string) string { return fmt.Sprintf(r.Row, kind) }

// helloEvent is the request of the hello-world Lambda, which answers any.
const helloEvent = `{"version": "2.0", "routeKey": "GET /", "rawPath": "/", "requestContext": {"http": {"method": "GET", "path": "/"}}}`

// firsts returns the first request of each function.
func firsts(reqs []request) map[string]request {
	m := map[string]request{}
	for _, r := range reqs {
		if _, ok := m[r.Function]; !ok {
			m[r.Function] = r
		}
	}
	return m
}

// load completes reqs into the bench's requests: each request is given
// the event it sends and its function, the one whose route that is, and
// each function of tmpl with routes that reqs does not measure its default
// request. Every function of tmpl must have a request, or be a scheduled
// function that scheduledLabels or coldOnly names.
func load(root string, tmpl *samtemplate.Template, reqs []request) ([]request, error) {
	owner := map[string]string{} // functions by route key
	for _, f := range tmpl.Functions {
		for _, rt := range f.Routes {
			owner[rt.Key()] = f.LogicalID
		}
	}
	reqs = slices.Clone(reqs)
	for i := range reqs {
		r := &reqs[i]
		if err := r.read(root); err != nil {
			return nil, err
		}
		if r.Function == "" {
			if r.Function = owner[r.ev.RouteKey]; r.Function == "" {
				return nil, fmt.Errorf("events/%s.json is %s, no route of template.yaml", r.Event, r.ev.RouteKey)
			}
		}
	}
	first := firsts(reqs)
	for _, d := range defaultRequests {
		if _, ok := first[d.Function]; !ok {
			if err := d.read(root); err != nil {
				return nil, err
			}
			reqs, first[d.Function] = append(reqs, d), d
		}
	}
	for _, f := range tmpl.Functions {
		_, measured := first[f.LogicalID]
		if _, ok := scheduledLabels[f.LogicalID]; !measured && !((ok || coldOnly[f.LogicalID]) && len(f.Routes) == 0 && len(f.Schedules) > 0) {
			return nil, fmt.Errorf("template.yaml has a function %s the bench has no request (or, scheduled, no measurement) for (go generate ./... after changing template.yaml)", f.LogicalID)
		}
	}
	return reqs, nil
}

// read sets r.ev and r.payload: the event of events/ it names, or its
// route's, with its route and query.
func (r *request) read(root string) error {
	if r.Event == "" {
		r.ev = routeEvent(r.Route)
	} else if data, err := os.ReadFile(filepath.Join(root, "events", r.Event+".json")); err != nil {
		return err
	} else if err := json.Unmarshal(data, &r.ev); err != nil {
		return fmt.Errorf("events/%s.json: %w", r.Event, err)
	}
	if r.Route != "" {
		method, path, _ := strings.Cut(r.Route, " ")
		r.ev.RouteKey, r.ev.RequestContext.RouteKey, r.ev.RequestContext.HTTP.Method = r.Route, r.Route, method
		r.ev.RawPath, r.ev.RequestContext.HTTP.Path, r.ev.PathParameters = path, path, nil
		r.ev.RawQueryString, r.ev.QueryStringParameters = "", nil
	}
	if r.Query != "" { // the functions read the raw query string
		r.ev.RawQueryString, r.ev.QueryStringParameters = r.Query, nil
	}
	var err error
	r.payload, err = json.Marshal(r.ev)
	return err
}

// routeEvent is the request of a route without an event in events/: no
// body, the dev caller's token (load sets the route).
func routeEvent(route string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0",
		Headers: map[string]string{"host": "api.example.com", "user-agent": "stampduty-bench", "authorization": "Bearer " + localdb.DevToken},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "api.example.com", RequestID: "bench", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"},
		},
	}
}

// event returns the request sent i-th (from 0) when the dev caller's orders
// are refs, oldest first.
func (r request) event(refs []orderRef, i int) ([]byte, error) {
	if r.Order == nil {
		return r.payload, nil
	}
	params, err := r.Order(refs, i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.rowName("warm"), err)
	}
	ev := r.ev
	if q, ok := params["?"]; ok {
		ev.RawQueryString, ev.QueryStringParameters = q, nil
		delete(params, "?")
	}
	if err := setBody(&ev, params); err != nil {
		return nil, fmt.Errorf("%s: %w", r.rowName("warm"), err)
	}
	_, path, _ := strings.Cut(ev.RouteKey, " ")
	for k, v := range params {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	if strings.ContainsAny(path, "{}") {
		return nil, fmt.Errorf("%s: parameters %v leave the path %s unfilled", r.rowName("warm"), params, path)
	}
	if len(params) == 0 {
		params = nil
	}
	ev.RawPath, ev.RequestContext.HTTP.Path, ev.PathParameters = path, path, params
	return json.Marshal(ev)
}
