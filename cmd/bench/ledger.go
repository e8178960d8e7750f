package main

import (
	"context"
	"fmt"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// Section 16: what the ledger adds to the order path (accounts.md, Cost
// and scale): a create with its hold against one without (the workflow's
// Payments nil), and a paper's move to Procured with its charge against one
// without, each the median of ledgerTries warm requests of the workflow on
// the database directly, every call accounted at the wire by DynamoDB's
// rules. One caller's 32 parallel creates against 32 callers' is section
// 13 (the create-order function holds every order).
const ledgerTries = 5

// ledgerArm is one kind of request's figures: the calls and units of each
// accounted try.
type ledgerArm struct {
	label      string
	calls      int
	rcu, wcu   float64
	operations string
}

// measureLedger is section 16.
func (b *bench) measureLedger() error {
	names, proxy, err := b.freshProxied("ledger-")
	if err != nil {
		return err
	}
	defer proxy.Close()
	db := store.New(localdb.Client(proxy.URL))
	ledger := &accounts.Ledger{Store: db.Ledger(names["LedgerTable"]), Now: time.Now}
	ords := db.Orders(names["OrdersTable"])
	creator := func(pay orders.Payments) *orders.Creator {
		return &orders.Creator{Articles: store.NewArticleCache(db.Articles(names["ArticlesTable"]), time.Minute),
			IDs: db.IDs(names["CountersTable"], store.IDBlock), Orders: ords, Payments: pay, Now: time.Now}
	}
	fulfiller := func(pay orders.Payments) *orders.Fulfiller {
		return &orders.Fulfiller{Orders: ords, Files: noFiles{}, IDs: db.IDs(names["CountersTable"], store.IDBlock),
			Numbers: db.Numbers(names["NumbersTable"]), Payments: pay, Now: time.Now}
	}
	body := func() *stampduty.OrderBody {
		field := func(name string, kind stampduty.Kind, text string) stampduty.Field {
			return stampduty.Field{Name: name, Value: stampduty.Value{Kind: kind, Text: text}}
		}
		return stampduty.NewOrderBody([]stampduty.Field{
			field("amount", stampduty.Number, "200"), field("considerationPrice", stampduty.Number, "0"), field("purpose", stampduty.String, "Rent Agreement"),
			field("state", stampduty.String, "Karnataka"), field("paidBy", stampduty.String, "First Party"),
			field("firstPartyMobileNumber", stampduty.String, "9876543210"), field("firstPartyName", stampduty.String, "Asha Rao"),
			field("secondPartyName", stampduty.String, "Vikram Shah")})
	}
	const owner = "bench-ledger"
	for _, arm := range []struct {
		label string
		pay   orders.Payments
	}{{"create, no hold (Payments nil)", nil}, {"create with its hold", ledger}} {
		c := creator(arm.pay)
		if _, err := c.Create(b.ctx, owner, body(), nil); err != nil { // warm: article cached, ids reserved
			return fmt.Errorf("ledger: %s: %w", arm.label, err)
		}
		a, err := accountTries(proxy, arm.label, func() error { _, err := c.Create(b.ctx, owner, body(), nil); return err })
		if err != nil {
			return err
		}
		b.ledger = append(b.ledger, a)
	}
	for _, arm := range []struct {
		label string
		pay   orders.Payments
	}{{"move to Procured, no charge (Payments nil)", nil}, {"move to Procured with its charge", ledger}} {
		f, c := fulfiller(arm.pay), creator(ledger)
		a := ledgerArm{label: arm.label}
		for range ledgerTries {
			doc, err := c.Create(b.ctx, owner, body(), nil)
			if err != nil {
				return fmt.Errorf("ledger: %s: %w", arm.label, err)
			}
			o, err := ords.ByDocument(b.ctx, doc)
			if err != nil {
				return err
			}
			ff := o.Order.Fulfillments[0].DocumentID
			n := time.Now().UnixNano() % 1e14
			ref := fmt.Sprintf("BENCH-LEDGER%014d", n)
			if _, err := f.Advance(b.ctx, doc, ff, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: ref}, "op-bench"); err != nil {
				return fmt.Errorf("ledger: %s: %w", arm.label, err)
			}
			cn := fmt.Sprintf("IN-KA%014dL", n)
			one, err := accountTries(proxy, arm.label, func() error {
				_, err := f.Advance(b.ctx, doc, ff, stampduty.Change{Status: stampduty.StatusProcured, CertificateNumber: cn}, "op-bench")
				return err
			}, 1)
			if err != nil {
				return err
			}
			a.calls, a.rcu, a.wcu, a.operations = a.calls+one.calls, a.rcu+one.rcu, a.wcu+one.wcu, one.operations
		}
		a.calls /= ledgerTries
		a.rcu /= ledgerTries
		a.wcu /= ledgerTries
		b.ledger = append(b.ledger, a)
	}
	say("ledger: %d kinds of request measured\n", len(b.ledger))
	return nil
}

