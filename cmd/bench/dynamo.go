package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/rules"
	"stampduty/shared/samtemplate"
	"stampduty/shared/store"
	"stampduty/shared/store/localdb"
	"stampduty/shared/store/storetest"
	"stampduty/shared/strapi"
)

// How many requests each row of section 4 measures.
const (
	// timedRequests are warm requests timed with the proxy metering only.
	// One id block's worth of orders: create-order reserves ids once per
	// store.IDBlock/3 orders, so the means count that call at its true rate.
	timedRequests = store.IDBlock / 3
	// accountedRequests are warm requests whose DynamoDB units are computed
	// (the same count, for the same reason).
	accountedRequests = store.IDBlock / 3
	// coldSamples are fresh instances per cold row.
	coldSamples = 3
	// listPageSize is the page size of the list-orders rows.
	listPageSize = 25
	// fillBudget is how long filling the caller's orders through the
	// create-order function may take before the rest is written directly.
	fillBudget = 3 * time.Minute
)

// row is one row of section 4: the DynamoDB calls of a kind of request.
type row struct {
	Name     string
	Function string
	Cold     bool
	// Wall holds the wall times of the timed warm requests.
	Wall durations
	// Requests holds the calls of each accounted request.
	Requests [][]storetest.ProxyCall
}

// perRequest returns the mean calls, dynalite capacity and DynamoDB
// capacity per request, and whether every call was accounted.
func (r row) perRequest() (calls float64, dyn, ddb storetest.Capacity, complete bool) {
	complete = true
	n := float64(len(r.Requests))
	for _, req := range r.Requests {
		calls += float64(len(req))
		for _, c := range req {
			dyn = dyn.Add(c.Consumed)
			ddb = ddb.Add(c.Billed)
			complete = complete && c.Accounted
		}
	}
	if n == 0 {
		return 0, storetest.Capacity{}, storetest.Capacity{}, false
	}
	return calls / n, storetest.Capacity{Read: dyn.Read / n, Write: dyn.Write / n}, storetest.Capacity{Read: ddb.Read / n, Write: ddb.Write / n}, complete
}

// pattern describes the calls per request, e.g. "Query OrdersTable ×2 +
// PutItem OrdersTable ×1 + UpdateItem CountersTable ×0.1".
func (r row) pattern() string {
	if len(r.Requests) == 0 {
		return "—"
	}
	counts := map[string]float64{}
	var order []string
	for _, req := range r.Requests {
		for _, c := range req {
			k := c.Operation + " " + c.Table
			if c.ErrType != "" {
				k += " (" + c.ErrType + ")"
			}
			if _, ok := counts[k]; !ok {
				order = append(order, k)
			}
			counts[k]++
		}
	}
	if len(order) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s ×%s", k, num(counts[k]/float64(len(r.Requests)), 2)))
	}
	return strings.Join(parts, " + ")
}

// dynamoResult is section 4.
type dynamoResult struct {
	Rows []row
	// TypicalOrderBytes and MaxOrderBytes are order item sizes by
	// DynamoDB's formula, measured on the PutItem at the wire.
	TypicalOrderBytes, MaxOrderBytes int
	Orders, LastPage                 int
	Fill                             string
}

// row returns the row of the given name.
func (d *dynamoResult) row(name string) (row, bool) {
	for _, r := range d.Rows {
		if r.Name == name {
			return r, true
		}
	}
	return row{}, false
}

// dynamoRun holds what section 4 runs on.
type dynamoRun struct {
	ctx    context.Context
	tmpl   *samtemplate.Template
	bins   map[string]string
	db     *database
	proxy  *storetest.Proxy
	pools  []*runtimeapi.Pool
	logs   map[string]*tailWriter
	status io.Writer
}

