package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/auth"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// Sections 11 and 12: it creates loadCreates orders at loadConcurrency requests at a
// time, once from loadCallers callers (loadCreates/loadCallers each) and
// once from one caller, through the create-order function; then sends
// mixedRequests mixed requests at mixedConcurrency across two callers; and
// times filters[documentId][$in] of 1 and of inIDs ids, inSamples each.
const (
	loadConcurrency  = 32
	loadCallers      = 32
	loadCreates      = 320
	soloCreates      = 20
	mixedRequests    = 2000
	mixedConcurrency = 100
	inIDs            = 100
	inSamples        = 20
)

// loadFunctions are the functions sections 11 and 12 send requests to.
var loadFunctions = []string{"CreateOrderFunction", "ListOrdersFunction", "GetOrderFunction"}

// loadRun is one batch of creates: timed (the proxy records), then the same
// again accounted (units by DynamoDB's rules).
type loadRun struct {
	label    string
	orders   int
	wall     time.Duration
	status   map[int]int
	failed   int                // ConditionalCheckFailed answers at the wire, timed run
	units    storetest.Capacity // billed, accounted run
	accOrder int                // orders of the accounted run
}

// mixedRun is the mixed load's outcome.
type mixedRun struct {
	wall                   time.Duration
	byKind                 map[string]int
	fiveXX, other          int
	acked, stored          int
	lost, doubled, unacked int
	totals                 string // the lists' totals against the acknowledged orders
	exact                  bool
}

// inRow is filters[documentId][$in] of ids ids.
type inRow struct {
	ids   int
	wall  durations
	calls int
	units storetest.Capacity
}

// loadResults are sections 11 and 12's.
type loadResults struct {
	solo  loadRun
	runs  []loadRun // loadCallers callers, then one caller
	mixed mixedRun
	in    []inRow
}

// loadStack is the three functions on warm pools over fresh tables behind
// a proxy, and the callers' tokens.
type loadStack struct {
	b      *bench
	proxy  *storetest.Proxy
	direct *store.Orders
	pools  map[string]*runtimeapi.Pool
	base   map[string]events.APIGatewayV2HTTPRequest
	tokens map[string]string // secret by owner
	orders string            // the orders table's name
}

// measureLoad is sections 11 and 12.
func (b *bench) measureLoad() error {
	names, proxy, err := b.freshProxied("load-")
	if err != nil {
		return err
	}
	defer proxy.Close()
	s := &loadStack{b: b, proxy: proxy, direct: store.New(localdb.Client(b.endpoint)).Orders(names["OrdersTable"]),
		pools: map[string]*runtimeapi.Pool{}, base: map[string]events.APIGatewayV2HTTPRequest{}, tokens: map[string]string{},
		orders: names["OrdersTable"]}
	first := firsts(b.reqs)
	for _, id := range loadFunctions {
		f, ok := b.tmpl.Function(id)
		if !ok {
			return fmt.Errorf("load: template.yaml has no %s", id)
		}
		fn, err := localstack.Function(b.tmpl, f, b.bins[id], localstack.Engines{DynamoDB: proxy.URL, S3: b.s3Endpoint, Tables: names}, b.logs[id])
		if err != nil {
			return err
		}
		fn.MaxInstances = mixedConcurrency
		s.pools[id] = runtimeapi.NewPool(fn)
		defer s.pools[id].Close()
		s.base[id] = first[id].ev
	}
	many := make([]string, loadCallers)
	for i := range many {
		many[i] = fmt.Sprintf("load-many-%02d", i)
	}
	owners := append(slices.Clone(many), "load-one", "load-solo", "mixed-a", "mixed-b")
	tokens := store.New(localdb.Client(b.endpoint)).Tokens(names["TokensTable"])
	for i, o := range owners {
		secret := fmt.Sprintf("%sLOADxBENCHxCALLER%026d", auth.Prefix, i)
		if err := tokens.Create(b.ctx, auth.Token{Hash: localdb.Hasher().Hash(secret), Owner: o, CreatedAt: time.Now()}); err != nil {
			return fmt.Errorf("load: token: %w", err)
		}
		s.tokens[o] = secret
	}
	// Warm-up, not measured: every caller's first order (which seeds its
	// counter) at loadConcurrency at a time, so the pools hold that many
	// warm instances.
	say("load: warm-up, %d callers' first orders…\n", len(owners))
	if _, err := s.creates(owners, len(owners), loadConcurrency); err != nil {
		return err
	}
	if b.load.solo, err = s.batch("one caller, one create at a time (uncontended)", []string{"load-solo"}, soloCreates, 1); err != nil {
		return err
	}
	b.load.runs = nil
	for _, arm := range []struct {
		label  string
		owners []string
	}{
		{fmt.Sprintf("%d callers × %d, %d at a time", loadCallers, loadCreates/loadCallers, loadConcurrency), many},
		{fmt.Sprintf("1 caller × %d, %d at a time", loadCreates, loadConcurrency), []string{"load-one"}},
	} {
		r, err := s.batch(arm.label, arm.owners, loadCreates, loadConcurrency)
		if err != nil {
			return err
		}
		b.load.runs = append(b.load.runs, r)
	}
	if b.load.mixed, err = s.mixedLoad(); err != nil {
		return err
	}
	b.load.in, err = s.inByKey("load-one")
	return err
}

