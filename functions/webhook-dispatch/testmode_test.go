package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/specimen"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// The references a test order's papers are given (lifecycle.md's formats,
// made up: stampduty.MadeUpReferences).
var (
	specimenRef  = regexp.MustCompile(`^SPECIMEN-KA-[0-9A-F]{16}$`)
	specimenCert = regexp.MustCompile(`^IN-KA0000[0-9]{10}T$`)
)

// TestTestOrdersFulfilThemselves: test orders step on the dispatcher's
// reads of due jobs (test-mode.md, "Test orders fulfil themselves"): a test
// order of two papers reaches Printed, each paper with made-up references
// of the state and a SPECIMEN certificate under the test files' prefix,
// and its caller's webhook gets every event, signed, as for a live order;
// test:stuck stays Pending; test:cancel is cancelled by the operator with
// the reason "Test cancellation" after its first step; a live order, even
// with a step job, and a live order whose purchasedBy is a magic value,
// are left alone; and the function uses exactly the permissions the
// template grants it.
func TestTestOrdersFulfilThemselves(t *testing.T) {
	s, _ := functest.NewScheduled(t, "WebhookDispatchFunction", wire)
	env, ctx := s.Env, context.Background()
	db := env.DB()
	jobs := db.Deliveries(env.Table("DeliveriesTable"))
	reg := &webhooks.Registry{Hooks: db.Webhooks(env.Table("WebhooksTable")), Jobs: jobs,
		IDs: db.IDs(env.Table("CountersTable"), 10), Guard: webhooks.Guard{Local: true}, Now: time.Now}
	rc := newReceiver(t)
	const caller = "tester"
	testOwner := stampduty.TestOwnerOf(caller)
	hook, err := reg.Register(ctx, testOwner, webhooks.Registration{URL: rc.URL + "/test", Events: []string{
		stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged, stampduty.EventOrderCertificateAttached, stampduty.EventOrderCancelled}})
	if err != nil {
		t.Fatal(err)
	}
	// A receiver that answers 410 Gone: its webhook is disabled, as a live one's is.
	if _, err := reg.Register(ctx, testOwner, webhooks.Registration{URL: rc.URL + "/gone", Events: []string{stampduty.EventOrderCreated}}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(ctx, caller, webhooks.Registration{URL: rc.URL + "/live", Events: []string{
		stampduty.EventOrderStatusChanged, stampduty.EventOrderCancelled}}); err != nil {
		t.Fatal(err)
	}

	const every = time.Second
	create := func(owner, purchasedBy string, papers int64) string {
		t.Helper()
		c := &orders.Creator{Articles: db.Articles(env.Table("ArticlesTable")), IDs: env.FixtureIDs(), Orders: db.Orders(env.Table("OrdersTable")),
			Listeners: db.Webhooks(env.Table("WebhooksTable")), Steps: jobs, StepEvery: every, Now: time.Now,
			Payments: &accounts.Ledger{Store: db.Ledger(env.Table("LedgerTable"))}}
		doc, err := c.Create(ctx, owner, orderBody(purchasedBy, papers), nil)
		if err != nil {
			t.Fatalf("create %s order (%s): %v", owner, purchasedBy, err)
		}
		return doc
	}
	two := create(testOwner, "Asha Rao", 2)
	stuck := create(testOwner, stampduty.MagicStuck, 1)
	cancel := create(testOwner, stampduty.MagicCancel, 1)
	live := create(caller, stampduty.MagicCancel, 1)
	// A live order that somehow has a step job is still never stepped.
	liveStepped := create(caller, "Asha Rao", 1)
	if err := jobs.Schedule(ctx, caller, liveStepped, time.Now()); err != nil {
		t.Fatal(err)
	}

	// Another test paper holds the first made-up certificate_number of
	// the order's second paper (papers.md: test numbers are unique among
	// test papers): its step makes another.
	f := functest.Fulfiller(env)
	taken, again := holdMadeUp(t, env, f, two, 1, orders.FieldCertificateNumber)

	// Runs of the function, as EventBridge starts them, with steps 1 s
	// apart, until the order of two papers is Printed (at most 30 s).
	getenv := env.Getenv(s.Function.LogicalID, s.Read)
	run, err := function.BuildRun(wire, func(k string) string {
		if k == "TEST_STEP_SECONDS" {
			return "1"
		}
		return getenv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var final stampduty.Order
	printed := time.Duration(0)
	events := func() int { return len(rc.At("/test")) }
	// created, 3 moves and a certificate per paper, of the order of two
	// papers; created, one move and the cancel of test:cancel; created of test:stuck.
	const wantEvents = 1 + 2*4 + 3 + 1
	for time.Since(start) < 30*time.Second && (printed == 0 || events() < wantEvents) {
		runCtx, stop := context.WithTimeout(ctx, Margin+2*time.Second)
		if err := run(runCtx, nil); err != nil {
			t.Fatalf("run: %v", err)
		}
		stop()
		if final, err = f.Get(ctx, testOwner, two); err != nil {
			t.Fatal(err)
		}
		if printed == 0 && final.Fulfillments[0].Status == stampduty.StatusPrinted && final.Fulfillments[1].Status == stampduty.StatusPrinted {
			printed = time.Since(start)
		}
	}
	t.Logf("a test order of two papers: Printed %.1f s after its create (steps %s apart); %d of %d events by %.1f s",
		printed.Seconds(), every, events(), wantEvents, time.Since(start).Seconds())

	t.Run("PrintedWithMadeUpReferencesAndSpecimens", func(t *testing.T) { printedWithMadeUpReferencesAndSpecimens(t, f, final, two) })
	t.Run("AMadeUpNumberAnotherTestPaperHoldsIsMadeAgain", func(t *testing.T) {
		if got, want := final.Fulfillments[1].CertificateNumber, again; got != want {
			t.Errorf("the second paper's certificate_number = %q, want the second try's %q (the first, %q, is another paper's)", got, want, taken)
		}
	})
	t.Run("EveryEventSigned", func(t *testing.T) { everyEventSigned(t, rc.At("/test"), hook.Secret, two) })
	t.Run("StuckStaysPending", func(t *testing.T) {
		o, err := f.Get(ctx, testOwner, stuck)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Fulfillments[0].Status; got != stampduty.StatusPending || o.CancelledAt != nil {
			t.Errorf("the test:stuck order is %s (cancelled %v), want Pending", got, o.CancelledAt)
		}
		if _, ok, err := jobs.Job(ctx, testOwner, orders.StepsHook, stuck); err != nil || ok {
			t.Errorf("the test:stuck order has a step job (%v, %v)", ok, err)
		}
	})
	t.Run("CancelIsCancelledAfterItsFirstStep", func(t *testing.T) {
		o, err := f.OpsGet(ctx, cancel)
		if err != nil {
			t.Fatal(err)
		}
		if o.CancelledAt == nil || o.Cancellation == nil || o.Cancellation.Reason == nil || *o.Cancellation.Reason != stampduty.TestCancellation ||
			o.Cancellation.By != stampduty.ByOperator {
			t.Fatalf("the test:cancel order's cancellation: %v %+v", o.CancelledAt, o.Cancellation)
		}
		if got := o.Fulfillments[0].Status; got != stampduty.StatusCreated {
			t.Errorf("the test:cancel order's paper is %s, want Created (cancelled after the first step)", got)
		}
	})
	t.Run("LiveOrdersLeftAlone", func(t *testing.T) {
		for _, doc := range []string{live, liveStepped} {
			o, err := f.Get(ctx, caller, doc)
			if err != nil {
				t.Fatal(err)
			}
			if o.Fulfillments[0].Status != stampduty.StatusPending || o.CancelledAt != nil {
				t.Errorf("live order %s is %s (cancelled %v)", doc, o.Fulfillments[0].Status, o.CancelledAt)
			}
		}
		if n := len(rc.At("/live")); n != 0 {
			t.Errorf("the live webhook got %d events", n)
		}
		if j, ok, err := jobs.Job(ctx, caller, orders.StepsHook, live); err != nil || ok {
			t.Errorf("a live order got a step job: %+v (%v)", j, err)
		}
	})
	s.CheckTemplate(s.Proxy.All())
}

// printedWithMadeUpReferencesAndSpecimens checks final, the order two of two
// papers after the runs: both Printed through every status, with made-up
// references and specimen certificates stored under the test files' prefix.
// holdMadeUp claims the first made-up number field (orders.FieldDocRef or
// FieldCertificateNumber) of paper i of test order doc for another test
// paper, a claim just made (not stale), and returns that number and the
// paper's second try's, which its step then stores.
func holdMadeUp(t *testing.T, env *storetest.Env, f *orders.Fulfiller, doc string, i int, field string) (taken, again string) {
	t.Helper()
	ctx := context.Background()
	o, err := f.OpsGet(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	var tries [2]string
	for try := range tries {
		refs, err := stampduty.MadeUpReferences(doc, o.Fulfillments[i].DocumentID, o.StampDuty.State, try)
		if err != nil {
			t.Fatal(err)
		}
		tries[try] = refs.CertificateNumber
		if field == orders.FieldDocRef {
			tries[try] = refs.UniqueDocRef
		}
	}
	other := orders.Claim{Field: field, Number: tries[0], Test: true, CreatedAt: o.CreatedAt,
		Owner: o.Owner, Order: "another-test-order", Paper: "another-test-paper", At: time.Now(), Token: "held"}
	if _, ok, err := env.DB().Numbers(env.Table("NumbersTable")).Claim(ctx, other); err != nil || !ok {
		t.Fatalf("claim another paper's number: %v, %v", ok, err)
	}
	return tries[0], tries[1]
}

func printedWithMadeUpReferencesAndSpecimens(t *testing.T, f *orders.Fulfiller, final stampduty.Order, two string) {
	ctx := context.Background()
	for i, ff := range final.Fulfillments {
		if ff.Status != stampduty.StatusPrinted {
			t.Fatalf("paper %d is %s, want Printed", i+1, ff.Status)
		}
		if !specimenRef.MatchString(ff.UniqueDocRef) || !specimenCert.MatchString(ff.CertificateNumber) {
			t.Errorf("paper %d: unique_doc_ref %q, certificate_number %q", i+1, ff.UniqueDocRef, ff.CertificateNumber)
		}
		var seen []string
		for _, h := range ff.History {
			seen = append(seen, h.Status)
		}
		if got, want := strings.Join(seen, ","), "Pending,Created,Procured,Printed"; got != want {
			t.Errorf("paper %d went %s, want %s", i+1, got, want)
		}
		cf := ff.CertificateFile
		if cf == nil || cf.Mime != "application/pdf" || cf.URL == "" {
			t.Fatalf("paper %d: certificate %+v", i+1, cf)
		}
		r := functest.Download(t, cf.URL)
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Body, "%PDF-") || int64(len(r.Body)) != cf.Size {
			t.Errorf("paper %d: the certificate's address answers %d with %d bytes (want a PDF of %d)", i+1, r.Status, len(r.Body), cf.Size)
		}
	}
	if final.Fulfillments[0].CertificateNumber == final.Fulfillments[1].CertificateNumber {
		t.Errorf("both papers have certificate number %s", final.Fulfillments[0].CertificateNumber)
	}
	ops, err := f.OpsGet(ctx, two)
	if err != nil {
		t.Fatal(err)
	}
	for i, ff := range ops.Fulfillments {
		if got := ff.CertificateFile.Key; !strings.HasPrefix(got, orders.CertificatePrefix+orders.TestFiles) {
			t.Errorf("paper %d's certificate is stored at %s, outside the test files' prefix", i+1, got)
		}
		if got := ff.History[1].By; got != stampduty.TestModeActor {
			t.Errorf("paper %d's Created names %q, want %q", i+1, got, stampduty.TestModeActor)
		}
	}
}

// everyEventSigned checks the test webhook's deliveries: each signed with
// its secret, none livemode, and the events of the order two, of two
// papers, each once.
func everyEventSigned(t *testing.T, got []delivery, secret, two string) {
	counts := map[string]int{}
	for _, d := range got {
		var ev webhooks.Event
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			t.Fatal(err)
		}
		if err := webhooks.Verify(d.Signature, secret, d.Body, time.Now(), 5*time.Minute); err != nil {
			t.Errorf("%s: the signature does not verify: %v", ev.Type, err)
		}
		var o stampduty.Order
		if err := json.Unmarshal(ev.Data.Order, &o); err != nil {
			t.Fatal(err)
		}
		if o.DocumentID == two {
			counts[ev.Type]++
		}
		if ev.Livemode || o.Livemode {
			t.Errorf("%s: livemode %v, its order's %v; want false", ev.Type, ev.Livemode, o.Livemode)
		}
	}
	want := map[string]int{stampduty.EventOrderCreated: 1, stampduty.EventOrderStatusChanged: 6, stampduty.EventOrderCertificateAttached: 2}
	for typ, n := range want {
		if counts[typ] != n {
			t.Errorf("%d %s events of the order of two papers, want %d (all: %v)", counts[typ], typ, n, counts)
		}
	}
}

// TestTestOrderCost measures what a test order costs in DynamoDB (by
// DynamoDB's rules: storetest.Account): the create's calls beside a live
// create's (one more: its step job), and each step's calls made by the
// dispatcher's delivery pass (the lease, the step's reads and writes, the
// job's re-arming), leaving out the pass's reads of the due index, which
// it makes whether or not a test order is in flight. An order of one paper
// and one of 20, with no webhook (every event costs as for a live order).
func TestTestOrderCost(t *testing.T) {
	env := storetest.New(t)
	functest.Seed(t, env)
	ctx := context.Background()
	db, proxy := env.ProxiedDB()
	proxy.SetMode(storetest.Account)
	bucket := files.New(env.S3(), env.Table("FilesBucket"))
	jobs := db.Deliveries(env.Table("DeliveriesTable"))
	creator := &orders.Creator{Articles: db.Articles(env.Table("ArticlesTable")), IDs: env.FixtureIDs(), Orders: db.Orders(env.Table("OrdersTable")),
		Listeners: db.Webhooks(env.Table("WebhooksTable")), Steps: jobs, StepEvery: time.Second, Now: time.Now}
	now := time.Now()
	d := &webhooks.Dispatcher{Outbox: db.Orders(env.Table("OrdersTable")), Hooks: db.Webhooks(env.Table("WebhooksTable")), Jobs: jobs,
		Files: bucket, Now: func() time.Time { return now },
		Steps: webhooks.Steps{Every: time.Second, Stepper: &orders.Fulfiller{Orders: db.Orders(env.Table("OrdersTable")), Files: bucket,
			Listeners: db.Webhooks(env.Table("WebhooksTable")), Numbers: db.Numbers(env.Table("NumbersTable")), Specimen: specimen.ForOrder, Now: time.Now}}}
	type cost struct {
		calls    int
		rcu, wcu float64
	}
	measure := func(calls []storetest.ProxyCall) (cost, string) {
		var c cost
		var kept []storetest.ProxyCall
		for _, call := range storetest.Requests(calls) {
			if call.Index == store.DueIndex { // made anyway
				continue
			}
			kept = append(kept, call)
			c.calls++
			c.rcu += call.Billed.Read
			c.wcu += call.Billed.Write
		}
		return c, env.Operations(kept)
	}
	for _, papers := range []int64{1, 20} {
		t.Run(fmt.Sprintf("Papers%d", papers), func(t *testing.T) {
			create := func(owner string) (string, cost) {
				t.Helper()
				proxy.Take()
				doc, err := creator.Create(ctx, owner, orderBody("Asha Rao", papers), nil)
				if err != nil {
					t.Fatal(err)
				}
				c, _ := measure(proxy.Take())
				return doc, c
			}
			_, live := create("cost-live")
			owner := stampduty.TestOwnerOf("cost")
			doc, test := create(owner)
			t.Logf("create: live %d calls %.1f WCU %.1f RCU; test %d calls %.1f WCU %.1f RCU", live.calls, live.wcu, live.rcu, test.calls, test.wcu, test.rcu)
			if got, want := test.calls, live.calls+1; got != want {
				t.Errorf("a test create makes %d calls, want %d (a live create's and its step job)", got, want)
			}
			var total cost
			for step := 1; ; step++ {
				j, ok, err := jobs.Job(ctx, owner, orders.StepsHook, doc)
				if err != nil || !ok {
					t.Fatalf("the step job: %v %v", ok, err)
				}
				if j.Done != webhooks.JobDue {
					break
				}
				if step > 3 {
					t.Fatalf("step %d: a test order takes three steps", step)
				}
				now, _ = time.Parse(stampduty.TimeLayout, j.Next)
				proxy.Take()
				if _, err := d.Deliver(ctx); err != nil {
					t.Fatal(err)
				}
				c, ops := measure(proxy.Take())
				t.Logf("step %d: %d calls (%s), %.1f WCU, %.1f RCU", step, c.calls, ops, c.wcu, c.rcu)
				total = cost{total.calls + c.calls, total.rcu + c.rcu, total.wcu + c.wcu}
			}
			o, err := functest.Fulfiller(env).Get(ctx, owner, doc)
			if err != nil {
				t.Fatal(err)
			}
			for i, ff := range o.Fulfillments {
				if ff.Status != stampduty.StatusPrinted {
					t.Fatalf("paper %d is %s after three steps", i+1, ff.Status)
				}
			}
			t.Logf("%d paper(s): the steps together %d calls, %.1f WCU, %.1f RCU", papers, total.calls, total.wcu, total.rcu)
			// Per paper: its three moves and its certificate, a write
			// each, and the claims of its two made-up numbers (papers.md:
			// unique among test papers); per step: the read of the order,
			// the job's lease and re-arming; per step and event type: one
			// read of the owner's webhooks (4); and one more read of the
			// order before Printed.
			if max := int(papers)*(4+2) + 3*3 + 4 + 1; total.calls > max {
				t.Errorf("the steps made %d calls, more than %d", total.calls, max)
			}
		})
	}
}

// orderBody is a create's body, decoded, of an Affidavit in Karnataka of
// papers papers, purchased by purchasedBy.
func orderBody(purchasedBy string, papers int64) *stampduty.OrderBody {
	var fields []stampduty.Field
	for k, v := range map[string]string{"purpose": "Affidavit", "state": "Karnataka", "paidBy": "First Party",
		"firstPartyName": "Asha Rao", "secondPartyName": "Ravi Kumar", "firstPartyMobileNumber": "9876543210",
		"firstPartyPan": "ABCDE1234F", "description": "Rent agreement", "purchasedBy": purchasedBy} {
		fields = append(fields, stampduty.Field{Name: k, Value: stampduty.Value{Kind: stampduty.String, Text: v}})
	}
	for k, v := range map[string]string{"amount": "20", "considerationPrice": "0", "quantity": strconv.FormatInt(papers, 10)} {
		fields = append(fields, stampduty.Field{Name: k, Value: stampduty.Value{Kind: stampduty.Number, Text: v}})
	}
	return stampduty.NewOrderBody(fields)
}