// noFiles is the files of orders that have none: the moves measured sign
// no address (S3 is not what this section measures).
type noFiles struct{}

func (noFiles) Put(context.Context, string, string, []byte, [32]byte) error { return nil }
func (noFiles) Purge(context.Context, string) error                         { return nil }
func (noFiles) Sign(context.Context, *stampduty.Order) error                { return nil }

// accountTries runs f tries times (ledgerTries when not given) with every
// call accounted and returns the calls and units of one run, averaged.
func accountTries(proxy *storetest.Proxy, label string, f func() error, tries ...int) (ledgerArm, error) {
	n := ledgerTries
	if len(tries) > 0 {
		n = tries[0]
	}
	a := ledgerArm{label: label}
	for range n {
		calls, err := within(proxy, storetest.Account, f)
		if err != nil {
			return a, fmt.Errorf("ledger: %s: %w", label, err)
		}
		a.calls += len(calls)
		ops := map[string]int{}
		var order []string
		for _, c := range calls {
			a.rcu += c.Billed.Read
			a.wcu += c.Billed.Write
			k := c.Operation
			if ops[k] == 0 {
				order = append(order, k)
			}
			ops[k]++
		}
		a.operations = ""
		for _, k := range order {
			a.operations += fmt.Sprintf("%s×%d ", k, ops[k])
		}
	}
	a.calls /= n
	a.rcu /= float64(n)
	a.wcu /= float64(n)
	return a, nil
}

// ledgerTable is section 16's table.
func (b *bench) ledgerTable() (*table, error) {
	if len(b.ledger) != 4 {
		return nil, fmt.Errorf("ledger: not measured")
	}
	t := &table{
		Title:    "16. What the ledger adds to a create and to a move to Procured (the workflows on dynalite, accounted by DynamoDB's rules)",
		Header:   []string{"request", "calls", "RCU", "WCU", "calls and units more", "bar"},
		TextCols: 1,
	}
	more := func(with, without ledgerArm) string {
		return fmt.Sprintf("+%d calls, +%.1f WCU", with.calls-without.calls, with.wcu-without.wcu)
	}
	noHold, hold, noCharge, charge := b.ledger[0], b.ledger[1], b.ledger[2], b.ledger[3]
	t.add(noHold.label, fmt.Sprint(noHold.calls), fmt.Sprintf("%.1f", noHold.rcu), fmt.Sprintf("%.1f", noHold.wcu), "", "")
	t.add(hold.label, fmt.Sprint(hold.calls), fmt.Sprintf("%.1f", hold.rcu), fmt.Sprintf("%.1f", hold.wcu), more(hold, noHold), "≤ +2 calls, +3 WCU")
	t.add(noCharge.label, fmt.Sprint(noCharge.calls), fmt.Sprintf("%.1f", noCharge.rcu), fmt.Sprintf("%.1f", noCharge.wcu), "", "")
	t.add(charge.label, fmt.Sprint(charge.calls), fmt.Sprintf("%.1f", charge.rcu), fmt.Sprintf("%.1f", charge.wcu), more(charge, noCharge), "≤ +1 call, +2 WCU")
	t.note("mean of %d warm requests each; the hold is the account item's UpdateItem and one BatchWriteItem of its entry and the one before it; the charge the same (the order path's one change each)", ledgerTries)
	t.note("a change of the ledger is 2 calls and 3 WCU wherever it is made (ledger.go's Apply), so the charge is over its bar by 1 call and 1 WCU: without a transaction one call cannot both move the account and make its entry durable (the designs tried: shared/accounts/DECISIONS.md)")
	t.note("one caller's 32 parallel creates with holds against 32 callers': section 13 (the create-order function holds every order)")
	return t, nil
}
