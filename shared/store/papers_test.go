package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// newPapers returns a new order of papers papers.
func newPapers(t testing.TB, ids *store.IDs, papers int64) stampduty.Order {
	t.Helper()
	first, err := ids.Reserve(context.Background(), stampduty.IDsPerOrder(papers))
	if err != nil {
		t.Fatal(err)
	}
	req := stampduty.OrderRequest{Amount: 100, Purpose: "Affidavit", State: "Karnataka", PaidBy: stampduty.FirstParty,
		FirstPartyMobileNumber: "9876543210", FirstPartyName: "Party", SecondPartyName: "Second", Description: "N/A", Quantity: papers}
	o, err := stampduty.NewOrder(req, stampduty.Article{ID: 7, DocumentID: "artdoc", PurposeName: "Affidavit"}, 100,
		stampduty.NewOrderIDs(first, papers), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// movePaper returns o with paper i moved by c.
func movePaper(t *testing.T, o stampduty.Order, i int, c stampduty.Change) stampduty.Order {
	t.Helper()
	at := stampduty.FormatTime(time.Now())
	ff, changed, err := o.Fulfillments[i].Apply(c, at, "arn:aws:iam::1:user/op")
	if err != nil || !changed {
		t.Fatalf("Apply = %v, %v", changed, err)
	}
	o.Fulfillments = append([]stampduty.Fulfillment(nil), o.Fulfillments...)
	o.Fulfillments[i] = ff
	o.UpdatedAt = at
	return o
}

// cost is what the calls of one step cost: their operations, and the
// write units billed.
type cost struct {
	ops string
	wcu float64
}

func costOf(env *storetest.Env, calls []storetest.ProxyCall) cost {
	c := cost{ops: env.Operations(calls)}
	for _, call := range calls {
		c.wcu += call.Billed.Write
	}
	return c
}

// papersFixture is an order of one paper and one of twenty, each stored
// with its order.created event, in a test's tables read through a proxy
// that accounts for the units; TestPapersApart's steps move their papers
// in turn, each leaving them as the next expects.
type papersFixture struct {
	ctx   context.Context
	env   *storetest.Env
	proxy *storetest.Proxy
	ords  *store.Orders
	ids   *store.IDs
	owner string

	one, twenty             orders.Stored
	createOne, createTwenty cost
}

// paperCreated and paperProcured are a paper's first two moves.
var (
	paperCreated  = stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"}
	paperProcured = stampduty.Change{Status: stampduty.StatusProcured, CertificateNumber: "IN-KA93689528000869Y"}
)

// newPapersFixture stores the order of one paper and the one of twenty,
// and measures their creates.
func newPapersFixture(t *testing.T) *papersFixture {
	env, db, proxy, ids := proxiedStore(t, 100)
	proxy.SetMode(storetest.Account)
	f := &papersFixture{ctx: context.Background(), env: env, proxy: proxy, ords: db.Orders(env.Table("OrdersTable")), ids: ids, owner: "papers"}
	f.one, f.createOne = f.create(t, newPapers(t, ids, 1))
	f.twenty, f.createTwenty = f.create(t, newPapers(t, ids, 20))
	return f
}

// create stores o with its order.created event and returns it as read.
func (f *papersFixture) create(t *testing.T, o stampduty.Order) (orders.Stored, cost) {
	t.Helper()
	seq, err := f.ords.Reserve(f.ctx, f.owner)
	if err != nil {
		t.Fatal(err)
	}
	o.DocumentID = stampduty.WithSeq(o.DocumentID, seq)
	f.proxy.Take()
	if _, err := f.ords.Put(f.ctx, f.owner, seq, o, pending(t, stampduty.EventOrderCreated, o, nil, nil)); err != nil {
		t.Fatal(err)
	}
	c := costOf(f.env, f.proxy.Take())
	return f.read(t, o.DocumentID), c
}

// step moves paper i of s by c with its event, and returns the cost.
func (f *papersFixture) step(t *testing.T, s orders.Stored, i int, c stampduty.Change, prev, next string) cost {
	t.Helper()
	o := movePaper(t, s.Order, i, c)
	ev := pending(t, stampduty.EventOrderStatusChanged, o, &prev, &next)
	ev.Fulfillment = o.Fulfillments[i].DocumentID
	f.proxy.Take()
	if err := f.ords.Replace(f.ctx, s, o, ev); err != nil {
		t.Fatal(err)
	}
	return costOf(f.env, f.proxy.Take())
}

// read returns the fixture owner's order doc as stored.
func (f *papersFixture) read(t *testing.T, doc string) orders.Stored {
	t.Helper()
	return read(t, f.ords, f.owner, doc)
}

// queued counts the entries of each order on the first page of 25 of
// status's live queue.
func (f *papersFixture) queued(t *testing.T, status string) map[string]int {
	t.Helper()
	page, _, err := f.ords.Queue(f.ctx, status, false, "", 25)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, o := range page {
		n[o.DocumentID]++
	}
	return n
}

// TestPapersApart shows an order of several papers kept apart: each
// paper's change is one write of its own item, whatever the number of
// papers, and every read puts the order together.
func TestPapersApart(t *testing.T) {
	f := newPapersFixture(t)
	testkit.Steps(t, f.createCostsWhatOnePaperCosts, f.readIsOneQueryWhateverThePapers, f.movesCostWhatOnePapersCost,
		f.eachPaperOnItsOwn, f.eventsCarryTheirPaper, f.queueListsAnOrderOnceWhileAPaperWaits,
		f.queuePagesPastOrdersOfManyPapers, f.listAndInReadThePapers)
}

func (f *papersFixture) createCostsWhatOnePaperCosts(t *testing.T) {
	if f.createOne.ops != f.createTwenty.ops {
		t.Errorf("create of 20 papers: %s, want the calls of one paper's: %s", f.createTwenty.ops, f.createOne.ops)
	}
	if got := f.read(t, f.twenty.DocumentID); len(got.Fulfillments) != 20 || got.Apart == nil {
		t.Fatalf("read back %d papers (apart %v), want 20 apart", len(got.Fulfillments), got.Apart != nil)
	}
}

func (f *papersFixture) readIsOneQueryWhateverThePapers(t *testing.T) {
	for _, doc := range []string{f.one.DocumentID, f.twenty.DocumentID} {
		f.proxy.Take()
		f.read(t, doc)
		if got, want := f.env.Operations(f.proxy.Take()), "Query:OrdersTable=1"; got != want {
			t.Errorf("read: %s, want %s", got, want)
		}
	}
}

func (f *papersFixture) movesCostWhatOnePapersCost(t *testing.T) {
	first1 := f.step(t, f.one, 0, paperCreated, stampduty.StatusPending, stampduty.StatusCreated)
	first20 := f.step(t, f.twenty, 6, paperCreated, stampduty.StatusPending, stampduty.StatusCreated)
	f.one, f.twenty = f.read(t, f.one.DocumentID), f.read(t, f.twenty.DocumentID)
	second1 := f.step(t, f.one, 0, paperProcured, stampduty.StatusCreated, stampduty.StatusProcured)
	second20 := f.step(t, f.twenty, 6, paperProcured, stampduty.StatusCreated, stampduty.StatusProcured)
	for _, c := range []struct {
		name    string
		one, of cost
	}{{"FirstMove", first1, first20}, {"SecondMove", second1, second20}} {
		t.Logf("%s: one paper %s %v WCU; paper 7 of 20 %s %v WCU", c.name, c.one.ops, c.one.wcu, c.of.ops, c.of.wcu)
		if c.one.ops != c.of.ops {
			t.Errorf("%s of paper 7 of 20: %s, want one paper's calls: %s", c.name, c.of.ops, c.one.ops)
		}
		if c.of.wcu > c.one.wcu+1 {
			t.Errorf("%s of paper 7 of 20: %v WCU, want at most one paper's %v + 1", c.name, c.of.wcu, c.one.wcu)
		}
	}
}

func (f *papersFixture) eachPaperOnItsOwn(t *testing.T) {
	s := f.read(t, f.twenty.DocumentID)
	for i, ff := range s.Fulfillments {
		want := stampduty.StatusPending
		if i == 6 {
			want = stampduty.StatusProcured
		}
		if ff.Status != want {
			t.Errorf("paper %d %s, want %s", i+1, ff.Status, want)
		}
	}
	if got, want := s.UpdatedAt, s.Fulfillments[6].History[2].At; got != want {
		t.Errorf("updatedAt %s, want the paper's last change %s", got, want)
	}
	// A change from a stale read of the paper loses: no update is lost.
	stale := f.twenty
	err := f.ords.Replace(f.ctx, stale, movePaper(t, stale.Order, 6, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1", CertificateNumber: "IN-KA11111111111111Y"}))
	if !errors.Is(err, orders.ErrChanged) {
		t.Errorf("stale change of paper 7: %v, want ErrChanged", err)
	}
	// And one of a paper never written loses to its first write too.
	other := f.read(t, f.twenty.DocumentID)
	if err := f.ords.Replace(f.ctx, other, movePaper(t, other.Order, 2, paperCreated)); err != nil {
		t.Fatal(err)
	}
	if err := f.ords.Replace(f.ctx, other, movePaper(t, other.Order, 2, paperCreated)); !errors.Is(err, orders.ErrChanged) {
		t.Errorf("second first write of paper 3: %v, want ErrChanged", err)
	}
}

func (f *papersFixture) eventsCarryTheirPaper(t *testing.T) {
	found, _, err := f.ords.Pending(f.ctx, webhooks.Poller{}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var paper7 *orders.Stored
	for i, s := range found {
		if s.DocumentID == f.twenty.DocumentID && s.Apart != nil && s.Apart.Item == 7 {
			paper7 = &found[i]
		}
	}
	if paper7 == nil {
		t.Fatalf("the relay does not see paper 7's events among %d outboxes", len(found))
	}
	if got := len(paper7.Outbox); got != 2 {
		t.Fatalf("paper 7's outbox holds %d events, want its 2 moves", got)
	}
	first, second := paper7.Outbox[0], paper7.Outbox[1]
	if first.Order.Fulfillments[6].Status != stampduty.StatusCreated || second.Order.Fulfillments[6].Status != stampduty.StatusProcured {
		t.Errorf("the events' paper 7: %s then %s, want Created then Procured (each as right after its change)",
			first.Order.Fulfillments[6].Status, second.Order.Fulfillments[6].Status)
	}
	if first.Fulfillment != f.twenty.Fulfillments[6].DocumentID || first.Version == 0 || first.Version >= second.Version {
		t.Errorf("events %+v / %+v: want paper 7's documentId and growing versions", first.Fulfillment, []int64{first.Version, second.Version})
	}
	if err := f.ords.Relayed(f.ctx, *paper7, eventIDs(paper7.Outbox)); err != nil {
		t.Fatal(err)
	}
	if s := f.read(t, f.twenty.DocumentID); len(s.Apart.Papers[6].Outbox) != 0 || s.Fulfillments[6].Status != stampduty.StatusProcured {
		t.Errorf("after the relay: outbox %d, status %s; want none, Procured", len(s.Apart.Papers[6].Outbox), s.Fulfillments[6].Status)
	}
}

func (f *papersFixture) queueListsAnOrderOnceWhileAPaperWaits(t *testing.T) {
	for _, status := range []string{stampduty.StatusPending, stampduty.StatusCreated, stampduty.StatusProcured} {
		if got := f.queued(t, status)[f.twenty.DocumentID]; got != 1 {
			t.Errorf("%s queue lists the 20-paper order %d times, want once", status, got)
		}
	}
	if got := f.queued(t, stampduty.StatusPrinted)[f.twenty.DocumentID]; got != 0 {
		t.Errorf("Printed queue lists it %d times, want none", got)
	}
	// Every paper moved on: it leaves the Pending queue.
	for i := range 20 {
		s := f.read(t, f.twenty.DocumentID)
		if s.Fulfillments[i].Status != stampduty.StatusPending {
			continue
		}
		if err := f.ords.Replace(f.ctx, s, movePaper(t, s.Order, i, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: fmt.Sprintf("REF-%d", i)})); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.queued(t, stampduty.StatusPending)[f.twenty.DocumentID]; got != 0 {
		t.Errorf("Pending queue lists it %d times after every paper moved, want none", got)
	}
	if got := f.queued(t, stampduty.StatusCreated)[f.twenty.DocumentID]; got != 1 {
		t.Errorf("Created queue lists it %d times, want once", got)
	}
}

func (f *papersFixture) queuePagesPastOrdersOfManyPapers(t *testing.T) {
	// Twelve orders of three papers, every paper Created: each order
	// has three entries in the Created queue, and with 16 shards some
	// orders share one, so a page of 2 needs more than a shard's Limit
	// of entries to know which orders come first.
	var want []string
	for i := range 12 {
		s, _ := f.create(t, newPapers(t, f.ids, 3))
		for k := range 3 {
			s = f.read(t, s.DocumentID)
			if err := f.ords.Replace(f.ctx, s, movePaper(t, s.Order, k, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: fmt.Sprintf("REF-%d-%d", i, k)})); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, s.DocumentID)
	}
	var got []string
	cursor := ""
	for {
		page, next, err := f.ords.Queue(f.ctx, stampduty.StatusCreated, false, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page {
			got = append(got, o.DocumentID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	at := map[string]int{}
	for i, d := range got {
		if _, seen := at[d]; seen {
			t.Errorf("%s listed twice in the Created queue", d)
		}
		at[d] = i
	}
	for i, d := range want {
		if _, ok := at[d]; !ok {
			t.Errorf("order %d of 3 papers missing from the Created queue", i)
		} else if i > 0 && at[d] < at[want[i-1]] {
			t.Errorf("order %d listed before the one created before it", i)
		}
	}
}

func (f *papersFixture) listAndInReadThePapers(t *testing.T) {
	page, _, err := f.ords.Slice(f.ctx, f.owner, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range page {
		if o.DocumentID == f.twenty.DocumentID && (len(o.Fulfillments) != 20 || o.Fulfillments[6].Status != stampduty.StatusCreated && o.Fulfillments[6].Status != stampduty.StatusProcured) {
			t.Errorf("the list's 20-paper order: %d papers, paper 7 %s", len(o.Fulfillments), o.Fulfillments[6].Status)
		}
	}
	got, err := f.ords.ByDocuments(f.ctx, f.owner, []string{f.twenty.DocumentID})
	if err != nil || len(got) != 1 || got[0].Fulfillments[6].Status != stampduty.StatusProcured {
		t.Fatalf("ByDocuments = %d orders, %v; want the order with paper 7 Procured", len(got), err)
	}
}

// TestCancelApart shows the cancel of an order whose papers are kept
// apart fenced against the papers' own changes: a paper's change and a
// cancel never both land, whichever comes first, and a cancel that died
// half way holds the papers only until DeadAfter.
func TestCancelApart(t *testing.T) {
	ctx := context.Background()
	env, db, _, ids := proxiedStore(t, 100)
	ords := db.Orders(env.Table("OrdersTable"))
	const owner = "cancels"
	create := func(t *testing.T) orders.Stored {
		t.Helper()
		return read(t, ords, owner, storetest.PutOrder(t, ords, owner, newPapers(t, ids, 3)).DocumentID)
	}
	cancelled := func(t *testing.T, s orders.Stored, who string) stampduty.Order {
		t.Helper()
		reason := "a mistake"
		o, changed, err := s.Order.Cancel(who, &reason, stampduty.FormatTime(time.Now()))
		if err != nil || !changed {
			t.Fatalf("Cancel = %v, %v", changed, err)
		}
		return o
	}
	inQueue := func(t *testing.T, status, doc string) bool {
		t.Helper()
		page, _, err := ords.Queue(ctx, status, false, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page {
			if o.DocumentID == doc {
				return true
			}
		}
		return false
	}

	t.Run("ACancelStopsEveryPaper", func(t *testing.T) {
		s := create(t)
		if err := ords.Replace(ctx, s, cancelled(t, s, stampduty.ByCaller)); err != nil {
			t.Fatal(err)
		}
		// A move read before the cancel, of a paper never changed.
		if err := ords.Replace(ctx, s, movePaper(t, s.Order, 1, paperCreated)); !errors.Is(err, orders.ErrChanged) {
			t.Fatalf("a move after the cancel: %v, want ErrChanged", err)
		}
		now := read(t, ords, owner, s.DocumentID)
		if !now.Cancelled() || now.Fulfillments[1].Status != stampduty.StatusPending {
			t.Errorf("cancelled %v, paper 2 %s; want cancelled with every paper Pending", now.Cancelled(), now.Fulfillments[1].Status)
		}
		if inQueue(t, stampduty.StatusPending, s.DocumentID) {
			t.Error("the cancelled order is in the Pending queue")
		}
	})
	t.Run("AMoveFirstStopsTheCancel", func(t *testing.T) {
		s := create(t)
		if err := ords.Replace(ctx, s, movePaper(t, s.Order, 1, paperCreated)); err != nil {
			t.Fatal(err)
		}
		if err := ords.Replace(ctx, s, cancelled(t, s, stampduty.ByOperator)); !errors.Is(err, orders.ErrChanged) {
			t.Fatalf("a cancel read before the move: %v, want ErrChanged", err)
		}
		now := read(t, ords, owner, s.DocumentID)
		if now.Cancelled() || now.Fulfillments[1].Status != stampduty.StatusCreated {
			t.Errorf("cancelled %v, paper 2 %s; want the move, not the cancel", now.Cancelled(), now.Fulfillments[1].Status)
		}
		for _, k := range []int{0, 2} { // the locks the cancel took are undone
			if p := now.Apart.Papers[k]; p.Lock != 0 || !p.Locked.IsZero() {
				t.Errorf("paper %d: %+v, want its lock undone", k+1, p)
			}
		}
		if !inQueue(t, stampduty.StatusPending, s.DocumentID) {
			t.Error("papers 1 and 3 are Pending, but the order is not in the Pending queue")
		}
		// And the papers move on.
		if err := ords.Replace(ctx, now, movePaper(t, now.Order, 0, paperCreated)); err != nil {
			t.Errorf("paper 1 after the failed cancel: %v", err)
		}
	})
	t.Run("AnOperatorsCancelLocksAChangedPaper", func(t *testing.T) {
		s := create(t)
		if err := ords.Replace(ctx, s, movePaper(t, s.Order, 1, paperCreated)); err != nil {
			t.Fatal(err)
		}
		s = read(t, ords, owner, s.DocumentID)
		if err := ords.Replace(ctx, s, cancelled(t, s, stampduty.ByOperator)); err != nil {
			t.Fatal(err)
		}
		if err := ords.Replace(ctx, s, movePaper(t, s.Order, 1, paperProcured)); !errors.Is(err, orders.ErrChanged) {
			t.Errorf("a move of the Created paper after the cancel: %v, want ErrChanged", err)
		}
		if inQueue(t, stampduty.StatusCreated, s.DocumentID) {
			t.Error("the cancelled order is in the Created queue")
		}
	})
	t.Run("ALockLeftByADeadCancel", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			age  time.Duration
			want error
		}{{"HoldsWhileItMayBeUnderWay", 0, orders.ErrChanged}, {"IsLiftedAfterDeadAfter", 2 * store.DeadAfter, nil}} {
			t.Run(tc.name, func(t *testing.T) {
				s := create(t)
				// What a cancel that died after its first lock leaves.
				putItem(t, env, "OrdersTable", map[string]types.AttributeValue{
					"owner": avS(owner), "seq": avN(fmt.Sprintf("%d.01", s.Seq)), "p": avN("1"), "v": avN("9"), "up": avS(s.CreatedAt),
					"f": avM(map[string]types.AttributeValue{"id": avN(fmt.Sprint(s.Fulfillments[0].ID)), "doc": avS(s.Fulfillments[0].DocumentID),
						"st": avS("Pending"), "ref": avS(""), "cn": avS("")}),
					"lk": avN("9"), "lt": avN(fmt.Sprint(time.Now().Add(-tc.age).UnixMilli()))})
				s = read(t, ords, owner, s.DocumentID)
				err := ords.Replace(ctx, s, movePaper(t, s.Order, 0, paperCreated))
				if !errors.Is(err, tc.want) {
					t.Fatalf("a move of the locked paper: %v, want %v", err, tc.want)
				}
				if now := read(t, ords, owner, s.DocumentID); tc.want == nil && now.Fulfillments[0].Status != stampduty.StatusCreated {
					t.Errorf("paper 1 %s after the move, want Created", now.Fulfillments[0].Status)
				}
			})
		}
	})
}

// read returns owner's order doc as stored.
func read(t *testing.T, ords *store.Orders, owner, doc string) orders.Stored {
	t.Helper()
	s, err := ords.Owned(context.Background(), owner, doc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
