package orders_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// world is a Creator over a fresh set of tables with the sample catalogue,
// and the tables themselves, to look behind the workflow.
type world struct {
	env     *storetest.Env
	creator *orders.Creator
	orders  *store.Orders
	keys    *store.Idempotency
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := storetest.New(t)
	functest.Seed(t, env)
	db := env.DB()
	w := &world{env: env, orders: db.Orders(env.Table("OrdersTable")), keys: db.Idempotency(env.Table("IdempotencyTable"))}
	w.creator = &orders.Creator{
		Articles: db.Articles(env.Table("ArticlesTable")),
		IDs:      db.IDs(env.Table("CountersTable"), store.IDBlock),
		Orders:   w.orders,
		Keys:     w.keys,
		Now:      time.Now,
	}
	return w
}

// body is a create-order body for the sample article "Rent Agreement" in
// Karnataka (range 100-500), changed by edits (nil deletes), as the edge
// hands it over: a decoded value per field.
func body(t *testing.T, edits map[string]any) *stampduty.OrderBody {
	t.Helper()
	m := map[string]any{
		"amount": 200, "considerationPrice": 0, "purpose": "Rent Agreement", "state": "Karnataka",
		"paidBy": "First Party", "firstPartyMobileNumber": "9876543210",
		"firstPartyName": "Asha Rao", "secondPartyName": "Vikram Shah",
	}
	for k, v := range edits {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	var fields []stampduty.Field
	for k, v := range m {
		var val stampduty.Value
		switch v := v.(type) {
		case string:
			val = stampduty.Value{Kind: stampduty.String, Text: v}
		case int:
			val = stampduty.Value{Kind: stampduty.Number, Text: strconv.Itoa(v)}
		default:
			t.Fatalf("body: %s is a %T", k, v)
		}
		fields = append(fields, stampduty.Field{Name: k, Value: val})
	}
	return stampduty.NewOrderBody(fields)
}

// count is how many orders owner has.
func (w *world) count(t *testing.T, owner string) int {
	t.Helper()
	n, err := w.orders.Count(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// create creates an order of owner from the sample body, with key (nil:
// none), that must succeed, and returns its documentId.
func (w *world) create(t *testing.T, owner string, key *orders.Key) string {
	t.Helper()
	doc, err := w.creator.Create(context.Background(), owner, body(t, nil), key)
	if err != nil {
		t.Fatalf("Create for %s: %v", owner, err)
	}
	return doc
}

// checkCount checks that owner has want orders.
func (w *world) checkCount(t *testing.T, owner string, want int) {
	t.Helper()
	if got := w.count(t, owner); got != want {
		t.Errorf("%s has %d orders, want %d", owner, got, want)
	}
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)

	t.Run("StoresTheOrder", func(t *testing.T) {
		doc := w.create(t, "alice", nil)
		page, _, err := w.orders.Page(ctx, "alice", 1, 1)
		if err != nil || len(page) != 1 {
			t.Fatalf("Page = %v, %v", page, err)
		}
		o := page[0]
		if got, want := o.DocumentID, doc; got != want {
			t.Errorf("documentId = %q, want %q", got, want)
		}
		if got, want := o.StampDuty.Amount, int64(200); got != want {
			t.Errorf("amount = %d, want %d", got, want)
		}
		if got, want := o.StampDuty.StatePurpose.PurposeName, "Rent Agreement"; got != want {
			t.Errorf("purpose = %q, want %q", got, want)
		}
		if got, want := o.Fulfillments[0].Status, stampduty.StatusPending; got != want {
			t.Errorf("status = %q, want %q", got, want)
		}
	})
	t.Run("PricesFromTheConsiderationPrice", func(t *testing.T) {
		doc, err := w.creator.Create(ctx, "prices", body(t, map[string]any{"purpose": "Sale Deed", "state": "Delhi", "amount": 0, "considerationPrice": 2500000}), nil)
		if err != nil {
			t.Fatal(err)
		}
		page, _, err := w.orders.Page(ctx, "prices", 1, 1)
		if err != nil || len(page) != 1 || page[0].DocumentID != doc {
			t.Fatalf("Page = %v, %v", page, err)
		}
		if got, want := page[0].StampDuty.ConsiderationPrice, int64(2500000); got != want {
			t.Errorf("consideration price = %d, want %d", got, want)
		}
		if got := page[0].StampDuty.Amount; got <= 0 {
			t.Errorf("amount = %d, want the computed duty", got)
		}
	})
	for _, tc := range []struct {
		name  string
		edits map[string]any
		code  stampduty.Code
	}{
		{"ErrNoArticleBeforeFields", map[string]any{"purpose": "Moon Lease", "firstPartyName": ""}, stampduty.ENOTFOUND},
		{"ErrImpossiblePurpose", map[string]any{"purpose": "Rent\u202e"}, stampduty.ENOTFOUND},
		{"ErrFields", map[string]any{"firstPartyName": ""}, stampduty.EINVALID},
		{"ErrPurposeNotAString", map[string]any{"purpose": 5}, stampduty.EINVALID},
		{"ErrAmountRule", map[string]any{"amount": 1}, stampduty.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := w.count(t, "refused")
			_, err := w.creator.Create(ctx, "refused", body(t, tc.edits), nil)
			if got, want := stampduty.ErrorCode(err), tc.code; got != want {
				t.Fatalf("Create = %v, want code %s", err, want)
			}
			if got, want := w.count(t, "refused"), before; got != want {
				t.Errorf("%d orders after a refused create, want %d", got, want)
			}
		})
	}
}

func TestCreateWithKey(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	key := func(v, fp string) *orders.Key { return &orders.Key{Value: v, Fingerprint: fp} }

	t.Run("ReplayCreatesNothing", func(t *testing.T) {
		first := w.create(t, "bob", key("k1", "fp1"))
		if again := w.create(t, "bob", key("k1", "fp1")); again != first {
			t.Errorf("replay answered %q, want %q", again, first)
		}
		w.checkCount(t, "bob", 1)
	})
	t.Run("ErrOtherBodyIsAConflict", func(t *testing.T) {
		_, err := w.creator.Create(ctx, "bob", body(t, nil), key("k1", "fp2"))
		if got, want := stampduty.ErrorCode(err), stampduty.ECONFLICT; got != want {
			t.Fatalf("Create = %v, want %s", err, want)
		}
	})
	t.Run("KeysArePerCaller", func(t *testing.T) {
		w.create(t, "carol", key("k1", "fp2"))
		w.checkCount(t, "carol", 1)
	})
	t.Run("ErrHeldKeyIsAConflictAfterWaiting", func(t *testing.T) {
		now := time.Now()
		if _, ok, err := w.keys.Claim(ctx, "dave", "held", "fp", "heldxxxxxxxxxxxxxxxxxxxx", now, time.Minute, orders.KeyTTL); err != nil || !ok {
			t.Fatalf("Claim = %v, %v", ok, err)
		}
		start := time.Now()
		_, err := w.creator.Create(ctx, "dave", body(t, nil), key("held", "fp"))
		if got, want := stampduty.ErrorCode(err), stampduty.ECONFLICT; got != want {
			t.Fatalf("Create = %v, want %s", err, want)
		}
		if waited := time.Since(start); waited < orders.KeyWait {
			t.Errorf("answered after %v, want a wait of %v for the holder", waited, orders.KeyWait)
		}
		w.checkCount(t, "dave", 0)
	})
	t.Run("VanishedHolderIsTakenOver", func(t *testing.T) {
		// A holder claimed the key and died before storing its order: after
		// the lease its retry creates the order under the holder's documentId,
		// with the seq it is stored at put in (its first: 1).
		claimed := time.Now().Add(-orders.KeyLease - time.Second)
		const doc = "vanishedxxxxxxxxxxxxxxxx"
		if _, ok, err := w.keys.Claim(ctx, "erin", "gone", "fp", doc, claimed, orders.KeyLease, orders.KeyTTL); err != nil || !ok {
			t.Fatalf("Claim = %v, %v", ok, err)
		}
		if got, want := w.create(t, "erin", key("gone", "fp")), stampduty.WithSeq(doc, 1); got != want {
			t.Errorf("orderId = %q, want the holder's %q as %q", got, doc, want)
		}
		w.checkCount(t, "erin", 1)
		rec, live, err := w.keys.Get(ctx, "erin", "gone", time.Now())
		if err != nil || !live || rec.State != orders.KeyDone || rec.OrderID != stampduty.WithSeq(doc, 1) {
			t.Errorf("key record = %+v, live %v, %v; want done with the stored documentId", rec, live, err)
		}
	})
	t.Run("CertainFailureReleasesTheKey", func(t *testing.T) {
		failing := *w.creator
		failing.Orders = refusingStore{}
		if _, err := failing.Create(ctx, "frank", body(t, nil), key("retry-me", "fp")); stampduty.ErrorCode(err) != stampduty.EUNAVAILABLE {
			t.Fatalf("Create = %v, want the store's refusal", err)
		}
		if _, live, err := w.keys.Get(ctx, "frank", "retry-me", time.Now()); err != nil || live {
			t.Fatalf("key live = %v, %v after a certain failure, want released", live, err)
		}
		w.create(t, "frank", key("retry-me", "fp")) // the retry
	})
	t.Run("UnknownOutcomeKeepsTheKey", func(t *testing.T) {
		failing := *w.creator
		failing.Orders = refusingStore{unknown: true}
		if _, err := failing.Create(ctx, "gina", body(t, nil), key("maybe", "fp")); err == nil {
			t.Fatal("Create succeeded over a failing store")
		}
		rec, live, err := w.keys.Get(ctx, "gina", "maybe", time.Now())
		if err != nil || !live || rec.State != orders.KeyPending {
			t.Errorf("key record = %+v, live %v, %v; want pending until its lease ends", rec, live, err)
		}
	})
}

// refusingStore fails every create: certainly (DynamoDB refused it) or, with
// unknown, with an outcome the caller cannot know.
type refusingStore struct{ unknown bool }

func (refusingStore) Reserve(context.Context, string) (int64, error)    { return 1, nil }
func (refusingStore) Void(context.Context, string, int64) (bool, error) { return true, nil }

func (s refusingStore) Put(context.Context, string, int64, stampduty.Order, ...stampduty.Pending) (int64, error) {
	err := error(&stampduty.Error{Code: stampduty.EUNAVAILABLE, Message: "Service Unavailable", Err: errors.New("refused")})
	if s.unknown {
		err = &stampduty.Error{Code: stampduty.EUNAVAILABLE, Message: "Service Unavailable", Err: orders.ErrOutcomeUnknown}
	}
	return 0, err
}

func (refusingStore) Find(context.Context, string, string, time.Time) (string, bool, error) {
	return "", false, nil
}

func TestCheckKey(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		ok        bool
	}{
		{"UUID", "3b1f0c9e-5a7d-4e2b-9c1a-7f0e2d4b6a8c", true},
		{"Printable", `a b~!"#$%&'()*+,-./:;<=>?@[\]^_{|}`, true},
		{"Longest", stringOf('k', 255), true},
		{"ErrEmpty", "", false},
		{"ErrTooLong", stringOf('k', 256), false},
		{"ErrTab", "a\tb", false},
		{"ErrNonASCII", "clé", false},
		{"ErrDel", "a\x7f", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := orders.CheckKey(tc.key)
			if got := err == nil; got != tc.ok {
				t.Fatalf("CheckKey(%q) = %v, want ok %v", tc.key, err, tc.ok)
			}
			if err != nil && stampduty.ErrorCode(err) != stampduty.EINVALID {
				t.Errorf("code = %s, want %s", stampduty.ErrorCode(err), stampduty.EINVALID)
			}
		})
	}
}

