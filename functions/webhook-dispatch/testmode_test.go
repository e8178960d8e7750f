package main

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
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
			Listeners: db.Webhooks(env.Table("WebhooksTable")), Steps: jobs, StepEvery: every, Now: time.Now}
		var fields []stampduty.Field
		for k, v := range map[string]string{"purpose": "Affidavit", "state": "Karnataka", "paidBy": "First Party",
			"firstPartyName": "Asha Rao", "secondPartyName": "Ravi Kumar", "firstPartyMobileNumber": "9876543210",
			"firstPartyPan": "ABCDE1234F", "description": "Rent agreement", "purchasedBy": purchasedBy} {
			fields = append(fields, stampduty.Field{Name: k, Value: stampduty.Value{Kind: stampduty.String, Text: v}})
		}
		fields = append(fields, stampduty.Field{Name: "amount", Value: stampduty.Value{Kind: stampduty.Number, Text: "20"}},
			stampduty.Field{Name: "considerationPrice", Value: stampduty.Value{Kind: stampduty.Number, Text: "0"}},
			stampduty.Field{Name: "quantity", Value: stampduty.Value{Kind: stampduty.Number, Text: strconv.FormatInt(papers, 10)}})
		doc, err := c.Create(ctx, owner, stampduty.NewOrderBody(fields), nil)
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
	f := functest.Fulfiller(env)
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

	t.Run("PrintedWithMadeUpReferencesAndSpecimens", func(t *testing.T) {
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
	})
	t.Run("EveryEventSigned", func(t *testing.T) {
		counts := map[string]int{}
		for _, d := range rc.At("/test") {
			var ev webhooks.Event
			if err := json.Unmarshal(d.Body, &ev); err != nil {
				t.Fatal(err)
			}
			if err := webhooks.Verify(d.Signature, hook.Secret, d.Body, time.Now(), 5*time.Minute); err != nil {
				t.Errorf("%s: the signature does not verify: %v", ev.Type, err)
			}
			var o stampduty.Order
			if err := json.Unmarshal(ev.Data.Order, &o); err != nil {
				t.Fatal(err)
			}
			if o.DocumentID == two {
				counts[ev.Type]++
			}
		}
		want := map[string]int{stampduty.EventOrderCreated: 1, stampduty.EventOrderStatusChanged: 6, stampduty.EventOrderCertificateAttached: 2}
		for typ, n := range want {
			if counts[typ] != n {
				t.Errorf("%d %s events of the order of two papers, want %d (all: %v)", counts[typ], typ, n, counts)
			}
		}
	})
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