// measureDynamo runs the three functions' real binaries in runtimeapi pools
// against a fresh local DynamoDB behind a storetest.Proxy, and measures the DynamoDB
// calls and units of each row. The dev caller is given exactly orders
// orders before the list-orders rows.
func measureDynamo(ctx context.Context, root string, tmpl *samtemplate.Template, bins map[string]string, orders int, status io.Writer) (res *dynamoResult, err error) {
	db, err := startDatabase(ctx, root, tmpl)
	if err != nil {
		return nil, err
	}
	defer db.stop()
	keys := map[string][]string{}
	for _, t := range tmpl.Tables {
		for _, k := range t.KeySchema {
			keys[t.LogicalID] = append(keys[t.LogicalID], k.Name)
		}
	}
	m, err := storetest.StartProxy(db.Endpoint, keys)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	d := &dynamoRun{ctx: ctx, tmpl: tmpl, bins: bins, db: db, proxy: m, logs: map[string]*tailWriter{}, status: status}
	defer d.closePools()
	res = &dynamoResult{Orders: orders, LastPage: (orders + listPageSize - 1) / listPageSize}

	// create-order: cold, warm, and the typical order's item size.
	const create = "CreateOrderFunction"
	fmt.Fprintln(status, "dynamodb: create-order")
	pool, err := d.pool(create)
	if err != nil {
		return nil, err
	}
	m.SetMode(storetest.Record)
	if _, err := d.invoke(pool, create, createEvent()); err != nil { // the cold one, for a caller without orders
		return nil, err
	}
	warmCreate, err := d.warm("create-order warm", create, pool, createEvent())
	if err != nil {
		return nil, err
	}
	for _, req := range warmCreate.Requests {
		for _, c := range req {
			if c.Operation == "PutItem" && c.PutBytes > 0 {
				res.TypicalOrderBytes = c.PutBytes
			}
		}
	}
	coldCreate := row{Name: "create-order cold", Function: create, Cold: true}
	if err := d.cold(&coldCreate, coldSamples, createEvent()); err != nil {
		return nil, err
	}
	if res.MaxOrderBytes, err = d.maxOrderBytes(); err != nil {
		return nil, err
	}

	// Give the dev caller its orders.
	if res.Fill, err = d.fill(pool, orders); err != nil {
		return nil, err
	}

	// list-orders: cold page 1, warm page 1 and the last page.
	const listOrders = "ListOrdersFunction"
	fmt.Fprintln(status, "dynamodb: list-orders")
	coldList := row{Name: listOrdersRow("cold", 1), Function: listOrders, Cold: true}
	if err := d.cold(&coldList, coldSamples, listOrdersEvent(1, listPageSize)); err != nil {
		return nil, err
	}
	lpool, err := d.pool(listOrders)
	if err != nil {
		return nil, err
	}
	m.SetMode(storetest.Record)
	if _, err := d.invoke(lpool, listOrders, listOrdersEvent(1, listPageSize)); err != nil { // the cold one
		return nil, err
	}
	page1, err := d.warm(listOrdersRow("warm", 1), listOrders, lpool, listOrdersEvent(1, listPageSize))
	if err != nil {
		return nil, err
	}
	pageN, err := d.warm(listOrdersRow("warm", res.LastPage), listOrders, lpool, listOrdersEvent(res.LastPage, listPageSize))
	if err != nil {
		return nil, err
	}

	// list-articles: cold and warm.
	const listArticles = "ListArticlesFunction"
	fmt.Fprintln(status, "dynamodb: list-articles")
	coldArticles := row{Name: "list-articles cold", Function: listArticles, Cold: true}
	if err := d.cold(&coldArticles, coldSamples, listArticlesEvent()); err != nil {
		return nil, err
	}
	apool, err := d.pool(listArticles)
	if err != nil {
		return nil, err
	}
	m.SetMode(storetest.Record)
	if _, err := d.invoke(apool, listArticles, listArticlesEvent()); err != nil {
		return nil, err
	}
	warmArticles, err := d.warm("list-articles warm", listArticles, apool, listArticlesEvent())
	if err != nil {
		return nil, err
	}

	res.Rows = []row{warmCreate, coldCreate, page1, pageN, coldList, warmArticles, coldArticles}
	return res, nil
}

