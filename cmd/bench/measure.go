package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
)

// Section 4 times timedRequests warm requests (the proxy only meters), then
// accounts accountedRequests, each one id block's worth of creates
// (create-order reserves ids once per store.IDBlock/3 orders, so the means
// count that call at its true rate); a cold row is coldSamples fresh
// instances.
const (
	timedRequests     = store.IDBlock / 3
	accountedRequests = store.IDBlock / 3
	coldSamples       = 3
)

// creator is the create-order workflow over db's tables, named by table.
func creator(db *store.DB, table func(string) string) *orders.Creator {
	return &orders.Creator{Articles: db.Articles(table("ArticlesTable")), IDs: db.IDs(table("CountersTable"), store.IDBlock),
		Orders: db.Orders(table("OrdersTable"))}
}

// seed gives the dev caller, before section 1, the orders that the first
// requests name: three, so that the cancel's (the middle one) is neither
// the upload's (the oldest) nor the status change's (the newest).
func (b *bench) seed() error {
	_, err := b.fill(3)
	return err
}

// fill gives the dev caller n orders in all, the create-order request's,
// made one at a time (a caller's orders are numbered in sequence) with the
// create-order workflow on the database directly, as the function makes
// them (the event only if the caller listens), and sets b.refs to all of
// them. It returns how many the caller had.
func (b *bench) fill(n int) (int, error) {
	db := store.New(localdb.Client(b.endpoint))
	c, table := creator(db, localdb.LogicalNames), db.Orders("OrdersTable")
	c.Listeners = db.Webhooks("WebhooksTable")
	have, err := table.Count(b.ctx, localdb.DevOwner)
	if err == nil && have > n {
		err = fmt.Errorf("-orders %d: the caller already has %d orders", n, have)
	}
	for i := have; i < n && err == nil; i++ {
		if _, err = c.Create(b.ctx, localdb.DevOwner, b.body, nil); (i+1)%500 == 0 {
			say("\rfill: %d/%d orders", i+1, n)
		}
	}
	if n-have >= 500 {
		say("\n")
	}
	if err != nil {
		return have, fmt.Errorf("fill: %w", err)
	}
	var refs []orderRef
	const size = 100
	for p, total := 1, 1; (p-1)*size < total; p++ {
		var page []stampduty.Order
		if page, total, err = table.Page(b.ctx, localdb.DevOwner, p, size); err != nil {
			return have, fmt.Errorf("the caller's orders: %w", err)
		}
		for _, o := range page { // newest first
			if len(o.Fulfillments) == 0 {
				return have, fmt.Errorf("the caller's order %s has no fulfillment", o.DocumentID)
			}
			refs = append(refs, orderRef{Doc: o.DocumentID, Fulfillment: o.Fulfillments[0].DocumentID})
		}
	}
	if len(refs) != n {
		return have, fmt.Errorf("fill: the caller has %d orders, want %d", len(refs), n)
	}
	slices.Reverse(refs)
	b.refs = refs
	return have, nil
}

// start starts an instance of name's host build, talking to DynamoDB at
// endpoint; a name of no function of the template is the hello-world Lambda.
func (b *bench) start(name, endpoint string) (*runtimeapi.Instance, error) {
	return b.startOn(name, endpoint, nil)
}

// startOn is start with the tables named by tables (nil: the template's
// names, or b.quiet for a scheduled function).
func (b *bench) startOn(name, endpoint string, tables map[string]string) (*runtimeapi.Instance, error) {
	fn := runtimeapi.Function{Name: name, Path: b.bins[name], Log: b.logs[name], MemoryMB: 128, Timeout: 10 * time.Second,
		Env: []string{"AWS_REGION=" + localdb.Region}}
	if f, ok := b.tmpl.Function(name); ok {
		eng := localstack.Engines{DynamoDB: endpoint, S3: b.s3Endpoint, Tables: tables}
		if b.isScheduled(name) {
			eng.Tables, f.Timeout = b.quiet, int(onePass/time.Second)
		}
		var err error
		if fn, err = localstack.Function(b.tmpl, f, b.bins[name], eng, b.logs[name]); err != nil {
			return nil, err
		}
	}
	inst, err := runtimeapi.Start(b.ctx, fn)
	return inst, b.withLog(err, name)
}

