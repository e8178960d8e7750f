package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/orders"
	"stampduty/shared/rules"
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
)

// startDatabase starts dynalite with the template's tables, named by their
// logical ids and seeded as the local stack seeds them: the sample
// catalogue and the dev token.
func (b *bench) startDatabase() (*localdb.Server, error) {
	srv, err := localdb.Start(b.ctx, b.root, "", nil)
	if err != nil {
		return nil, err
	}
	client := localdb.Client(srv.Endpoint)
	err = localdb.CreateTables(b.ctx, client, b.tmpl.Tables, nil)
	if err == nil {
		_, err = localdb.Seed(b.ctx, store.New(client), localdb.LogicalNames, filepath.Join(b.root, localdb.SampleCatalogue), true)
	}
	if err != nil {
		srv.Stop()
		return nil, err
	}
	return srv, nil
}

// row is one row of section 4: the DynamoDB calls of a kind of request.
type row struct {
	Name string
	Cold bool
	// Wall holds the wall times of the timed warm requests.
	Wall durations
	// Requests holds the calls of each accounted request.
	Requests [][]storetest.ProxyCall
}

// perRequest returns the mean calls, dynalite capacity and DynamoDB
// capacity per request, and whether every call was accounted.
func (r row) perRequest() (calls float64, dyn, ddb storetest.Capacity, complete bool) {
	n := float64(len(r.Requests))
	if n == 0 {
		return 0, dyn, ddb, false
	}
	complete = true
	for _, req := range r.Requests {
		calls += float64(len(req))
		for _, c := range req {
			dyn, ddb = dyn.Add(c.Consumed), ddb.Add(c.Billed)
			complete = complete && c.Accounted
		}
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
	var parts []string
	for _, req := range r.Requests {
		for _, c := range req {
			k := c.Operation + " " + c.Table
			if c.ErrType != "" {
				k += " (" + c.ErrType + ")"
			}
			if counts[k]++; counts[k] == 1 {
				parts = append(parts, k)
			}
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	for i, k := range parts {
		parts[i] = fmt.Sprintf("%s ×%s", k, num(counts[k]/float64(len(r.Requests)), 2))
	}
	return strings.Join(parts, " + ")
}

// dynamoResult is section 4.
type dynamoResult struct {
	Rows []row
	// TypicalOrderBytes and MaxOrderBytes are order item sizes by
	// DynamoDB's formula, measured on the PutItem at the wire.
	TypicalOrderBytes, MaxOrderBytes int
	// Orders is how many orders the caller has for the list-orders rows;
	// Fill says how they were made.
	Orders int
	Fill   string
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

// dynamoRun is section 4 under way: the functions talk to a local DynamoDB
// through proxy; db is the same database, not through the proxy.
type dynamoRun struct {
	*bench
	proxy *storetest.Proxy
	db    *store.DB
}

// measureDynamo is section 4: it runs the functions' host builds in
// runtimeapi pools against a fresh local DynamoDB behind a storetest.Proxy,
// and measures the DynamoDB calls and units of each request's rows, in the
// order of b.reqs. The dev caller is given exactly orders orders before the
// requests that read them.
func (b *bench) measureDynamo(orders int) (*dynamoResult, error) {
	srv, err := b.startDatabase()
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	keys := map[string][]string{}
	for _, t := range b.tmpl.Tables {
		for _, k := range t.KeySchema {
			keys[t.LogicalID] = append(keys[t.LogicalID], k.Name)
		}
	}
	proxy, err := storetest.StartProxy(srv.Endpoint, keys)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	d := &dynamoRun{bench: b, proxy: proxy, db: store.New(localdb.Client(srv.Endpoint))}
	res := &dynamoResult{Orders: orders}
	if res.MaxOrderBytes, err = d.maxOrderBytes(); err != nil {
		return nil, err
	}
	for reqs := b.reqs; len(reqs) > 0; {
		n := 1
		for n < len(reqs) && reqs[n].Function == reqs[0].Function {
			n++
		}
		if err := d.measure(res, reqs[:n]); err != nil {
			return nil, err
		}
		reqs = reqs[n:]
	}
	return res, nil
}

// measure adds the rows of one function's requests to res: a warm row for
// each, on one instance that has answered the first request already, then
// a cold row of the first request.
func (d *dynamoRun) measure(res *dynamoResult, reqs []request) error {
	first := reqs[0]
	if first.Orders && res.Fill == "" {
		var err error
		if res.Fill, err = d.fill(res.Orders, first); err != nil {
			return err
		}
	}
	fmt.Fprintln(d.status, "dynamodb:", first.Function)
	fn, err := d.function(first.Function, d.proxy.URL)
	if err != nil {
		return err
	}
	pool := runtimeapi.NewPool(fn)
	defer pool.Close()
	if err := d.invoke(pool, first); err != nil { // its cold request, not measured
		return err
	}
	for _, r := range reqs {
		warm, err := d.warm(pool, r)
		if err != nil {
			return err
		}
		res.Rows = append(res.Rows, warm)
		for _, req := range warm.Requests {
			for _, c := range req {
				if c.Operation == "PutItem" && c.PutBytes > 0 {
					res.TypicalOrderBytes = c.PutBytes
				}
			}
		}
	}
	cold := row{Name: first.rowName("cold"), Cold: true}
	for range coldSamples {
		calls, err := d.calls(storetest.Account, func() error {
			_, _, err := coldStart(d.ctx, fn, first.payload)
			return d.withLog(err, first.Function)
		})
		if err != nil {
			return err
		}
		cold.Requests = append(cold.Requests, calls)
	}
	res.Rows = append(res.Rows, cold)
	return nil
}

// calls runs f with the proxy measuring as mode says and returns the
// DynamoDB calls it saw meanwhile; the proxy only records after.
func (d *dynamoRun) calls(mode storetest.Mode, f func() error) ([]storetest.ProxyCall, error) {
	d.proxy.SetMode(mode)
	defer d.proxy.SetMode(storetest.Record)
	if err := f(); err != nil {
		return nil, err
	}
	calls := d.proxy.Take()
	return calls, d.proxy.Err()
}

// invoke sends r to the pool and checks that it answered 200.
func (d *dynamoRun) invoke(p *runtimeapi.Pool, r request) error {
	out, err := p.Invoke(d.ctx, r.payload)
	if err == nil {
		err = checkOK(r.Function, out)
	}
	return d.withLog(err, r.Function)
}

// warm measures the warm row of r on pool, whose instance is already warm:
// timedRequests requests timed with the proxy metering, then
// accountedRequests with DynamoDB's units computed.
func (d *dynamoRun) warm(p *runtimeapi.Pool, r request) (row, error) {
	w := row{Name: r.rowName("warm")}
	invoke := func() error { return d.invoke(p, r) }
	for range timedRequests {
		t0 := time.Now()
		if _, err := d.calls(storetest.Meter, invoke); err != nil {
			return w, err
		}
		w.Wall = append(w.Wall, time.Since(t0))
	}
	for range accountedRequests {
		calls, err := d.calls(storetest.Account, invoke)
		if err != nil {
			return w, err
		}
		w.Requests = append(w.Requests, calls)
	}
	if p.Started() != 1 {
		return w, fmt.Errorf("%s: %d instances started, want 1 warm instance", w.Name, p.Started())
	}
	return w, nil
}

// orderBody decodes a create-order request body.
func orderBody(body string) (*rules.OrderBody, error) {
	members, err := strapi.DecodeObject([]byte(body))
	if err != nil {
		return nil, err
	}
	return rules.NewOrderBody(members), nil
}

// maxOrderBytes writes, through the proxy, an order for another owner with
// every field at its bound: description 100 characters, names 40, addresses
// 120, PANs and mobile, amount and consideration price 15 digits, the
// longest state, purpose and purchasedBy 200 characters of 4 bytes each
// (DynamoDB counts UTF-8 bytes), ids of 10 digits. It returns the item's
// size, measured on the PutItem.
func (d *dynamoRun) maxOrderBytes() (int, error) {
	name, addr, text := strings.Repeat("N", 40), strings.Repeat("A", 120), strings.Repeat("😀", rules.MaxFreeTextLength)
	body, err := orderBody(fmt.Sprintf(`{"amount": 999999999999999, "considerationPrice": 999999999999999, "description": %q,
		"purpose": %q, "state": "Dadra and Nagar Haveli and Daman and Diu", "paidBy": "Second Party", "purchasedBy": %q,
		"firstPartyMobileNumber": "9876543210", "firstPartyName": %q, "secondPartyName": %q,
		"firstPartyAddress": %q, "secondPartyAddress": %q, "firstPartyPan": "ABCDE1234F", "secondPartyPan": "ABCDE1234G"}`,
		strings.Repeat("D", 100), text, text, name, name, addr, addr))
	if err != nil {
		return 0, err
	}
	req, err := body.Validate()
	if err != nil {
		return 0, fmt.Errorf("max-length order: %w", err)
	}
	doc, err := rules.NewDocumentID()
	if err != nil {
		return 0, err
	}
	art := rules.Article{ID: 9999999999, DocumentID: doc, PurposeName: req.Purpose, State: req.State, Min: 0, Max: 999999999999999}
	o, err := rules.NewOrder(req, art, req.Amount, rules.OrderIDs{Order: 9999999997, Fulfillment: 9999999998, StampDuty: 9999999999}, time.Now())
	if err != nil {
		return 0, err
	}
	calls, err := d.calls(storetest.Account, func() error {
		_, err := store.New(localdb.Client(d.proxy.URL)).Orders("OrdersTable").Create(d.ctx, "bench-max-length", o)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("max-length order: %w", err)
	}
	for _, c := range calls {
		if c.Operation == "PutItem" {
			return c.PutBytes, nil
		}
	}
	return 0, fmt.Errorf("max-length order: no PutItem seen")
}

// fill gives the dev caller exactly n orders, as r (the first request that
// reads them) needs: the orders of the create-order request, created one at
// a time (a caller's orders are numbered in sequence) with the create-order
// workflow, orders.Creator, on the database directly. It reports how.
func (d *dynamoRun) fill(n int, r request) (string, error) {
	start := time.Now()
	table := d.db.Orders("OrdersTable")
	have, err := table.Count(d.ctx, localdb.DevOwner)
	if err != nil {
		return "", err
	}
	if have > n {
		return "", fmt.Errorf("-orders %d: the caller already has %d orders from the rows before %s", n, have, r.Row)
	}
	creator := &orders.Creator{Articles: d.db.Articles("ArticlesTable"), IDs: d.db.IDs("CountersTable", store.IDBlock), Orders: table}
	body, err := orderBody(firsts(d.reqs)["CreateOrderFunction"].body)
	for i := have; i < n && err == nil; i++ {
		if _, err = creator.Create(d.ctx, localdb.DevOwner, body, nil); (i+1)%500 == 0 {
			fmt.Fprintf(d.status, "\rfill: %d/%d orders", i+1, n)
		}
	}
	fmt.Fprintln(d.status)
	if err != nil {
		return "", fmt.Errorf("fill: %w", err)
	}
	if got, err := table.Count(d.ctx, localdb.DevOwner); err != nil || got != n {
		return "", fmt.Errorf("fill: the caller has %d orders, want %d (%v)", got, n, err)
	}
	return fmt.Sprintf("%d orders created by the create-order function, then %d with its workflow (orders.Creator) on the database directly (%.1f ms each); %s in all",
		have, n-have, float64(time.Since(start))/float64(time.Millisecond)/float64(max(n-have, 1)), time.Since(start).Round(100*time.Millisecond)), nil
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
		wall, rcu, wcu := ms(r.Wall.median()), num(ddb.Read, 3), num(ddb.Write, 3)
		if r.Cold {
			wall = "—"
		}
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