// listOrdersRow names a list-orders row: warm or cold, and the page.
func listOrdersRow(kind string, page int) string {
	return fmt.Sprintf("list-orders %s, page %d (pageSize %d)", kind, page, listPageSize)
}

// pool returns a new pool of the function, closed with the run.
func (d *dynamoRun) pool(logicalID string) (*runtimeapi.Pool, error) {
	log := d.logs[logicalID]
	if log == nil {
		log = &tailWriter{}
		d.logs[logicalID] = log
	}
	fn, err := lambdaFunction(d.tmpl, logicalID, d.bins[logicalID], d.proxy.URL, log)
	if err != nil {
		return nil, err
	}
	p := runtimeapi.NewPool(fn)
	d.pools = append(d.pools, p)
	return p, nil
}

func (d *dynamoRun) closePools() {
	for _, p := range d.pools {
		p.Close()
	}
}

// invoke runs one request, checks that it answered 200 and returns the
// DynamoDB calls the proxy saw for it.
func (d *dynamoRun) invoke(p *runtimeapi.Pool, logicalID string, ev []byte) ([]storetest.ProxyCall, error) {
	if _, err := d.take(); err != nil {
		return nil, err
	}
	out, err := p.Invoke(d.ctx, ev)
	if err == nil {
		err = checkOK(logicalID, out)
	}
	if err != nil {
		return nil, withLog(err, d.logs[logicalID])
	}
	return d.take()
}

// take returns the calls the proxy saw since the last take, and the first
// call it failed to measure.
func (d *dynamoRun) take() ([]storetest.ProxyCall, error) {
	calls := d.proxy.Take()
	return calls, d.proxy.Err()
}

// warm measures a warm row on pool, whose instance is already warm:
// timedRequests requests timed with the proxy metering, then
// accountedRequests with DynamoDB's units computed.
func (d *dynamoRun) warm(name, logicalID string, p *runtimeapi.Pool, ev []byte) (row, error) {
	r := row{Name: name, Function: logicalID}
	d.proxy.SetMode(storetest.Meter)
	for range timedRequests {
		t0 := time.Now()
		if _, err := d.invoke(p, logicalID, ev); err != nil {
			return r, err
		}
		r.Wall = append(r.Wall, time.Since(t0))
	}
	d.proxy.SetMode(storetest.Account)
	for range accountedRequests {
		calls, err := d.invoke(p, logicalID, ev)
		if err != nil {
			return r, err
		}
		r.Requests = append(r.Requests, calls)
	}
	d.proxy.SetMode(storetest.Record)
	if p.Started() != 1 {
		return r, fmt.Errorf("%s: %d instances started, want 1 warm instance", name, p.Started())
	}
	return r, nil
}

// cold adds n cold requests to r: each the first request of a fresh pool,
// closed after it.
func (d *dynamoRun) cold(r *row, n int, ev []byte) error {
	for range n {
		p, err := d.pool(r.Function)
		if err != nil {
			return err
		}
		d.proxy.SetMode(storetest.Account)
		calls, err := d.invoke(p, r.Function, ev)
		d.proxy.SetMode(storetest.Record)
		p.Close()
		if err != nil {
			return err
		}
		r.Requests = append(r.Requests, calls)
	}
	return nil
}

// maxOrderBytes writes a max-length order for another owner through the
// proxy and returns its item size, measured on the PutItem.
func (d *dynamoRun) maxOrderBytes() (int, error) {
	db := store.New(localdb.Client(d.proxy.URL))
	o, err := maxOrder()
	if err != nil {
		return 0, err
	}
	d.proxy.SetMode(storetest.Account)
	defer d.proxy.SetMode(storetest.Record)
	if _, err := db.Orders("OrdersTable").Create(d.ctx, "bench-max-length", o); err != nil {
		return 0, err
	}
	calls, err := d.take()
	if err != nil {
		return 0, err
	}
	for _, c := range calls {
		if c.Operation == "PutItem" {
			return c.PutBytes, nil
		}
	}
	return 0, fmt.Errorf("max-length order: no PutItem seen")
}

