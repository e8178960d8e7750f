package orders_test

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"stampduty/shared/metrics"
	"stampduty/shared/orders"
	"stampduty/shared/specimen"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
)

// measure runs f with a context carrying a metrics Set, as a function's
// invocation has, and returns what f added: each metric's sum by its
// dimension values ("OrdersCreated State=KA"), read back from the EMF
// lines the Set writes. Every metric must be declared (metrics.Defs) with
// exactly the dimensions it was written with.
func measure(t *testing.T, f func(ctx context.Context)) map[string]float64 {
	t.Helper()
	s := metrics.NewSet(map[string]string{metrics.FunctionName: "test"})
	f(metrics.With(context.Background(), s))
	var buf bytes.Buffer
	if err := s.Flush(&buf, "StampDuty/test", time.Now()); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for line := range strings.Lines(buf.String()) {
		points, ok, err := metrics.Read([]byte(line))
		if !ok || err != nil {
			t.Fatalf("line %q: %v, %v", line, ok, err)
		}
		for _, p := range points {
			def, ok := metrics.Lookup(p.Name)
			if !ok || !slices.Equal(slices.Sorted(maps.Keys(p.Dimensions)), slices.Sorted(slices.Values(def.Dimensions))) {
				t.Errorf("%s with dimensions %v: not as declared (%+v)", p.Name, p.Dimensions, def)
			}
			key := string(p.Name)
			for _, d := range def.Dimensions {
				if d != metrics.FunctionName {
					key += " " + d + "=" + p.Dimensions[d]
				}
			}
			for _, v := range p.Values {
				got[key] += v
			}
		}
	}
	return got
}

// wantMetrics fails t unless got is exactly want.
func wantMetrics(t *testing.T, what string, got, want map[string]float64) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s: metrics %v, want %v", what, got, want)
	}
}

// none is no metric at all.
var none = map[string]float64{}

