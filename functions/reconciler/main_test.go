package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.yaml.in/yaml/v3"

	"stampduty/shared/accounts"
	"stampduty/shared/metrics"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { functest.Main(m) }

// world is a reconciler's stack and what a test makes crash points with.
type world struct {
	t      *testing.T
	s      *functest.Stack
	run    func(context.Context) error
	ledger *store.Ledger
	ords   *store.Orders
	// past is a clock older than the reconciler's grace: what it made, no
	// function still running can be finishing.
	past func() time.Time
}

func newWorld(t *testing.T) *world {
	s, run := functest.NewScheduled(t, "ReconcilerFunction", wire)
	db := s.Env.DB()
	old := time.Now().Add(-2 * store.DeadAfter)
	return &world{t: t, s: s, run: func(ctx context.Context) error { return run(ctx, nil) },
		ledger: db.Ledger(s.Env.Table("LedgerTable")), ords: db.Orders(s.Env.Table("OrdersTable")),
		past: func() time.Time { return old }}
}

// accounts is the ledger workflow over the world's table on its past clock.
func (w *world) accounts() *accounts.Ledger { return &accounts.Ledger{Store: w.ledger, Now: w.past} }

// orders stores n held orders of one paper for owner, made in the past
// (their holds are made now: the reconciler goes by a stored order's own
// time).
func (w *world) orders(owner string, n int) []stampduty.Order {
	w.t.Helper()
	return functest.AddOrdersAt(w.t, w.s.Env, owner, n, w.past())
}

// change stores order doc of owner as f makes it, in the past: a move or a
// cancel whose own charge or release was never made.
func (w *world) change(doc string, f func(o *stampduty.Order)) {
	w.t.Helper()
	st := functest.StoredOrder(w.t, w.s.Env, doc)
	next := st.Order
	next.Fulfillments = append([]stampduty.Fulfillment(nil), next.Fulfillments...)
	f(&next)
	next.UpdatedAt = stampduty.FormatTime(w.past())
	if err := w.ords.Replace(context.Background(), st, next); err != nil {
		w.t.Fatal(err)
	}
}

// deleteEntry removes owner's entry seq: as if its writer, and the next
// change's, stopped before putting it.
func (w *world) deleteEntry(owner string, seq int64) {
	w.t.Helper()
	_, err := w.s.Env.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(w.s.Env.Table("LedgerTable")),
		Key: map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: owner},
			"k": &types.AttributeValueMemberS{Value: fmt.Sprintf("e#%012d", seq)}}})
	if err != nil {
		w.t.Fatal(err)
	}
}

// pass runs the reconciler once and returns the sums of the metrics it
// wrote, read back from its EMF lines as CloudWatch reads them.
func (w *world) pass() map[metrics.Name]float64 {
	w.t.Helper()
	before := w.s.Metrics.String()
	if err := w.run(context.Background()); err != nil {
		w.t.Fatal(err)
	}
	sums := map[metrics.Name]float64{}
	for line := range strings.Lines(strings.TrimPrefix(w.s.Metrics.String(), before)) {
		ps, ok, err := metrics.Read([]byte(line))
		if err != nil {
			w.t.Fatalf("line %q: %v", line, err)
		}
		if !ok {
			continue
		}
		for _, p := range ps {
			for _, v := range p.Values {
				sums[p.Name] += v
			}
		}
	}
	return sums
}

// checkLedger fails t unless owner's account and entries agree
// (storetest.CheckLedger) and its held is what its orders hold by their
// state.
func checkLedger(t *testing.T, w *world, owner string, placed ...stampduty.Order) accounts.Account {
	t.Helper()
	a, _ := storetest.CheckLedger(t, w.ledger, owner)
	if placed != nil {
		var want accounts.Money
		for _, o := range placed {
			st := functest.StoredOrder(t, w.s.Env, o.DocumentID)
			want += accounts.Money(st.Order.PaymentNow().HeldPaise)
		}
		if a.Held != want {
			t.Errorf("%s: held %s, its orders hold %s", owner, a.Held, want)
		}
	}
	return a
}

