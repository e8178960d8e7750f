package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/fake"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// Sections 9 and 10 (this file): who shares which partition key, and what
// a status change writes.
//
// Section 9 runs sharesCallers callers, each with one webhook (every event
// type) to a loopback receiver, creating sharesOrders orders in all, then
// moving each to Created through the operators' workflow, while the
// webhook dispatcher relays and delivers every event: all in process, over
// a fresh copy of the template's tables behind the proxy, which accounts
// each write's units per partition key value of the table and of each
// index entry (DynamoDB's rules). The bar (issue 19): no key value that
// all callers share takes more than 1/8 of its table's or index's write
// units.
const (
	sharesCallers = 20
	sharesOrders  = 2000
	sharesBar     = 1.0 / 8
	// sharesTimeout bounds the run on a busy machine.
	sharesTimeout = 15 * time.Minute
)

// keyShare is the write units of one partition key value in a run, and
// whose items they were written for ("" for an item of no caller: the id
// counter).
type keyShare struct {
	units   float64
	callers map[string]bool
}

// sharesResults are sections 9 and 10's measurements.
type sharesResults struct {
	// Keys holds the units per key value, by "table" or "table index".
	Keys  map[string]map[string]*keyShare
	Order []string // Keys' tables and indexes, in the template's order
	Wall  time.Duration
	Got   int64 // deliveries the receiver got
	// Change is a status change with its event and the relay of that
	// event, and Create an order of a caller with no webhook: write units
	// by "table" or "table index".
	Change, Create map[string]float64
	// Paper holds a paper's change (Pending → Created, with its event)
	// on an order of 1 paper and on paper 7 of an order of 20: its
	// DynamoDB calls and write units by "table" or "table index".
	Paper [2]paperChange
}

// paperChange is one paper's change as section 10 measures it.
type paperChange struct {
	Papers int
	Calls  string
	Units  map[string]float64
}

// callerOf returns the caller whose item a table's partition key value
// item is: the owner, or the part before "#" of a key that begins with
// it; "" for a table of no caller's items.
func callerOf(table, item string) string {
	switch table {
	case "OrdersTable", "WebhooksTable":
		return item
	case "DeliveriesTable", "IdempotencyTable":
		owner, _, _ := strings.Cut(item, "#")
		return owner
	}
	return ""
}

// sharesBench is a run of section 9 over its tables.
type sharesBench struct {
	db     *store.DB // through the proxy
	direct *store.DB // around it, for what is not measured
	proxy  *storetest.Proxy
	table  func(logicalID string) string
	body   *stampduty.OrderBody
	owners []string
}

// fulfiller is the operators' workflow over the proxied tables.
func (s *sharesBench) fulfiller() *orders.Fulfiller {
	return &orders.Fulfiller{Orders: s.db.Orders(s.table("OrdersTable")), Files: fake.Files{},
		Listeners: s.db.Webhooks(s.table("WebhooksTable")), Numbers: s.db.Numbers(s.table("NumbersTable")), Now: time.Now}
}

// dispatcher is the webhook dispatcher over the proxied tables.
func (s *sharesBench) dispatcher() *webhooks.Dispatcher {
	return &webhooks.Dispatcher{Outbox: s.db.Orders(s.table("OrdersTable")), Hooks: s.db.Webhooks(s.table("WebhooksTable")),
		Jobs: s.db.Deliveries(s.table("DeliveriesTable")), Files: fake.Files{}, Deliverer: webhooks.Deliverer{Guard: webhooks.Guard{Local: true}}}
}