// batch creates n orders of owners at conc at a time, timed, then as many
// again accounted.
func (s *loadStack) batch(label string, owners []string, n, conc int) (loadRun, error) {
	say("load: %s…\n", label)
	r := loadRun{label: label, orders: n}
	s.proxy.Take()
	t0 := time.Now()
	st, err := s.creates(owners, n, conc)
	if err != nil {
		return r, err
	}
	r.wall, r.status = time.Since(t0), st
	for _, c := range s.proxy.Take() {
		if c.ErrType == "ConditionalCheckFailedException" {
			r.failed++
		}
	}
	calls, err := within(s.proxy, storetest.Account, func() error {
		_, err := s.creates(owners, n, conc)
		return err
	})
	if err != nil {
		return r, err
	}
	for _, c := range calls {
		r.units = r.units.Add(c.Billed)
	}
	r.accOrder = n
	return r, nil
}

// creates sends n create-order requests, owners in turn, conc at a time,
// and returns how many answered each status.
func (s *loadStack) creates(owners []string, n, conc int) (map[int]int, error) {
	status := map[int]int{}
	var mu sync.Mutex
	err := s.parallel(n, conc, func(i int) error {
		code, _, err := s.send("CreateOrderFunction", owners[i%len(owners)], "", nil)
		mu.Lock()
		status[code]++
		mu.Unlock()
		return err
	})
	return status, err
}