// maxOrder is an order with every field at its bound: description 100
// characters, names 40, addresses 120, PANs and mobile, amount and
// consideration price 15 digits, the longest state, purpose and purchasedBy
// 200 characters of 4 bytes each (DynamoDB counts UTF-8 bytes), ids of 10
// digits.
func maxOrder() (rules.Order, error) {
	name := strings.Repeat("N", 40)
	body := fmt.Sprintf(`{"amount": 999999999999999, "considerationPrice": 999999999999999, "description": %q,
		"purpose": %q, "state": "Dadra and Nagar Haveli and Daman and Diu", "paidBy": "Second Party", "purchasedBy": %q,
		"firstPartyMobileNumber": "9876543210", "firstPartyName": %q, "secondPartyName": %q,
		"firstPartyAddress": %q, "secondPartyAddress": %q, "firstPartyPan": "ABCDE1234F", "secondPartyPan": "ABCDE1234G"}`,
		strings.Repeat("D", 100), strings.Repeat("😀", rules.MaxFreeTextLength), strings.Repeat("😀", rules.MaxFreeTextLength),
		name, name, strings.Repeat("A", 120), strings.Repeat("A", 120))
	members, err := strapi.DecodeObject([]byte(body))
	if err != nil {
		return rules.Order{}, err
	}
	req, err := rules.NewOrderBody(members).Validate()
	if err != nil {
		return rules.Order{}, fmt.Errorf("max-length order: %w", err)
	}
	doc, err := rules.NewDocumentID()
	if err != nil {
		return rules.Order{}, err
	}
	art := rules.Article{ID: 9999999999, DocumentID: doc, PurposeName: req.Purpose, State: req.State, Min: 0, Max: 999999999999999}
	return rules.NewOrder(req, art, req.Amount, rules.OrderIDs{Order: 9999999997, Fulfillment: 9999999998, StampDuty: 9999999999}, time.Now())
}

// fill gives the dev caller exactly n orders, creating them through the
// create-order function on pool (one at a time: a caller's orders are
// numbered in sequence); if that would take longer than fillBudget, the
// rest is written directly with store.Orders.Create. It reports how.
func (d *dynamoRun) fill(pool *runtimeapi.Pool, n int) (string, error) {
	orders := d.db.DB.Orders("OrdersTable")
	have, err := orders.Count(d.ctx, localdb.DevOwner)
	if err != nil {
		return "", err
	}
	if have > n {
		return "", fmt.Errorf("-orders %d: the caller already has %d orders from the create-order rows", n, have)
	}
	d.proxy.SetMode(storetest.Record)
	start := time.Now()
	viaFunction := 0
	for have < n {
		if _, err := d.invoke(pool, "CreateOrderFunction", createEvent()); err != nil {
			return "", err
		}
		have++
		viaFunction++
		if viaFunction%500 == 0 {
			fmt.Fprintf(d.status, "\rfill: %d/%d orders", have, n)
		}
		if viaFunction == 200 && time.Since(start)*time.Duration(n-have+200)/200 > fillBudget {
			break
		}
	}
	fmt.Fprintln(d.status)
	how := fmt.Sprintf("%d orders created through the create-order function (%.1f ms each)",
		viaFunction, float64(time.Since(start))/float64(time.Millisecond)/float64(max(viaFunction, 1)))
	if have < n {
		direct, took, err := d.fillDirect(n - have)
		if err != nil {
			return "", err
		}
		how += fmt.Sprintf(", then %d written directly with store.Orders.Create (%.1f ms each)", direct, float64(took)/float64(time.Millisecond)/float64(direct))
	}
	if have, err = orders.Count(d.ctx, localdb.DevOwner); err != nil {
		return "", err
	}
	if have != n {
		return "", fmt.Errorf("fill: the caller has %d orders, want %d", have, n)
	}
	return how + fmt.Sprintf("; %s in all", time.Since(start).Round(100*time.Millisecond)), nil
}