func stringOf(c byte, n int) string { return strings.Repeat(string(c), n) }

// TestQuoteAgreesWithCreate asks for a quote and creates an order with the
// same purpose, state, amount and consideration price, over every article
// of the sample catalogue and a range of values: both refuse with the same
// status and message, or the order stores the amount the quote gave. The
// quote reads its versioned cache, the create its own lookup, so this also
// checks that both find the same article.
func TestQuoteAgreesWithCreate(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	env := storetest.New(t)
	functest.Seed(t, env)
	versions := store.NewSnapshotCache(env.DB().Catalogue(env.Table("CatalogueTable")), nil, time.Minute)
	quoter := &orders.Quoter{Articles: store.NewVersionedArticleCache(env.DB().Articles(env.Table("ArticlesTable")), versions)}
	arts, err := env.DB().Articles(env.Table("ArticlesTable")).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys := [][2]string{{"Moon Lease", "Karnataka"}, {"Affidavit", "Atlantis"}, {" Affidavit ", "Karnataka"}, {"", "Goa"}}
	for _, a := range arts {
		keys = append(keys, [2]string{a.PurposeName, a.State})
	}
	owner := "quote-agrees"
	for _, k := range keys {
		for _, amount := range []int64{0, 3, 20, 99, 100, 200, 500, 501, 1000, 999999999999999} {
			for _, price := range []int64{0, 1, 101, 2500000, 999999999999999} {
				q, qerr := quoter.Quote(ctx, stampduty.QuoteQuery{Purpose: []string{k[0]}, State: []string{k[1]},
					Amount: []string{strconv.FormatInt(amount, 10)}, ConsiderationPrice: []string{strconv.FormatInt(price, 10)}})
				_, cerr := w.creator.Create(ctx, owner, body(t, map[string]any{"purpose": k[0], "state": k[1], "amount": int(amount), "considerationPrice": int(price)}), nil)
				name := k[0] + "/" + k[1] + " amount " + strconv.FormatInt(amount, 10) + " price " + strconv.FormatInt(price, 10)
				if stampduty.ErrorCode(qerr) != stampduty.ErrorCode(cerr) || stampduty.ErrorMessage(qerr) != stampduty.ErrorMessage(cerr) {
					t.Errorf("%s: quote %v, create %v", name, qerr, cerr)
					continue
				}
				if cerr != nil {
					continue
				}
				newest, _, err := w.orders.Page(ctx, owner, 1, 1)
				if err != nil {
					t.Fatal(err)
				}
				if q.Amount == nil || *q.Amount != newest[0].StampDuty.Amount {
					t.Errorf("%s: quote %+v, the order stored %d", name, q.Amount, newest[0].StampDuty.Amount)
				}
			}
		}
	}
}