// TestReconcilerRepairsEachCrashPoint makes each crash point the order
// path can leave on the local engines and runs the reconciler once: it
// makes each write left unmade (one LedgerRepairs each), leaves a healthy
// account alone, and counts an account whose entries are missing in
// LedgerMismatch on every run, which the template's alarm watches. A
// second run repairs nothing more. It uses exactly what the template
// grants it.
func TestReconcilerRepairsEachCrashPoint(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	l := w.accounts()

	// Healthy: two orders held, nothing to do.
	healthy := w.orders("healthy", 2)

	// (a) The newest change's writer stopped between the account's update
	// and its entry's put, and no change came after.
	a, err := l.Store.Apply(ctx, "lastlost", accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID("UTR-a"), Type: accounts.TypeCredit,
		Amount: accounts.Rupees(500), Reference: "UTR-a", By: accounts.ByAdmin, CreatedAt: w.past()}})
	if err != nil {
		t.Fatal(err)
	}
	w.deleteEntry("lastlost", a.Entry.Seq)

	// (b) The create stopped between the hold and the order's write: the
	// seq is reserved, the hold made, the order never stored.
	kept := w.orders("vanished", 1)
	seq, err := w.ords.Reserve(ctx, "vanished")
	if err != nil {
		t.Fatal(err)
	}
	lost := kept[0]
	lost.DocumentID, lost.Held = stampduty.WithSeq(lost.DocumentID, seq), true
	if _, err := l.Hold(ctx, "vanished", lost); err != nil {
		t.Fatal(err)
	}

	// (c) A paper moved to Procured, its charge failed.
	procured := w.orders("procured", 2)
	w.change(procured[0].DocumentID, func(o *stampduty.Order) { o.Fulfillments[0].Status = stampduty.StatusProcured })

	// (d) An order cancelled, its release failed.
	cancelled := w.orders("cancelled", 2)
	w.change(cancelled[1].DocumentID, func(o *stampduty.Order) {
		at := stampduty.FormatTime(w.past())
		o.CancelledAt = &at
		o.Cancellation = &stampduty.Cancellation{}
	})

	// (e) Two stops in a row: an entry in the middle is in no item.
	for _, ref := range []string{"UTR-1", "UTR-2", "UTR-3"} {
		if _, err := l.Store.Apply(ctx, "broken", accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID(ref), Type: accounts.TypeCredit,
			Amount: accounts.Rupees(100), Reference: ref, By: accounts.ByAdmin, CreatedAt: w.past()}}); err != nil {
			t.Fatal(err)
		}
	}
	w.deleteEntry("broken", 2)

	// In flight: a create that has just held and is storing its order,
	// and an account whose newest writers may still be putting entries.
	// The reconciler leaves both to a later run.
	creating := kept[0]
	seq2, err := w.ords.Reserve(ctx, "creating")
	if err != nil {
		t.Fatal(err)
	}
	creating.DocumentID = stampduty.WithSeq(creating.DocumentID, seq2)
	if _, err := (&accounts.Ledger{Store: w.ledger}).Hold(ctx, "creating", creating); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"UTR-4", "UTR-5"} {
		if _, err := w.ledger.Apply(ctx, "writing", accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID(ref), Type: accounts.TypeCredit,
			Amount: accounts.Rupees(100), Reference: ref, By: accounts.ByAdmin, CreatedAt: time.Now()}}); err != nil {
			t.Fatal(err)
		}
	}
	w.deleteEntry("writing", 1)

	got := w.pass()
	if a := functest.Account(t, w.s.Env, "creating"); a.Held != accounts.Rupees(creating.StampDuty.TotalAmount) {
		t.Errorf("creating: held %s, want the hold of the order being created kept", a.Held)
	}
	if got, want := got[metrics.LedgerRepairs], 4.0; got != want {
		t.Errorf("LedgerRepairs = %v, want %v (one per crash point a–d)", got, want)
	}
	if got, want := got[metrics.LedgerMismatch], 1.0; got != want {
		t.Errorf("LedgerMismatch = %v, want %v (the account with an entry missing)", got, want)
	}
	checkLedger(t, w, "healthy", healthy...)
	if a := checkLedger(t, w, "lastlost"); a.Balance != accounts.Rupees(500) {
		t.Errorf("lastlost: balance %s, want 500.00", a.Balance)
	}
	v := checkLedger(t, w, "vanished", kept...)
	if got, want := v.Held, accounts.Rupees(kept[0].StampDuty.TotalAmount); got != want {
		t.Errorf("vanished: held %s, want the stored order's %s alone", got, want)
	}
	p := checkLedger(t, w, "procured", procured...)
	if got, want := p.Totals.Charges, accounts.Rupees(procured[0].StampDuty.Amount); got != want {
		t.Errorf("procured: charged %s, want %s", got, want)
	}
	c := checkLedger(t, w, "cancelled", cancelled...)
	if got, want := c.Totals.Releases, accounts.Rupees(cancelled[1].StampDuty.TotalAmount); got != want {
		t.Errorf("cancelled: released %s, want %s", got, want)
	}

	w.s.Proxy.Take()
	again := w.pass()
	t.Logf("the second run, over %d accounts: %s", 8, w.s.Env.Operations(w.s.Proxy.Take()))
	if got := again[metrics.LedgerRepairs]; got != 0 {
		t.Errorf("second run: LedgerRepairs = %v, want 0 (every repair was made once)", got)
	}
	if got, want := again[metrics.LedgerMismatch], 1.0; got != want {
		t.Errorf("second run: LedgerMismatch = %v, want %v: the mismatch stands until someone puts it right", got, want)
	}
	checkAlarm(t, again)
	w.s.CheckTemplate(w.s.Proxy.All())
}