// parallel runs f(0..n-1), conc at a time, and returns the first error.
func (s *loadStack) parallel(n, conc int, f func(i int) error) error {
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range conc {
		wg.Go(func() {
			for i := range jobs {
				if err := f(i); err != nil {
					mu.Lock()
					first = firstErr(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		if s.b.ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return errors.Join(first, s.b.ctx.Err())
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// send invokes fn with owner's token, the query and path parameters given,
// and returns the answer's status and body; an error only when the
// function could not answer at all.
func (s *loadStack) send(fn, owner, query string, params map[string]string) (int, string, error) {
	ev := s.base[fn]
	ev.Headers = map[string]string{}
	for k, v := range s.base[fn].Headers {
		ev.Headers[k] = v
	}
	ev.Headers["authorization"] = "Bearer " + s.tokens[owner]
	if query != "" || fn == "ListOrdersFunction" {
		ev.RawQueryString, ev.QueryStringParameters = query, nil
	}
	if params != nil {
		path := "/api/live-orders/" + params["documentId"]
		ev.RawPath, ev.RequestContext.HTTP.Path, ev.PathParameters = path, path, params
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return 0, "", err
	}
	out, err := s.pools[fn].Invoke(s.b.ctx, payload)
	if err != nil {
		return 0, "", s.b.withLog(err, fn)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return 0, "", fmt.Errorf("%s: response %.200q is no API Gateway response", fn, out)
	}
	return resp.StatusCode, resp.Body, nil
}

// mixedLoad sends mixedRequests requests across two callers, mixedConcurrency
// at a time: half creates, a quarter list pages, the rest one order by
// documentId and $in of up to 10 ids; then compares what was acknowledged
// with what is stored and listed.
func (s *loadStack) mixedLoad() (mixedRun, error) {
	say("load: %d mixed requests, %d at a time…\n", mixedRequests, mixedConcurrency)
	callers := []string{"mixed-a", "mixed-b"}
	m := mixedRun{byKind: map[string]int{}}
	var mu sync.Mutex
	acked := map[string][]string{}
	pick := func(owner string, n int) []string {
		mu.Lock()
		defer mu.Unlock()
		docs := acked[owner]
		var out []string
		for range min(n, len(docs)) {
			out = append(out, docs[rand.N(len(docs))])
		}
		return out
	}
	t0 := time.Now()
	err := s.parallel(mixedRequests, mixedConcurrency, func(i int) error {
		owner := callers[i%2]
		var kind string
		var code int
		var body string
		var err error
		switch k := i % 20; {
		case k < 10:
			kind = "create"
			code, body, err = s.send("CreateOrderFunction", owner, "", nil)
			var ok struct{ OrderID string }
			if err == nil && code == 200 && json.Unmarshal([]byte(body), &ok) == nil {
				mu.Lock()
				acked[owner] = append(acked[owner], ok.OrderID)
				mu.Unlock()
			}
		case k < 15:
			kind = "list"
			code, _, err = s.send("ListOrdersFunction", owner, fmt.Sprintf("page=%d&pageSize=25", 1+rand.N(3)), nil)
		case k < 18:
			kind = "get"
			if docs := pick(owner, 1); len(docs) == 1 {
				code, _, err = s.send("GetOrderFunction", owner, "", map[string]string{"documentId": docs[0]})
			} else {
				code, _, err = s.send("ListOrdersFunction", owner, "", nil)
			}
		default:
			kind = "$in"
			q := ""
			for j, d := range pick(owner, 10) {
				q += fmt.Sprintf("&filters[documentId][$in][%d]=%s", j, d)
			}
			code, _, err = s.send("ListOrdersFunction", owner, "pageSize=25"+q, nil)
		}
		mu.Lock()
		defer mu.Unlock()
		m.byKind[kind]++
		switch {
		case code >= 500:
			m.fiveXX++
		case code != 200:
			m.other++
		}
		if (i+1)%200 == 0 {
			say("\rload: %d/%d mixed requests", i+1, mixedRequests)
		}
		return err
	})
	say("\n")
	m.wall = time.Since(t0)
	if err != nil {
		return m, err
	}
	m.exact = true
	for _, owner := range callers {
		want := map[string]bool{}
		for _, d := range acked[owner] {
			want[d] = true
		}
		m.acked += len(acked[owner])
		page, total, err := s.direct.Page(s.b.ctx, owner, 1, 10*mixedRequests)
		if err != nil {
			return m, err
		}
		seen := map[string]int{}
		for _, o := range page {
			seen[o.DocumentID]++
			if seen[o.DocumentID] == 2 {
				m.doubled++
			}
			if !want[o.DocumentID] {
				m.unacked++
			}
		}
		for d := range want {
			if seen[d] == 0 {
				m.lost++
			}
		}
		m.stored += len(page)
		// The caller's first order came from the warm-up.
		code, body, err := s.send("ListOrdersFunction", owner, "pageSize=1", nil)
		var listed struct{ Pagination struct{ Total int } }
		if err != nil || code != 200 || json.Unmarshal([]byte(body), &listed) != nil {
			return m, fmt.Errorf("load: the final list of %s: %d %v", owner, code, err)
		}
		m.totals += fmt.Sprintf("%s: %d listed (total %d), %d acknowledged + 1; ", owner, listed.Pagination.Total, total, len(want))
		m.exact = m.exact && listed.Pagination.Total == len(want)+1 && total == len(want)+1
	}
	m.unacked -= len(callers) // the warm-up's first orders
	return m, nil
}

// inByKey times filters[documentId][$in] of 1 and of inIDs of owner's ids
// through the list-orders function, and accounts one of each.
func (s *loadStack) inByKey(owner string) ([]inRow, error) {
	say("load: filters[documentId][$in]…\n")
	page, _, err := s.direct.Page(s.b.ctx, owner, 1, inIDs)
	if err != nil {
		return nil, err
	}
	if len(page) < inIDs {
		return nil, fmt.Errorf("load: %s has %d orders, want %d", owner, len(page), inIDs)
	}
	var rows []inRow
	for _, n := range []int{1, inIDs} {
		q := "pageSize=100"
		for j, o := range page[:n] {
			q += fmt.Sprintf("&filters[documentId][$in][%d]=%s", j, o.DocumentID)
		}
		r := inRow{ids: n}
		var took time.Duration
		check := func() error {
			t0 := time.Now()
			code, body, err := s.send("ListOrdersFunction", owner, q, nil)
			took = time.Since(t0)
			var got struct{ Data []json.RawMessage }
			if err == nil && (code != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Data) != n) {
				err = fmt.Errorf("load: $in of %d ids: status %d, %d orders", n, code, len(got.Data))
			}
			return err
		}
		for range inSamples + 1 { // the first one warms the instance
			if err := check(); err != nil {
				return nil, err
			}
			r.wall = append(r.wall, took)
		}
		r.wall = r.wall[1:]
		calls, err := within(s.proxy, storetest.Account, check)
		if err != nil {
			return nil, err
		}
		for _, c := range calls {
			if c.Table == s.orders { // not the token's GetItem (cached per instance for 5 s)
				r.calls++
				r.units = r.units.Add(c.Billed)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// perOrder returns the units, in RCU and WCU, per order of r's accounted
// run, and their price per million orders.
func (r loadRun) perOrder() (rcu, wcu, usd float64) {
	rcu, wcu = r.units.Read/float64(r.accOrder), r.units.Write/float64(r.accOrder)
	return rcu, wcu, rcu*usEast1.ReadUnits + wcu*usEast1.WriteUnits
}

// loadTable is section 11: the creates.
func (b *bench) loadTable() (*table, error) {
	if len(b.load.runs) != 2 {
		return nil, errors.New("sections 11 and 12 have no load runs")
	}
	t := &table{
		Title:  "11. One caller's concurrent creates against many callers' (local stack, create-order function)",
		Header: []string{"creates", "orders", "orders/s", "503", "other non-200", "failed conditional writes per order", "RCU per order", "WCU per order", "$ per million orders (DynamoDB)", "× uncontended"},
	}
	_, _, soloUSD := b.load.solo.perOrder()
	for _, r := range append([]loadRun{b.load.solo}, b.load.runs...) {
		rcu, wcu, usd := r.perOrder()
		other := 0
		for code, n := range r.status {
			if code != 200 && code != 503 {
				other += n
			}
		}
		t.add(r.label, fmt.Sprint(r.orders), num(float64(r.orders)/r.wall.Seconds(), 1), fmt.Sprint(r.status[503]), fmt.Sprint(other),
			num(float64(r.failed)/float64(r.orders), 2), num(rcu, 2), num(wcu, 2), dollars(usd), ratio(usd, soloUSD))
	}
	many, one := b.load.runs[0], b.load.runs[1]
	t.note("one caller's orders/s ÷ %d callers': %s (bar: at least 0.8); failed conditional writes counted at the wire (the proxy sees each ConditionalCheckFailedException) in the timed runs", loadCallers,
		ratio(float64(one.orders)/one.wall.Seconds(), float64(many.orders)/many.wall.Seconds()))
	t.note("each batch is sent twice: timed (the proxy only records), then accounted (units by DynamoDB's rules, from which the cost per order); the functions run on warm pools of their host builds (cmd/internal/runtimeapi), up to %d instances each, against dynalite through a proxy; every caller's first order (which seeds its seq counter: a Query and an UpdateItem more) was made before, in a warm-up", mixedConcurrency)
	t.note("$ per million orders at $%.3f per million RRU and $%.3f per million WRU; the callers have no webhook (a create reads the caller's webhooks item, then reserves its seq and puts the order)", usEast1.ReadUnits, usEast1.WriteUnits)
	return t, nil
}

// mixedTable is section 12: the mixed load and $in.
func (b *bench) mixedTable() (*table, error) {
	m := b.load.mixed
	if len(b.load.in) != 2 {
		return nil, errors.New("sections 11 and 12 have no $in rows")
	}
	t := &table{
		Title:  "12. Mixed load, and filters[documentId][$in] by key (local stack)",
		Header: []string{"what", "requests", "5xx", "median ms", "DynamoDB calls", "RCU", "result"},
	}
	verdict := "exact"
	if !m.exact || m.lost+m.doubled+m.unacked > 0 {
		verdict = "NOT exact"
	}
	t.add(fmt.Sprintf("%d mixed requests, %d at a time, 2 callers", mixedRequests, mixedConcurrency), fmt.Sprint(mixedRequests), fmt.Sprint(m.fiveXX), "—", "—", "—",
		fmt.Sprintf("%d acknowledged, %d stored, %d lost, %d doubled, %d stored unacknowledged; totals %s", m.acked, m.stored, m.lost, m.doubled, m.unacked, verdict))
	for _, r := range b.load.in {
		t.add(fmt.Sprintf("list-orders, filters[documentId][$in] of %d ids", r.ids), fmt.Sprint(len(r.wall)), "0", ms(r.wall.median()), fmt.Sprint(r.calls), num(r.units.Read, 1), "")
	}
	t.note("mixed: %s creates, %s list pages (1–3 of 25), %s one order by documentId, %s $in of up to 10 acknowledged ids, in %s; %d other non-200; %s",
		fmt.Sprint(m.byKind["create"]), fmt.Sprint(m.byKind["list"]), fmt.Sprint(m.byKind["get"]), fmt.Sprint(m.byKind["$in"]), m.wall.Round(100*time.Millisecond), m.other, m.totals)
	t.note("$in: %d ids ÷ 1 id median latency %s (bar: at most 5); calls and units of one accounted request, without the token's cached GetItem", inIDs, ratio(float64(b.load.in[1].wall.median()), float64(b.load.in[0].wall.median())))
	return t, nil
}