// TestCreatesCountTheirOrders: a create, and each created row of a batch,
// adds one order and its quantity of papers by state (KA: the sample
// article's Karnataka); a refused body or row, a replay of an
// Idempotency-Key, a dry run and a test principal's orders add nothing.
func TestCreatesCountTheirOrders(t *testing.T) {
	w := newWorld(t)
	three := map[string]any{"quantity": 3}
	key := &orders.Key{Value: "metrics-key", Fingerprint: "fp-1"}

	t.Run("a create counts its order and its papers", func(t *testing.T) {
		got := measure(t, func(ctx context.Context) {
			if _, err := w.creator.Create(ctx, "owner", body(t, three), nil); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "create", got, map[string]float64{"OrdersCreated State=KA": 1, "PapersOrdered State=KA": 3})
	})
	t.Run("a create under a key counts once, its replay nothing", func(t *testing.T) {
		got := measure(t, func(ctx context.Context) {
			if _, err := w.creator.Create(ctx, "owner", body(t, nil), key); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "first", got, map[string]float64{"OrdersCreated State=KA": 1, "PapersOrdered State=KA": 1})
		got = measure(t, func(ctx context.Context) {
			if _, err := w.creator.Create(ctx, "owner", body(t, nil), key); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "replay", got, none)
	})
	t.Run("a refused create counts nothing", func(t *testing.T) {
		got := measure(t, func(ctx context.Context) {
			if _, err := w.creator.Create(ctx, "owner", body(t, map[string]any{"amount": 99999}), nil); stampduty.ErrorCode(err) != stampduty.EINVALID {
				t.Fatalf("Create = %v, want EINVALID", err)
			}
		})
		wantMetrics(t, "refused", got, none)
	})
	t.Run("a test principal's create counts nothing", func(t *testing.T) {
		got := measure(t, func(ctx context.Context) {
			if _, err := w.creator.Create(ctx, stampduty.TestOwnerOf("owner"), body(t, three), nil); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "test mode", got, none)
	})

	batcher := &orders.Batcher{Creator: w.creator, Orders: w.orders, Keys: w.keys}
	rows := []orders.BatchRow{{Body: body(t, three)}, {Body: body(t, map[string]any{"amount": 99999})},
		{Body: body(t, map[string]any{"quantity": 2, "purpose": "Power of Attorney", "state": "Delhi", "amount": 50})}}
	batch := func(t *testing.T, ctx context.Context, owner string, key *orders.Key, dry bool) {
		t.Helper()
		checked, err := batcher.Check(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		if dry {
			checked.Results()
			return
		}
		res, err := batcher.Store(ctx, owner, checked, key)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil || res[1].Err == nil || res[2].Err != nil {
			t.Fatalf("rows answered %+v: want the second refused", res)
		}
	}
	t.Run("a batch counts each created row, by its state", func(t *testing.T) {
		got := measure(t, func(ctx context.Context) { batch(t, ctx, "owner", nil, false) })
		wantMetrics(t, "batch", got, map[string]float64{"OrdersCreated State=KA": 1, "PapersOrdered State=KA": 3,
			"OrdersCreated State=DL": 1, "PapersOrdered State=DL": 2})
	})
	t.Run("a batch under a key counts once, its replay nothing", func(t *testing.T) {
		bkey := &orders.Key{Value: "metrics-batch-key", Fingerprint: "fp-2"}
		got := measure(t, func(ctx context.Context) { batch(t, ctx, "owner", bkey, false) })
		if got["OrdersCreated State=KA"] != 1 || got["OrdersCreated State=DL"] != 1 {
			t.Errorf("first: metrics %v, want one order of each state", got)
		}
		got = measure(t, func(ctx context.Context) { batch(t, ctx, "owner", bkey, false) })
		wantMetrics(t, "replay", got, none)
	})
	t.Run("a dry run counts nothing", func(t *testing.T) {
		got := measure(t, func(ctx context.Context) { batch(t, ctx, "owner", nil, true) })
		wantMetrics(t, "dry run", got, none)
	})
	t.Run("a test principal's batch counts nothing", func(t *testing.T) {
		got := measure(t, func(ctx context.Context) { batch(t, ctx, stampduty.TestOwnerOf("owner"), nil, false) })
		wantMetrics(t, "test mode", got, none)
	})
}

// TestChangesCountWhatTheyStored: an operator's move adds one paper moved
// to its new status, an attached certificate or caller's document (from a
// body or a staged upload) one file of its kind; a repeat, a change of a
// reference only, a refusal, a lost race and a cancel add nothing, and a
// write whose answer was lost but which landed counts once.
func TestChangesCountWhatTheyStored(t *testing.T) {
	w := newFulfillmentWorld(t, 5)
	f := w.fulfiller(w.orders, w.files())
	ctx0 := context.Background()
	advance := func(ctx context.Context, f *orders.Fulfiller, o stampduty.Order, c stampduty.Change) error {
		_, err := f.Advance(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, c, "op-1")
		return err
	}
	created := stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"}
	procured := stampduty.Change{Status: stampduty.StatusProcured, CertificateNumber: "IN-KA93689528000869Y"}

	t.Run("moves count the status moved to", func(t *testing.T) {
		o := w.mine[0]
		got := measure(t, func(ctx context.Context) {
			if err := advance(ctx, f, o, created); err != nil {
				t.Fatal(err)
			}
			if err := advance(ctx, f, o, procured); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "moves", got, map[string]float64{"PapersMoved Status=Created": 1, "PapersMoved Status=Procured": 1})
		got = measure(t, func(ctx context.Context) {
			if err := advance(ctx, f, o, procured); err != nil {
				t.Fatal(err)
			}
			if err := advance(ctx, f, o, stampduty.Change{Status: stampduty.StatusPending}); err == nil {
				t.Error("a move back was stored")
			}
		})
		wantMetrics(t, "a repeat and a refusal", got, none)
	})
	t.Run("a certificate counts as a certificate, the move to Printed as a move", func(t *testing.T) {
		o := w.mine[0]
		got := measure(t, func(ctx context.Context) {
			if _, err := f.AttachCertificate(ctx, o.DocumentID, o.Fulfillments[0].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); err != nil {
				t.Fatal(err)
			}
			if err := advance(ctx, f, o, stampduty.Change{Status: stampduty.StatusPrinted}); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "certificate", got, map[string]float64{"FilesAttached Kind=certificate": 1, "PapersMoved Status=Printed": 1})
	})
	t.Run("a document counts as a document, from a body or staged", func(t *testing.T) {
		o := w.mine[1]
		got := measure(t, func(ctx context.Context) {
			if _, err := f.UploadDocument(ctx, "owner", o.DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "upload", got, map[string]float64{"FilesAttached Kind=document": 1})
		u := staged(t, f, o.DocumentID)
		got = measure(t, func(ctx context.Context) {
			if _, err := f.AttachDocument(ctx, "owner", o.DocumentID, u.ID); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "staged attach", got, map[string]float64{"FilesAttached Kind=document": 1})
		got = measure(t, func(ctx context.Context) {
			if _, err := f.AttachDocument(ctx, "owner", o.DocumentID, u.ID); err == nil {
				t.Error("an upload was attached twice")
			}
		})
		wantMetrics(t, "a used upload", got, none)
	})
	t.Run("a cancel moves no paper", func(t *testing.T) {
		o := w.mine[2]
		got := measure(t, func(ctx context.Context) {
			if _, err := f.Cancel(ctx, "owner", o.DocumentID); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "cancel", got, none)
	})
	t.Run("a lost race counts nothing", func(t *testing.T) {
		o := w.mine[3]
		stale, err := w.orders.ByDocument(ctx0, o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		if err := advance(ctx0, f, o, toCreated()); err != nil {
			t.Fatal(err)
		}
		loser := w.fulfiller(staleReads{w.orders, stale}, w.files())
		got := measure(t, func(ctx context.Context) {
			if err := advance(ctx, loser, o, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-LOSER"}); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
				t.Fatalf("the loser's change = %v, want ECONFLICT", err)
			}
		})
		wantMetrics(t, "lost race", got, none)
	})
	t.Run("a move whose answer was lost counts once", func(t *testing.T) {
		o := w.mine[4]
		lost := w.fulfiller(landsThenFails{w.orders}, w.files())
		got := measure(t, func(ctx context.Context) {
			if err := advance(ctx, lost, o, toCreated()); err != nil {
				t.Fatal(err)
			}
		})
		wantMetrics(t, "lost answer", got, map[string]float64{"PapersMoved Status=Created": 1})
	})
}

// TestTestOrdersCountNothing: a test order's own steps (its papers moved,
// its SPECIMEN certificates) and its caller's document add nothing: the
// dashboard shows live business only.
func TestTestOrdersCountNothing(t *testing.T) {
	w := newFulfillmentWorld(t, 0)
	owner := stampduty.TestOwnerOf("owner")
	o := functest.AddOrders(t, w.env, owner, 1)[0]
	f := functest.Fulfiller(w.env)
	f.Specimen = specimen.ForOrder
	got := measure(t, func(ctx context.Context) {
		if _, err := f.UploadDocument(ctx, owner, o.DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); err != nil {
			t.Fatal(err)
		}
		for more := true; more; {
			var err error
			if more, err = f.Step(ctx, owner, o.DocumentID); err != nil {
				t.Fatal(err)
			}
		}
	})
	s, err := w.orders.ByDocument(context.Background(), o.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Fulfillments[0].Status; got != stampduty.StatusPrinted {
		t.Fatalf("the test order is %s after its steps, want Printed", got)
	}
	wantMetrics(t, "test order", got, none)
}

// TestQuotesCount: each quote answered adds one to Quotes; a refused query
// adds nothing.
func TestQuotesCount(t *testing.T) {
	w := newWorld(t)
	quoter := &orders.Quoter{Articles: w.creator.Articles}
	q := func(ctx context.Context, amount string) error {
		_, err := quoter.Quote(ctx, stampduty.QuoteQuery{Purpose: []string{"Rent Agreement"}, State: []string{"Karnataka"}, Amount: []string{amount}})
		return err
	}
	got := measure(t, func(ctx context.Context) {
		for range 2 {
			if err := q(ctx, "200"); err != nil {
				t.Fatal(err)
			}
		}
		if err := q(ctx, "501"); stampduty.ErrorCode(err) != stampduty.EINVALID {
			t.Errorf("a quote above the range: %v, want EINVALID", err)
		}
	})
	wantMetrics(t, "quotes", got, map[string]float64{"Quotes": 2})
}