// invoke sends ev to inst, an instance of name, and checks that it answered
// 2xx (a cancel's is 204; 302 for a download link, whose work is to send
// the client on; 404 for the catch-all, whose work is to answer it), or
// for a scheduled function that it returned no error.
func (b *bench) invoke(inst *runtimeapi.Instance, name string, ev []byte) error {
	out, err := inst.Invoke(b.ctx, ev)
	if b.isScheduled(name) {
		return b.withLog(err, name)
	}
	want := 200
	if f, ok := b.tmpl.Function(name); ok && len(f.Routes) == 1 && f.Routes[0].Path == samtemplate.DefaultRoute {
		want = 404
	}
	var resp events.APIGatewayV2HTTPResponse
	if err == nil && json.Unmarshal(out, &resp) != nil {
		err = fmt.Errorf("%s: response %.200q is no API Gateway response", name, out)
	} else if err == nil && resp.StatusCode != want && (want != 200 || (resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusFound)) {
		err = fmt.Errorf("%s: status %d: %.300s", name, resp.StatusCode, resp.Body)
	}
	return b.withLog(err, name)
}

// withLog adds to err the last 4 KiB name logged.
func (b *bench) withLog(err error, name string) error {
	if s := strings.TrimSpace(b.logs[name].String()); err != nil && s != "" && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w; function output:\n  %s", err, strings.ReplaceAll(s[max(0, len(s)-4096):], "\n", "\n  "))
	}
	return err
}

// coldStart starts a fresh instance of name, invokes it once with ev and
// closes it.
func (b *bench) coldStart(name, endpoint string, ev []byte) (init, first time.Duration, err error) {
	inst, err := b.start(name, endpoint)
	if err != nil {
		return 0, 0, err
	}
	defer inst.Close()
	t0 := time.Now()
	if err := b.invoke(inst, name, ev); err != nil {
		return 0, 0, err
	}
	return inst.InitDuration(), time.Since(t0), inst.Close()
}

// firstEvent is the first request section 1 sends name.
func (b *bench) firstEvent(name string) ([]byte, error) {
	switch {
	case b.isScheduled(name):
		return b.scheduledEvent(name)
	case name == helloID:
		return []byte(helloEvent), nil
	}
	return firsts(b.reqs)[name].event(b.refs, 0)
}

// coldStarts is section 1: it starts each binary fresh b.starts times,
// round-robin (the first binary of each round rotates), after one
// unrecorded warm-up round, and records each start's init and first
// invocation.
func (b *bench) coldStarts() error {
	for round := -1; round < b.starts; round++ {
		for k := range b.names {
			name := b.names[(k+max(round, 0))%len(b.names)]
			ev, err := b.firstEvent(name)
			if err != nil {
				return err
			}
			init, took, err := b.coldStart(name, b.endpoint, ev)
			if err != nil {
				return err
			}
			if round >= 0 {
				b.init[name], b.first[name] = append(b.init[name], init), append(b.first[name], took)
			}
		}
		say("\rcold starts: round %d/%d", round+1, b.starts)
	}
	say("\n")
	return nil
}

// coldTotal returns the median of init + first invocation of name, what a
// cold request bills on provided.al2023.
func (b *bench) coldTotal(name string) time.Duration {
	var d durations
	for i, init := range b.init[name] {
		d = append(d, init+b.first[name][i])
	}
	return d.median()
}

// row is one row of section 4: the DynamoDB calls of a kind of request.
type row struct {
	Name     string
	Cold     bool
	Note     string                  // its request's
	Wall     durations               // of the timed warm requests
	Requests [][]storetest.ProxyCall // the calls of each accounted request
}

// measureDynamo is section 4: the functions' host builds run against the
// local DynamoDB behind a storetest.Proxy, each function's requests in turn.
func (b *bench) measureDynamo() error {
	var err error
	if b.proxy, err = storetest.StartProxy(b.endpoint, storetest.Schemas(b.tmpl, nil)); err != nil {
		return err
	}
	defer b.proxy.Close()
	if err := b.measureMaxOrder(); err != nil {
		return err
	}
	for reqs := b.reqs; len(reqs) > 0; {
		n := 1
		for n < len(reqs) && reqs[n].Function == reqs[0].Function {
			n++
		}
		if err := b.measure(reqs[:n]); err != nil {
			return err
		}
		reqs = reqs[n:]
	}
	return nil
}

