package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
)

// How many requests each row of section 4 measures: warm requests timed
// with the proxy metering only, then warm requests whose DynamoDB units are
// computed, each one id block's worth of orders (create-order reserves ids
// once per store.IDBlock/3 orders, so the means count that call at its true
// rate); and fresh instances per cold row.
const (
	timedRequests     = store.IDBlock / 3
	accountedRequests = store.IDBlock / 3
	coldSamples       = 3
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

// startFiles starts the local S3 server with the template's buckets, named
// as the local stack names them.
func (b *bench) startFiles() (*locals3.Server, error) {
	srv, err := locals3.Start(b.ctx, b.root, "", localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region, nil)
	if err != nil {
		return nil, err
	}
	client := locals3.Client(srv.Endpoint, localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region)
	for _, id := range b.tmpl.Buckets {
		if err := locals3.CreateBucket(b.ctx, client, localstack.BucketName(id)); err != nil {
			srv.Stop()
			return nil, err
		}
	}
	return srv, nil
}

// seed gives the dev caller, before section 1, the order the first
// requests of get-order and upload-document name: the order of the
// create-order request, made with the create-order workflow
// (orders.Creator) on the database directly.
func (b *bench) seed() error {
	db := store.New(localdb.Client(b.endpoint))
	body, err := orderBody(firsts(b.reqs)["CreateOrderFunction"].ev.Body)
	if err != nil {
		return err
	}
	// As the function does: the order.created event only when the caller
	// listens (the dev caller has no webhook).
	creator := &orders.Creator{Articles: db.Articles("ArticlesTable"), IDs: db.IDs("CountersTable", store.IDBlock), Orders: db.Orders("OrdersTable"),
		Listeners: db.Webhooks("WebhooksTable")}
	if _, err := creator.Create(b.ctx, localdb.DevOwner, body, nil); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	return b.readRefs()
}

// readRefs sets b.refs to the dev caller's orders, oldest first.
func (b *bench) readRefs() error {
	table := store.New(localdb.Client(b.endpoint)).Orders("OrdersTable")
	const size = 100
	var refs []orderRef
	for p := 1; ; p++ {
		page, total, err := table.Page(b.ctx, localdb.DevOwner, p, size)
		if err != nil {
			return fmt.Errorf("the caller's orders: %w", err)
		}
		for _, o := range page { // newest first
			if len(o.Fulfillments) == 0 {
				return fmt.Errorf("the caller's order %s has no fulfillment", o.DocumentID)
			}
			refs = append(refs, orderRef{Doc: o.DocumentID, Fulfillment: o.Fulfillments[0].DocumentID})
		}
		if p*size >= total {
			if len(refs) != total {
				return fmt.Errorf("the caller's orders: read %d of %d", len(refs), total)
			}
			break
		}
	}
	slices.Reverse(refs)
	b.refs = refs
	return nil
}

// start starts an instance of name's host build, talking to DynamoDB at
// endpoint. A name of no function of the template is the hello-world Lambda.
func (b *bench) start(name, endpoint string) (*runtimeapi.Instance, error) {
	fn := runtimeapi.Function{Name: name, Path: b.bins[name], Log: b.logs[name], MemoryMB: 128, Timeout: 10 * time.Second,
		Env: []string{"AWS_REGION=" + localdb.Region}}
	if f, ok := b.tmpl.Function(name); ok {
		var err error
		if fn, err = localstack.Function(b.tmpl, f, b.bins[name], localstack.Engines{DynamoDB: endpoint, S3: b.s3Endpoint}, b.logs[name]); err != nil {
			return nil, err
		}
		if b.isScheduled(name) {
			fn.Env, fn.Timeout = withTables(fn.Env, b.quiet), onePass
		}
	}
	inst, err := runtimeapi.Start(b.ctx, fn)
	return inst, b.withLog(err, name)
}

// invoke sends ev to inst, an instance of name, and checks that it answered
// 200, or 404 for the catch-all ($default), whose work is to answer it; a
// scheduled function, that it returned no error.
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
	} else if err == nil && resp.StatusCode != want {
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

// coldStarts is section 1: it starts each binary fresh b.starts times,
// round-robin (the first binary of each round rotates), after one
// unrecorded warm-up round, and records each start's init (process start →
// first /invocation/next) and first invocation (its wall time through the
// Runtime API, with the first request of its function).
func (b *bench) coldStarts() error {
	first := firsts(b.reqs)
	for round := -1; round < b.starts; round++ {
		for k := range b.names {
			name := b.names[(k+max(round, 0))%len(b.names)]
			ev := []byte(helloEvent)
			if b.isScheduled(name) {
				var err error
				if ev, err = b.scheduledEvent(name); err != nil {
					return err
				}
			} else if name != helloID {
				var err error
				if ev, err = first[name].event(b.refs, 0); err != nil {
					return err
				}
			}
			init, took, err := b.coldStart(name, b.endpoint, ev)
			if err != nil {
				return err
			}
			if round >= 0 {
				b.init[name], b.first[name] = append(b.init[name], init), append(b.first[name], took)
			}
		}
		if round >= 0 {
			fmt.Fprintf(b.status, "\rcold starts: round %d/%d", round+1, b.starts)
		}
	}
	fmt.Fprintln(b.status)
	return nil
}

// coldTotal returns the median of init + first invocation of name, which
// is what a cold request bills on provided.al2023.
func (b *bench) coldTotal(name string) time.Duration {
	var d durations
	for i, init := range b.init[name] {
		d = append(d, init+b.first[name][i])
	}
	return d.median()
}

// row is one row of section 4: the DynamoDB calls of a kind of request.
type row struct {
	Name string
	Cold bool
	Note string // its request's
	// Wall holds the wall times of the timed warm requests.
	Wall durations
	// Requests holds the calls of each accounted request.
	Requests [][]storetest.ProxyCall
}

// measureDynamo is section 4: it runs the functions' host builds against
// the local DynamoDB behind a storetest.Proxy and measures the DynamoDB
// calls and units of each request's rows, in the order of b.reqs.
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
		if err := b.fill(first); err != nil {
			return err
		}
	}
	fmt.Fprintln(b.status, "dynamodb:", first.Function)
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
			t0, mode := time.Now(), storetest.Meter
			if i >= timedRequests {
				mode = storetest.Account
			}
			calls, err := b.calls(mode, func() error { return b.invoke(inst, r.Function, ev) })
			if err != nil {
				return err
			}
			if mode == storetest.Meter {
				warm.Wall = append(warm.Wall, time.Since(t0))
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
		calls, err := b.calls(storetest.Account, func() error {
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

// calls runs f with the proxy measuring as mode says and returns the
// DynamoDB calls it saw meanwhile; the proxy only records after.
func (b *bench) calls(mode storetest.Mode, f func() error) ([]storetest.ProxyCall, error) {
	b.proxy.SetMode(mode)
	defer b.proxy.SetMode(storetest.Record)
	if err := f(); err != nil {
		return nil, err
	}
	calls := b.proxy.Take()
	return calls, b.proxy.Err()
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

// maxOrderBytes creates, through the proxy, an order for another owner with
// every field at its bound: description 100 characters, names 40, addresses
// 120, PANs and mobile, amount and consideration price 15 digits, the
// longest state, purpose and purchasedBy 200 characters of 4 bytes each
// (DynamoDB counts UTF-8 bytes), ids of 10 digits. It returns the item's
// size, measured on the PutItem.
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
	calls, err := b.calls(storetest.Account, func() error {
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

// fill gives the dev caller exactly b.orders orders before r, the first
// request that reads them: the order of the create-order request, created
// one at a time (a caller's orders are numbered in sequence) with the
// create-order workflow, orders.Creator, on the database directly. Then
// b.refs are all of them.
func (b *bench) fill(r request) error {
	start, n := time.Now(), b.orders
	db := store.New(localdb.Client(b.endpoint))
	table := db.Orders("OrdersTable")
	have, err := table.Count(b.ctx, localdb.DevOwner)
	if err != nil {
		return err
	}
	if have > n {
		return fmt.Errorf("-orders %d: the caller already has %d orders from the rows before %s", n, have, r.Row)
	}
	body, err := orderBody(firsts(b.reqs)["CreateOrderFunction"].ev.Body)
	if err != nil {
		return err
	}
	creator := &orders.Creator{Articles: db.Articles("ArticlesTable"), IDs: db.IDs("CountersTable", store.IDBlock), Orders: table,
		Listeners: db.Webhooks("WebhooksTable")}
	for i := have; i < n; i++ {
		if _, err := creator.Create(b.ctx, localdb.DevOwner, body, nil); err != nil {
			return fmt.Errorf("fill: %w", err)
		}
		if (i+1)%500 == 0 {
			fmt.Fprintf(b.status, "\rfill: %d/%d orders", i+1, n)
		}
	}
	fmt.Fprintln(b.status)
	if got, err := table.Count(b.ctx, localdb.DevOwner); err != nil || got != n {
		return fmt.Errorf("fill: the caller has %d orders, want %d (%v)", got, n, err)
	}
	b.filled = fmt.Sprintf("1 order created with the create-order workflow (orders.Creator) on the database directly, for section 1; %d by the create-order function; then %d with its workflow (%.1f ms each), %s in all",
		have-1, n-have, float64(time.Since(start))/float64(time.Millisecond)/float64(max(n-have, 1)), time.Since(start).Round(100*time.Millisecond))
	return b.readRefs()
}

// goBenchmarks are the warm handler benchmarks and the packages they live in.
var goBenchmarks = []struct{ Name, Pkg, What string }{
	{"BenchmarkCreateOrderRules", "./shared/stampduty", "create-order: decode + validate a full body, amount rule"},
	{"BenchmarkEncodeOrders", "./functions/list-orders", "list-orders: encode a page of 100 orders"},
	{"BenchmarkEncodeArticles", "./functions/list-articles", "list-articles: sort + encode 100 cached articles"},
}

// runGoBenchmarks is section 3: goBenchmarks run by go test in the module root.
func (b *bench) runGoBenchmarks() error {
	fmt.Fprintln(b.status, "go test -bench…")
	var names, pkgs []string
	for _, g := range goBenchmarks {
		names, pkgs = append(names, g.Name), append(pkgs, g.Pkg)
	}
	pattern := strings.Join(names, "|")
	// The flags of the functions' host builds (make build-X with
	// CGO_ENABLED=0, -trimpath): their compiled packages serve here too.
	b.goTest = fmt.Sprintf("CGO_ENABLED=0 go test -trimpath -run '^$' -bench '%s' -benchmem -count 1 %s", pattern, strings.Join(pkgs, " "))
	cmd := exec.CommandContext(b.ctx, "go", append([]string{"test", "-trimpath", "-run", "^$", "-bench", pattern, "-benchmem", "-count", "1"}, pkgs...)...)
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		b.gobench, err = parseGoBench(string(out))
	}
	for _, n := range names {
		if err == nil && b.gobench[n] == nil {
			err = fmt.Errorf("no result of %s", n)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", b.goTest, err, out)
	}
	return nil
}

// benchLine matches a result line: name (with its -GOMAXPROCS suffix),
// iterations, then value-unit pairs.
var benchLine = regexp.MustCompile(`(?m)^(Benchmark[^\s-]+)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// parseGoBench parses the result lines of go test -bench -benchmem output:
// each benchmark's values by unit ("ns/op", "B/op", …, and "iterations").
func parseGoBench(out string) (map[string]map[string]float64, error) {
	res := map[string]map[string]float64{}
	for _, m := range benchLine.FindAllStringSubmatch(out, -1) {
		f := append([]string{m[2], "iterations"}, strings.Fields(m[3])...)
		res[m[1]] = map[string]float64{}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: %w", m[0], err)
			}
			res[m[1]][f[i+1]] = v
		}
	}
	return res, nil
}