// fillDirect writes n orders for the dev caller with store.Orders.Create,
// one at a time, built from the create-order request with rules.NewOrder.
func (d *dynamoRun) fillDirect(n int) (int, time.Duration, error) {
	start := time.Now()
	db := d.db.DB
	ids := db.IDs("CountersTable", 1000)
	orders := db.Orders("OrdersTable")
	members, err := strapi.DecodeObject([]byte(createBody))
	if err != nil {
		return 0, 0, err
	}
	req, err := rules.NewOrderBody(members).Validate()
	if err != nil {
		return 0, 0, err
	}
	art, err := db.Articles("ArticlesTable").Get(d.ctx, req.Purpose, req.State)
	if err != nil {
		return 0, 0, err
	}
	amount, err := art.Amount(req.Amount, req.ConsiderationPrice)
	if err != nil {
		return 0, 0, err
	}
	for i := range n {
		first, err := ids.Reserve(d.ctx, 3)
		if err != nil {
			return 0, 0, err
		}
		o, err := rules.NewOrder(req, art, amount, rules.OrderIDs{Order: first, Fulfillment: first + 1, StampDuty: first + 2}, time.Now())
		if err != nil {
			return 0, 0, err
		}
		if _, err := orders.Create(d.ctx, localdb.DevOwner, o); err != nil {
			return 0, 0, err
		}
		if (i+1)%500 == 0 {
			fmt.Fprintf(d.status, "\rfill (direct): %d/%d orders", i+1, n)
		}
	}
	fmt.Fprintln(d.status)
	return n, time.Since(start), nil
}

// dynamoTable is section 4.
func dynamoTable(res *dynamoResult) *table {
	t := &table{
		Title: "4. DynamoDB calls and capacity units per request (dynalite, measured at the wire)",
		Header: []string{"request", "DynamoDB calls per request", "calls", "warm wall median ms",
			"RCU dynalite", "WCU dynalite", "RCU DynamoDB rules", "WCU DynamoDB rules"},
		TextCols: 2,
	}
	for _, r := range res.Rows {
		calls, dyn, ddb, complete := r.perRequest()
		wall := "—"
		if !r.Cold {
			wall = ms(r.Wall.median())
		}
		rcu, wcu := num(ddb.Read, 3), num(ddb.Write, 3)
		if !complete {
			rcu, wcu = "?", "?"
		}
		t.add(r.Name, r.pattern(), num(calls, 2), wall, num(dyn.Read, 3), num(dyn.Write, 3), rcu, wcu)
	}
	t.note("the caller has %d orders (%s)", res.Orders, res.Fill)
	t.note("warm rows: %d timed requests (wall time: the invocation through the local Runtime API, its DynamoDB calls through the measuring proxy included), then %d requests whose units are computed; cold rows: %d fresh instances, first request", timedRequests, accountedRequests, coldSamples)
	t.note("units and calls are means per request (create-order reserves %d ids, %d orders' worth, with one UpdateItem)", store.IDBlock, store.IDBlock/3)
	t.note("RCU/WCU dynalite: what dynalite reports with ReturnConsumedCapacity TOTAL (the proxy asks for it)")
	t.note("RCU/WCU DynamoDB rules: computed from item sizes (DynamoDB's formula): reads ceil(bytes read / 4 KB) per call, at least 1, ×0.5 if eventually consistent, whatever the projection; writes ceil(max(old, new item) / 1 KB), at least 1, also when the condition fails")
	t.note("order item size (DynamoDB's formula): typical %d bytes (the create-order request above), max-length %d bytes (every field at its bound, purpose and purchasedBy in 4-byte characters)", res.TypicalOrderBytes, res.MaxOrderBytes)
	return t
}