// measure adds the rows of one function's requests to b.rows: a warm row
// for each, on one instance that has answered the first request already,
// then a cold row of the first.
func (b *bench) measure(reqs []request) error {
	first := reqs[0]
	if first.Orders && b.filled == "" {
		start := time.Now()
		have, err := b.fill(b.orders)
		if err != nil {
			return fmt.Errorf("before %s: %w", first.Row, err)
		}
		b.filled = fmt.Sprintf("1 order created with the create-order workflow (orders.Creator) on the database directly, for section 1; %d by the create-order function; then %d with its workflow (%.1f ms each), %s in all",
			have-1, b.orders-have, float64(time.Since(start))/float64(time.Millisecond)/float64(max(b.orders-have, 1)), time.Since(start).Round(100*time.Millisecond))
	}
	say("dynamodb: %s\n", first.Function)
	firstEv, err := first.event(b.refs, 0)
	if err != nil {
		return err
	}
	inst, err := b.start(first.Function, b.proxy.URL)
	if err != nil {
		return err
	}
	defer inst.Close()
	if err := b.invoke(inst, first.Function, firstEv); err != nil { // its cold request, not measured
		return err
	}
	for _, r := range reqs {
		warm := row{Name: r.rowName("warm"), Note: r.Note}
		for i := range timedRequests + accountedRequests {
			ev, err := r.event(b.refs, i)
			if err != nil {
				return err
			}
			mode := storetest.Meter
			if i >= timedRequests {
				mode = storetest.Account
			}
			var took time.Duration
			calls, err := within(b.proxy, mode, func() error {
				t0 := time.Now()
				defer func() { took = time.Since(t0) }()
				return b.invoke(inst, r.Function, ev)
			})
			if err != nil {
				return err
			}
			if mode == storetest.Meter {
				warm.Wall = append(warm.Wall, took)
				continue
			}
			warm.Requests = append(warm.Requests, calls)
			for _, c := range calls { // the other functions' PutItems replace orders a request changed
				if r.Function == "CreateOrderFunction" && c.Operation == "PutItem" && c.PutBytes > 0 {
					b.typicalOrderBytes = c.PutBytes
				}
			}
		}
		b.rows = append(b.rows, warm)
	}
	cold := row{Name: first.rowName("cold"), Cold: true, Note: first.Note}
	for range coldSamples {
		calls, err := within(b.proxy, storetest.Account, func() error {
			_, _, err := b.coldStart(first.Function, b.proxy.URL, firstEv)
			return err
		})
		if err != nil {
			return err
		}
		cold.Requests = append(cold.Requests, calls)
	}
	b.rows = append(b.rows, cold)
	return nil
}

// within runs f with p measuring as mode says and returns the DynamoDB calls
// it saw meanwhile; p only records after.
func within(p *storetest.Proxy, mode storetest.Mode, f func() error) ([]storetest.ProxyCall, error) {
	p.Take()
	p.SetMode(mode)
	defer p.SetMode(storetest.Record)
	if err := f(); err != nil {
		return nil, err
	}
	calls := p.Take()
	return calls, p.Err()
}

// orderBody decodes a create-order request body.
func orderBody(body string) (*stampduty.OrderBody, error) {
	members, err := function.DecodeObject([]byte(body))
	return stampduty.NewOrderBody(stampjson.Fields(members)), err
}

// maxBounds is the article and the ids of the max-length order: any amount
// up to 15 digits, ids of 10 digits.
type maxBounds struct{}

func (maxBounds) Get(_ context.Context, purpose, state string) (stampduty.Article, error) {
	return stampduty.Article{ID: 9999999999, DocumentID: strings.Repeat("D", stampduty.DocumentIDLength), PurposeName: purpose, State: state, Max: 999999999999999}, nil
}

func (maxBounds) Reserve(context.Context, int64) (int64, error) { return 9999999997, nil }

// measureMaxOrder creates, through the proxy, an order of another owner with
// every field at its bound (purpose and purchasedBy in 4-byte characters:
// DynamoDB counts UTF-8 bytes, ids of 10 digits) and measures its item's
// size on the PutItem.
func (b *bench) measureMaxOrder() error {
	name, addr, text := strings.Repeat("N", 40), strings.Repeat("A", 120), strings.Repeat("😀", stampduty.MaxFreeTextLength)
	body, err := orderBody(fmt.Sprintf(`{"amount": 999999999999999, "considerationPrice": 999999999999999, "description": %q,
		"purpose": %q, "state": "Dadra and Nagar Haveli and Daman and Diu", "paidBy": "Second Party", "purchasedBy": %q,
		"firstPartyMobileNumber": "9876543210", "firstPartyName": %q, "secondPartyName": %q,
		"firstPartyAddress": %q, "secondPartyAddress": %q, "firstPartyPan": "ABCDE1234F", "secondPartyPan": "ABCDE1234G"}`,
		strings.Repeat("D", 100), text, text, name, name, addr, addr))
	if err != nil {
		return err
	}
	proxied := store.New(localdb.Client(b.proxy.URL))
	creator := &orders.Creator{Articles: maxBounds{}, IDs: maxBounds{}, Orders: proxied.Orders("OrdersTable"), Listeners: proxied.Webhooks("WebhooksTable")}
	calls, err := within(b.proxy, storetest.Account, func() error {
		_, err := creator.Create(b.ctx, "bench-max-length", body, nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("max-length order: %w", err)
	}
	for _, c := range calls {
		if c.Operation == "PutItem" {
			b.maxOrderBytes = c.PutBytes
			return nil
		}
	}
	return errors.New("max-length order: no PutItem measured")
}