// checkAlarm reads the LedgerMismatch alarm from template.yaml and checks
// that what a run wrote breaches it: its metric, in the namespace the
// functions write to, summed over its period, compared as it says.
func checkAlarm(t *testing.T, sums map[metrics.Name]float64) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Parameters map[string]struct {
			Default string `yaml:"Default"`
		} `yaml:"Parameters"`
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				MetricName         string    `yaml:"MetricName"`
				Namespace          yaml.Node `yaml:"Namespace"`
				Statistic          string    `yaml:"Statistic"`
				Period             int       `yaml:"Period"`
				ComparisonOperator string    `yaml:"ComparisonOperator"`
				Threshold          yaml.Node `yaml:"Threshold"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	al, ok := doc.Resources["LedgerMismatchAlarm"]
	if !ok || al.Type != "AWS::CloudWatch::Alarm" {
		t.Fatal("template.yaml has no LedgerMismatchAlarm")
	}
	p := al.Properties
	if p.MetricName != string(metrics.LedgerMismatch) || p.Namespace.Value != "StampDuty/${AWS::StackName}" || p.Statistic != "Sum" || p.Period > 300 {
		t.Fatalf("LedgerMismatchAlarm watches %s %s (%s over %d s), want the Sum of LedgerMismatch in the stack's namespace within 5 minutes",
			p.Namespace.Value, p.MetricName, p.Statistic, p.Period)
	}
	if p.Threshold.Tag != "!Ref" {
		t.Fatalf("LedgerMismatchAlarm's threshold %s %q: want a parameter", p.Threshold.Tag, p.Threshold.Value)
	}
	param, ok := doc.Parameters[p.Threshold.Value]
	if !ok {
		t.Fatalf("LedgerMismatchAlarm's threshold names no parameter %s", p.Threshold.Value)
	}
	threshold, err := strconv.ParseFloat(param.Default, 64)
	if err != nil {
		t.Fatalf("parameter %s: %v", p.Threshold.Value, err)
	}
	if p.ComparisonOperator != "GreaterThanThreshold" || !(sums[metrics.LedgerMismatch] > threshold) {
		t.Errorf("LedgerMismatch %v does not breach the alarm (%s %v)", sums[metrics.LedgerMismatch], p.ComparisonOperator, threshold)
	}
}
