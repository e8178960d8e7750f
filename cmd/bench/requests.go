package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/samtemplate"
)

// listPageSize is the page size of the list-orders rows.
const listPageSize = 25

// request is a kind of request the report measures: its rows in section 4
// (warm; and cold for the first request of its function) and in section 5.
// The first request of each function is also its first invocation in
// section 1. A new function of template.yaml needs one (TestEveryFunctionIsMeasured).
type request struct {
	Function string // logical id in template.yaml
	Event    string // events/<Event>.json, the request sent
	Query    string // the query string sent instead of the event's, if any
	Row      string // the name of its section 4 rows, with %s for warm or cold
	Endpoint string // the name of its section 5 row
	Orders   bool   // measured once the dev caller has exactly -orders orders

	ev      events.APIGatewayV2HTTPRequest // the event sent, as load reads it
	payload []byte                         // the same, encoded
}

// requests are the requests of the report, grouped by function; the last
// page of the caller's orders is lastPage.
func requests(lastPage int) []request {
	page := func(n int) string { return fmt.Sprintf("page %d (pageSize %d)", n, listPageSize) }
	query := func(n int) string { return fmt.Sprintf("page=%d&pageSize=%d", n, listPageSize) }
	return []request{
		{Function: "CreateOrderFunction", Event: "create-order", Row: "create-order %s", Endpoint: "POST /api/live-orders (create-order)"},
		{Function: "ListOrdersFunction", Event: "list-orders", Query: query(1), Row: "list-orders %s, " + page(1),
			Endpoint: "GET /api/live-orders " + page(1), Orders: true},
		{Function: "ListOrdersFunction", Event: "list-orders", Query: query(lastPage), Row: "list-orders %s, " + page(lastPage),
			Endpoint: "GET /api/live-orders " + page(lastPage), Orders: true},
		{Function: "ListArticlesFunction", Event: "list-articles", Row: "list-articles %s", Endpoint: "GET /api/stamp-duty-datas (list-articles)"},
	}
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

// load reads each request's event from root/events; every function of tmpl
// must have a request.
func load(root string, tmpl *samtemplate.Template, reqs []request) error {
	first := firsts(reqs)
	for _, f := range tmpl.Functions {
		if _, ok := first[f.LogicalID]; !ok {
			return fmt.Errorf("template.yaml has a function %s the bench has no request for", f.LogicalID)
		}
	}
	for i := range reqs {
		r := &reqs[i]
		data, err := os.ReadFile(filepath.Join(root, "events", r.Event+".json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &r.ev); err != nil {
			return fmt.Errorf("events/%s.json: %w", r.Event, err)
		}
		if r.Query != "" { // the functions read the raw query string
			r.ev.RawQueryString, r.ev.QueryStringParameters = r.Query, nil
		}
		if r.payload, err = json.Marshal(r.ev); err != nil {
			return err
		}
	}
	return nil
}