// callers runs f for each caller at once and returns the first error.
func (s *sharesBench) callers(f func(i int, owner string) error) error {
	errs := make([]error, len(s.owners))
	var wg sync.WaitGroup
	for i, owner := range s.owners {
		wg.Go(func() { errs[i] = f(i, owner) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// create makes an order of owner with c and returns it, read around the
// proxy.
func (s *sharesBench) create(ctx context.Context, c *orders.Creator, owner string) (stampduty.Order, error) {
	doc, err := c.Create(ctx, owner, s.body, nil)
	if err != nil {
		return stampduty.Order{}, fmt.Errorf("%s: create: %w", owner, err)
	}
	o, err := s.direct.Orders(s.table("OrdersTable")).ByDocument(ctx, doc)
	if err == nil && len(o.Fulfillments) == 0 {
		err = fmt.Errorf("order %s has no fulfillment", doc)
	}
	return o.Order, err
}

// run creates the orders and moves them, while dispatching, until the
// receiver has every event (got counts what it got).
func (s *sharesBench) run(ctx context.Context, got *atomic.Int64) error {
	per := sharesOrders / len(s.owners)
	docs := make([][][2]string, len(s.owners)) // each caller's orders: documentId, fulfillment's
	var made atomic.Int64
	producing := make(chan error, 1)
	go func() {
		err := s.callers(func(i int, owner string) error {
			c := creator(s.db, s.table)
			c.Listeners = s.db.Webhooks(s.table("WebhooksTable"))
			for range per {
				o, err := s.create(ctx, c, owner)
				if err != nil {
					return err
				}
				docs[i] = append(docs[i], [2]string{o.DocumentID, o.Fulfillments[0].DocumentID})
				if n := made.Add(1); n%200 == 0 {
					say("\rshares: %d/%d orders created", n, sharesOrders)
				}
			}
			return nil
		})
		if err == nil {
			err = s.callers(func(i int, owner string) error {
				f := s.fulfiller()
				for k, d := range docs[i] {
					ch := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: fmt.Sprintf("REF-%02d-%04d", i, k)}
					if _, err := f.Advance(ctx, d[0], d[1], ch, "arn:aws:iam::1:user/bench"); err != nil {
						return fmt.Errorf("%s: move %s: %w", owner, d[0], err)
					}
					if n := made.Add(1); n%200 == 0 {
						say("\rshares: %d/%d orders moved to Created", n-sharesOrders, sharesOrders)
					}
				}
				return nil
			})
		}
		producing <- err
	}()
	d := s.dispatcher()
	done := false
	for want := int64(2 * sharesOrders); !done || got.Load() < want; {
		select {
		case err := <-producing:
			if err != nil {
				return err
			}
			done = true
		default:
		}
		rel, err := d.Relay(ctx)
		if err != nil {
			return err
		}
		del, err := d.Deliver(ctx)
		if err != nil {
			return err
		}
		if rel.Relayed+del.Attempts == 0 {
			if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
				return fmt.Errorf("shares: %d of %d events delivered: %w", got.Load(), want, err)
			}
		}
		if done {
			say("\rshares: %d/%d events delivered        ", got.Load(), want)
		}
	}
	say("\n")
	return nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// byTable adds up the write units of calls by "table" or "table index".
func byTable(calls []storetest.ProxyCall, logical func(string) string) map[string]float64 {
	out := map[string]float64{}
	for _, c := range calls {
		for _, k := range c.Keys {
			out[strings.TrimSpace(logical(c.Table)+" "+k.Index)] += k.Units
		}
	}
	return out
}

// changeAndCreate measures section 10: a status change with its event and
// the relay of that event, for a caller whose create's event was relayed
// already; and the create of a caller with no webhook.
func (s *sharesBench) changeAndCreate(ctx context.Context, r *sharesResults, logical func(string) string) error {
	owner := s.owners[0]
	c := creator(s.db, s.table)
	c.Listeners = s.db.Webhooks(s.table("WebhooksTable"))
	o, err := s.create(ctx, c, owner)
	if err != nil {
		return err
	}
	d := s.dispatcher()
	if _, err := d.Relay(ctx); err != nil {
		return err
	}
	calls, err := within(s.proxy, storetest.Account, func() error {
		ch := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-" + strings.ToUpper(o.DocumentID)}
		if _, err := s.fulfiller().Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, ch, "arn:aws:iam::1:user/bench"); err != nil {
			return err
		}
		rep, err := d.Relay(ctx)
		if err == nil && rep.Relayed != 1 {
			err = fmt.Errorf("the change's relay emptied %d outboxes, want 1", rep.Relayed)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("a status change: %w", err)
	}
	r.Change = byTable(calls, logical)
	if err := s.paperChanges(ctx, r, logical); err != nil {
		return err
	}
	// The same instance's second create: the first reserved its ids (an
	// UpdateItem of the counter per store.IDBlock/3 orders).
	if _, err := c.Create(ctx, "bench-shares-no-webhook", s.body, nil); err != nil {
		return err
	}
	calls, err = within(s.proxy, storetest.Account, func() error {
		_, err := c.Create(ctx, "bench-shares-no-webhook", s.body, nil)
		return err
	})
	r.Create = byTable(calls, logical)
	return err
}

// paperChanges measures a paper's change on an order of 1 paper and on
// paper 7 of an order of 20 (papers.md: the same calls, at most 1 WCU
// more), each of a caller listening to every event whose create's event
// was relayed already.
func (s *sharesBench) paperChanges(ctx context.Context, r *sharesResults, logical func(string) string) error {
	owner := s.owners[1]
	c := creator(s.db, s.table)
	c.Listeners = s.db.Webhooks(s.table("WebhooksTable"))
	d := s.dispatcher()
	for i, n := range []int{1, stampduty.MaxQuantity} {
		body, err := orderBody(fmt.Sprintf(`{"amount": 20, "considerationPrice": 0, "purpose": "Affidavit", "state": "Karnataka", "paidBy": "First Party",
			"firstPartyMobileNumber": "9876543210", "firstPartyName": "Bench Papers", "secondPartyName": "Bank", "quantity": %d}`, n))
		if err != nil {
			return err
		}
		doc, err := c.Create(ctx, owner, body, nil)
		if err != nil {
			return err
		}
		o, err := s.fulfiller().OpsGet(ctx, doc)
		if err != nil {
			return err
		}
		if _, err := d.Relay(ctx); err != nil {
			return err
		}
		paper := min(6, n-1)
		calls, err := within(s.proxy, storetest.Account, func() error {
			// A number names one paper (papers.md): each paper its own.
			ch := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-" + strings.ToUpper(o.Fulfillments[paper].DocumentID)}
			_, err := s.fulfiller().Advance(ctx, o.DocumentID, o.Fulfillments[paper].DocumentID, ch, "arn:aws:iam::1:user/bench")
			return err
		})
		if err != nil {
			return fmt.Errorf("paper %d of %d: %w", paper+1, n, err)
		}
		count := map[string]int{}
		for _, c := range storetest.Requests(calls) {
			count[c.Operation+":"+logical(c.Table)]++
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(count)) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, count[k]))
		}
		r.Paper[i] = paperChange{Papers: n, Calls: strings.Join(parts, " "), Units: byTable(calls, logical)}
	}
	return nil
}

// measureShares is sections 9 and 10.
func (b *bench) measureShares() error {
	say("shares: %d callers, %d orders with their events, at the wire…\n", sharesCallers, sharesOrders)
	names, proxy, err := b.freshProxied("shares-")
	if err != nil {
		return err
	}
	defer proxy.Close()
	ctx, cancel := context.WithTimeout(b.ctx, sharesTimeout)
	defer cancel()
	var got atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	direct := store.New(localdb.Client(b.endpoint))
	s := &sharesBench{db: store.New(localdb.Client(proxy.URL)), direct: direct, proxy: proxy, table: func(id string) string { return names[id] }, body: b.body}
	all := []string{stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged, stampduty.EventOrderDocumentUploaded, stampduty.EventOrderCertificateAttached}
	for i := range sharesCallers {
		owner := fmt.Sprintf("bench-shares-%02d", i)
		if err := register(ctx, direct, s.table, owner, rc.URL+"/"+owner, all...); err != nil {
			return err
		}
		s.owners = append(s.owners, owner)
	}
	logical := func(name string) string {
		for id, n := range names {
			if n == name {
				return id
			}
		}
		return name
	}
	r := &b.shares
	t0 := time.Now()
	calls, err := within(proxy, storetest.Account, func() error { return s.run(ctx, &got) })
	if err != nil {
		return fmt.Errorf("shares: %w", err)
	}
	r.Wall, r.Got = time.Since(t0), got.Load()
	r.Keys = map[string]map[string]*keyShare{}
	for _, c := range calls {
		table := logical(c.Table)
		for _, k := range c.Keys {
			name := strings.TrimSpace(table + " " + k.Index)
			if r.Keys[name] == nil {
				r.Keys[name] = map[string]*keyShare{}
			}
			ks := r.Keys[name][k.Key]
			if ks == nil {
				ks = &keyShare{callers: map[string]bool{}}
				r.Keys[name][k.Key] = ks
			}
			ks.units += k.Units
			ks.callers[callerOf(table, k.Item)] = true
		}
	}
	for _, t := range b.tmpl.Tables {
		names := []string{t.LogicalID}
		for _, ix := range slices.Concat(t.GlobalIndexes, t.LocalIndexes) {
			names = append(names, t.LogicalID+" "+ix.Name)
		}
		for _, name := range names {
			if r.Keys[name] != nil {
				r.Order = append(r.Order, name)
			}
		}
	}
	return s.changeAndCreate(ctx, r, logical)
}

// shared reports whether every caller of the run wrote items under the
// key, or it is a key of no caller's items (the id counter).
func (k *keyShare) shared() bool { return k.callers[""] || len(k.callers) >= sharesCallers }

// cut shortens a key value for the table.
func cut(v string) string {
	if len(v) > 40 {
		return v[:37] + "…"
	}
	return v
}

// sharesTable is section 9.
func (b *bench) sharesTable() (*table, error) {
	r := b.shares
	if len(r.Order) == 0 {
		return nil, fmt.Errorf("section 9 measured no write")
	}
	t := &table{
		Title: fmt.Sprintf("9. Write shares per partition key value: %d creates and their events by %d callers (dynalite, measured at the wire)", sharesOrders, sharesCallers),
		Header: []string{"table or index", "largest key value", "all callers share it", "largest key all callers share", "WCU in the run", "key values",
			"largest key's share", "its share", "bar (≤ 1/8)"},
		TextCols: 4,
	}
	for _, name := range r.Order {
		keys := r.Keys[name]
		total := 0.0
		var top, topShared string
		for v, k := range keys {
			total += k.units
			if top == "" || k.units > keys[top].units || k.units == keys[top].units && v < top {
				top = v
			}
			if k.shared() && (topShared == "" || k.units > keys[topShared].units || k.units == keys[topShared].units && v < topShared) {
				topShared = v
			}
		}
		yes, sharedName, sharedShare, bar := "no", "none", "—", "ok"
		if keys[top].shared() {
			yes = "yes"
		}
		if topShared != "" {
			share := keys[topShared].units / total
			sharedName, sharedShare = cut(topShared), fmt.Sprintf("%.1f%%", 100*share)
			if share > sharesBar {
				bar = "FAILS"
			}
		}
		t.add(name, cut(top), yes, sharedName, num(total, 0), fmt.Sprint(len(keys)), fmt.Sprintf("%.1f%%", 100*keys[top].units/total), sharedShare, bar)
	}
	t.note("%d callers (bench-shares-00…%02d), each with one webhook subscribed to every event type, answered 204 by a loopback receiver; each caller creates %d orders (the create-order request's body), the callers at once; then each order is moved to Created through the operators' workflow (orders.Fulfiller.Advance, as PATCH /api/ops/… runs it); meanwhile the webhook dispatcher relays and delivers every event (webhooks.Dispatcher Relay then Deliver, one pass after another): %d deliveries received, %s in all", sharesCallers, sharesCallers-1, sharesOrders/sharesCallers, r.Got, r.Wall.Round(time.Second))
	t.note("every write accounted at the wire by DynamoDB's rules over the template's indexes, per partition key value: the table's item, and each index entry it puts, rewrites or deletes (a move between queue shards bills the old value for the delete and the new one for the put); a failed conditional write bills the table's key")
	t.note("a key all callers share: written for the items of every one of the %d callers, or a key of no caller's items (CountersTable's id counter, in %d items: one UpdateItem per %d orders per instance, on the next item each time). The bar (issue 19): no such key takes more than 1/8 of its table's or index's write units", sharesCallers, store.IDShards, store.IDBlock/store.IDChunk*(store.IDChunk/3))
	return t, nil
}

// changeTable is section 10.
func (b *bench) changeTable() (*table, error) {
	r := b.shares
	if r.Change == nil || r.Create == nil {
		return nil, fmt.Errorf("section 10 was not measured")
	}
	t := &table{
		Title:    "10. A status change with its event, relay included, and a create without webhooks: write units by table and index (DynamoDB's rules)",
		Header:   []string{"write", "table or index", "WCU"},
		TextCols: 2,
	}
	for _, w := range []struct {
		name string
		by   map[string]float64
		bar  string
	}{
		{"a status change with its event, and its relay", r.Change, "8"},
		{"a create, the caller listening to no event", r.Create, "3"},
	} {
		orders := 0.0
		for _, k := range slices.Sorted(maps.Keys(w.by)) {
			t.add(w.name, k, num(w.by[k], 0))
			if strings.HasPrefix(k, "OrdersTable") {
				orders += w.by[k]
			}
		}
		t.add(w.name, "OrdersTable and its indexes, in all (bar ≤ "+w.bar+")", num(orders, 0))
	}
	for _, p := range r.Paper {
		name := fmt.Sprintf("a paper's change, with its event, on an order of %d paper(s) (paper %d)", p.Papers, min(7, p.Papers))
		all := 0.0
		for _, k := range slices.Sorted(maps.Keys(p.Units)) {
			t.add(name, k, num(p.Units[k], 0))
			all += p.Units[k]
		}
		t.add(name, "in all; calls: "+p.Calls, num(all, 0))
	}
	if a, b := r.Paper[0], r.Paper[1]; a.Units != nil && b.Units != nil {
		sum := func(m map[string]float64) float64 {
			n := 0.0
			for _, v := range m {
				n += v
			}
			return n
		}
		t.note("a paper's change on an order of 20 papers: %s against %s for one paper, %s WCU against %s (papers.md: the same calls, at most 1 WCU more)",
			b.Calls, a.Calls, num(sum(b.Units), 0), num(sum(a.Units), 0))
	}
	t.note("the status change: an order of a caller listening to every event, its order.created event relayed already, moved Pending → Created through the operators' workflow (the event in the same PutItem), then the relay's pass that hands the event on (the job's PutItem in DeliveriesTable, and the UpdateItem that empties the order's outbox); the issue's ~17 WCU was the OrdersTable part of the same")
	t.note("OrdersTable's by-document-keys and queue-shards project the keys only: a change writes them only when their keys change (a status change moves the order's queue entry: a delete and a put, 1 WCU each); the outbox index (h19-dispatch's part) projects what the template says")
	return t, nil
}
