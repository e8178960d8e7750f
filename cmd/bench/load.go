package main

import (
	"encoding/json"
	"errors"
	"fmt"
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
// times filters[documentId][$in] of 1 id, of inIDs ids in a row and of inIDs
// spread out, inSamples each.
const (
	loadConcurrency  = 32
	loadCallers      = 32
	loadCreates      = 320
	soloCreates      = 20
	mixedRequests    = 2000
	mixedConcurrency = 100
	inIDs            = 100
	inSamples        = 20
	inSpread         = 3
)

// loadFunctions are the functions sections 13 and 14 send requests to.
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
	ids    int
	stride int // one id in stride of the owner's newest orders
	wall   durations
	calls  int
	units  storetest.Capacity
}

// loadResults are sections 13 and 14's.
type loadResults struct {
	solo  loadRun
	runs  []loadRun // loadCallers callers, then one caller
	mixed mixedRun
	in    []inRow
	batch batchRun
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
	names  map[string]string // the tables' names by logical id
}

// callers returns n callers' names, prefix and a two-digit number.
func callers(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return out
}

// startLoadStack starts loadFunctions on warm pools over fresh tables named
// prefix + logical id behind a proxy, and gives each of owners a token.
// close stops it.
func (b *bench) startLoadStack(prefix string, owners []string) (s *loadStack, close func(), err error) {
	names, proxy, err := b.freshProxied(prefix)
	if err != nil {
		return nil, nil, err
	}
	s = &loadStack{b: b, proxy: proxy, direct: store.New(localdb.Client(b.endpoint)).Orders(names["OrdersTable"]),
		pools: map[string]*runtimeapi.Pool{}, base: map[string]events.APIGatewayV2HTTPRequest{}, tokens: map[string]string{},
		orders: names["OrdersTable"], names: names}
	close = func() {
		for _, p := range s.pools {
			p.Close()
		}
		proxy.Close()
	}
	first := firsts(b.reqs)
	for _, id := range loadFunctions {
		f, ok := b.tmpl.Function(id)
		if !ok {
			close()
			return nil, nil, fmt.Errorf("load: template.yaml has no %s", id)
		}
		fn, err := localstack.Function(b.tmpl, f, b.bins[id], localstack.Engines{DynamoDB: proxy.URL, S3: b.s3Endpoint, Tables: names}, b.logs[id])
		if err != nil {
			close()
			return nil, nil, err
		}
		fn.MaxInstances = mixedConcurrency
		s.pools[id] = runtimeapi.NewPool(fn)
		s.base[id] = first[id].ev
	}
	tokens := store.New(localdb.Client(b.endpoint)).Tokens(names["TokensTable"])
	for i, o := range owners {
		secret := fmt.Sprintf("%sLOADxBENCHxCALLER%026d", auth.Prefix, i)
		if err := tokens.Create(b.ctx, auth.Token{Hash: localdb.Hasher().Hash(secret), Owner: o, CreatedAt: time.Now()}); err != nil {
			close()
			return nil, nil, fmt.Errorf("load: token: %w", err)
		}
		s.tokens[o] = secret
	}
	return s, close, nil
}

// measureLoad is sections 13 and 14.
func (b *bench) measureLoad() error {
	many := callers("load-many-", loadCallers)
	owners := append(slices.Clone(many), "load-one", "load-solo", "mixed-a", "mixed-b", batchOwner)
	s, stop, err := b.startLoadStack("load-", owners)
	if err != nil {
		return err
	}
	defer stop()
	if err := s.warmUp(owners); err != nil {
		return err
	}
	if b.load.solo, err = s.batch("one caller, one create at a time (uncontended)", []string{"load-solo"}, soloCreates, 1, true); err != nil {
		return err
	}
	arms := []struct {
		label  string
		owners []string
	}{
		{fmt.Sprintf("%d callers × %d, %d at a time", loadCallers, loadCreates/loadCallers, loadConcurrency), many},
		{fmt.Sprintf("1 caller × %d, %d at a time", loadCreates, loadConcurrency), []string{"load-one"}},
	}
	b.load.runs = make([]loadRun, len(arms))
	// Timed in the order A B B A, so that neither arm gains from going
	// second; each accounted once.
	for k, a := range []int{0, 1, 1, 0} {
		r, err := s.batch(arms[a].label, arms[a].owners, loadCreates, loadConcurrency, k < 2)
		if err != nil {
			return err
		}
		b.load.runs[a] = b.load.runs[a].add(r)
	}
	if b.load.mixed, err = s.mixedLoad(); err != nil {
		return err
	}
	if b.load.in, err = s.inByKey("load-one"); err != nil {
		return err
	}
	b.load.batch, err = s.measureBatches()
	return err
}

// warmUp, not measured, makes every caller's first order (which seeds its
// counter) at loadConcurrency at a time, so that the pools hold that many
// warm instances.
func (s *loadStack) warmUp(owners []string) error {
	say("load: warm-up, %d callers' first orders…\n", len(owners))
	_, err := s.creates(owners, len(owners), loadConcurrency)
	return err
}

// batch creates n orders of owners at conc at a time, timed, then (if
// account) as many again accounted.
func (s *loadStack) batch(label string, owners []string, n, conc int, account bool) (loadRun, error) {
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
	if !account {
		return r, nil
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

// add returns r and o, two batches of the same creates, as one.
func (r loadRun) add(o loadRun) loadRun {
	st := map[int]int{}
	for _, m := range []map[int]int{r.status, o.status} {
		for code, n := range m {
			st[code] += n
		}
	}
	return loadRun{label: o.label, orders: r.orders + o.orders, wall: r.wall + o.wall, status: st, failed: r.failed + o.failed,
		units: r.units.Add(o.units), accOrder: r.accOrder + o.accOrder}
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

// perOrder returns the units, in RCU and WCU, per order of r's accounted
// run, and their price per million orders.
func (r loadRun) perOrder() (rcu, wcu, usd float64) {
	rcu, wcu = r.units.Read/float64(r.accOrder), r.units.Write/float64(r.accOrder)
	return rcu, wcu, rcu*usEast1.ReadUnits + wcu*usEast1.WriteUnits
}

// loadTable is section 13: the creates.
func (b *bench) loadTable() (*table, error) {
	if len(b.load.runs) != 2 {
		return nil, errors.New("sections 13 and 14 have no load runs")
	}
	t := &table{
		Title:  "13. One caller's concurrent creates against many callers' (local stack, create-order function)",
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
	t.note("each arm's %d creates are sent three times: timed twice, in the order A B B A so that neither gains from going second (the proxy only records; the row sums both), and accounted once (units by DynamoDB's rules, from which the cost per order); the functions run on warm pools of their host builds (cmd/internal/runtimeapi), up to %d instances each, against dynalite through a proxy; every caller's first order (which seeds its seq counter: a Query and an UpdateItem more) was made before, in a warm-up", loadCreates, mixedConcurrency)
	t.note("$ per million orders at $%.3f per million RRU and $%.3f per million WRU; the callers have no webhook (a create reads the caller's webhooks item, then reserves its seq and puts the order); the %d callers' creates also read their tokens (cached per instance and caller for 5 s), hence their higher RCU and, with more calls, their lower orders/s", usEast1.ReadUnits, usEast1.WriteUnits, loadCallers)
	return t, nil
}
