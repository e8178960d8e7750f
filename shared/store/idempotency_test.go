package store_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// claimBudget bounds each Claim of these tests, so that one that loops fails
// in seconds rather than hanging. The lease and TTL are the create workflow's.
const claimBudget = 2 * time.Second

// putKeyRecord writes an idempotency record of owner's key as it is, around
// the store: the attributes Claim writes, with expires as given (nil: none).
func putKeyRecord(t *testing.T, env *storetest.Env, owner, key, doc string, now time.Time, expires types.AttributeValue) {
	t.Helper()
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: owner + "#" + key},
		"fp": &types.AttributeValueMemberS{Value: "fp-" + doc}, "st": &types.AttributeValueMemberS{Value: orders.KeyPending},
		"doc": &types.AttributeValueMemberS{Value: doc}, "claimed": n(now.UnixMilli()), "lease": n(now.Add(orders.KeyLease).UnixMilli()),
	}
	if expires != nil {
		item["expires"] = expires
	}
	putItem(t, env, "IdempotencyTable", item)
}

// claim runs one Claim within claimBudget and returns what it returned and
// the DynamoDB calls it made, as the proxy saw them.
func claim(t *testing.T, keys *store.Idempotency, proxy *storetest.Proxy, owner, key, doc string, now time.Time) (orders.KeyRecord, bool, []storetest.ProxyCall, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), claimBudget)
	defer cancel()
	proxy.Take()
	rec, claimed, err := keys.Claim(ctx, owner, key, "fp-"+doc, doc, now, orders.KeyLease, orders.KeyTTL)
	return rec, claimed, proxy.Take(), err
}

// TestClaimAtTheExpirySecond: a record counts while now.Unix() < expires.
// In the very second it expires (now.Unix() == expires, now with a
// fraction of a second) Get and Claim must agree that it is gone, so that
// Claim takes the key over in one write, instead of the two disagreeing and
// Claim trying again until the request's time runs out.
func TestClaimAtTheExpirySecond(t *testing.T) {
	env := storetest.New(t)
	db, proxy := openThroughProxy(t, env)
	keys := db.Idempotency(env.Table("IdempotencyTable"))
	now := time.Unix(time.Now().Unix(), 600*int64(time.Millisecond))
	putKeyRecord(t, env, "alice", "k", "old", now.Add(-time.Minute), &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)})

	rec, claimed, calls, err := claim(t, keys, proxy, "alice", "k", "new", now)
	t.Logf("Claim at the expiry second: claimed %v, err %v, %d calls: %s", claimed, err, len(calls), env.Operations(calls))
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if got, want := len(calls), 4; got > want {
		t.Errorf("Claim made %d DynamoDB calls, want at most %d", got, want)
	}
	if !claimed || rec.OrderID != "new" {
		t.Errorf("Claim = %+v, %v; want the key claimed for order new", rec, claimed)
	}

	// The new record counts, for Get and for a rival Claim in the same second.
	got, live, err := keys.Get(context.Background(), "alice", "k", now)
	if err != nil || !live || got.OrderID != "new" {
		t.Errorf("Get = %+v, %v, %v; want the new record, live", got, live, err)
	}
	rec, claimed, _, err = claim(t, keys, proxy, "alice", "k", "rival", now)
	if err != nil || claimed || rec.OrderID != "new" {
		t.Errorf("rival Claim = %+v, %v, %v; want the new record, not claimed", rec, claimed, err)
	}
}

// TestClaimRecordWithoutExpiry: a record whose expires is missing or not a
// number (written by hand, or by an older version) never expires through
// DynamoDB's TTL, so it must not hold its key forever: it counts as expired
// for Get and Claim alike.
func TestClaimRecordWithoutExpiry(t *testing.T) {
	env := storetest.New(t)
	db, proxy := openThroughProxy(t, env)
	keys := db.Idempotency(env.Table("IdempotencyTable"))
	now := time.Now()
	for _, tc := range []struct {
		name    string
		expires types.AttributeValue
	}{
		{"NoExpires", nil},
		{"ExpiresAString", &types.AttributeValueMemberS{Value: strconv.FormatInt(now.Add(time.Hour).Unix(), 10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			putKeyRecord(t, env, "alice", tc.name, "old", now, tc.expires)
			if rec, live, err := keys.Get(context.Background(), "alice", tc.name, now); err != nil || live {
				t.Errorf("Get = %+v, %v, %v; want not live", rec, live, err)
			}
			rec, claimed, calls, err := claim(t, keys, proxy, "alice", tc.name, "new", now)
			t.Logf("claimed %v, err %v, %d calls: %s", claimed, err, len(calls), env.Operations(calls))
			if err != nil {
				t.Fatalf("Claim: %v", err)
			}
			if !claimed || rec.OrderID != "new" {
				t.Errorf("Claim = %+v, %v; want the key claimed for order new", rec, claimed)
			}
			if got, live, err := keys.Get(context.Background(), "alice", tc.name, now); err != nil || !live || got.OrderID != "new" {
				t.Errorf("Get after Claim = %+v, %v, %v; want the new record, live", got, live, err)
			}
		})
	}
}

// TestClaimGivesUp: when every claim's condition fails and yet every read
// finds no live record (which only a record changing between the two calls
// can do), Claim gives up after a few tries with a 503 kind of error, long
// before the request's time runs out.
func TestClaimGivesUp(t *testing.T) {
	env := storetest.New(t)
	db, proxy := openThroughProxy(t, env)
	keys := db.Idempotency(env.Table("IdempotencyTable"))
	table := env.Table("IdempotencyTable")
	proxy.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
		if c.Operation == "PutItem" && c.Table == table {
			return &storetest.Fault{Status: 400, Type: "ConditionalCheckFailedException"}
		}
		return nil
	})

	_, claimed, calls, err := claim(t, keys, proxy, "alice", "k", "new", time.Now())
	t.Logf("claimed %v, err %v, %d calls: %s", claimed, err, len(calls), env.Operations(calls))
	if claimed {
		t.Fatal("Claim claimed the key, though every condition failed")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Claim ran until its deadline: %v", err)
	}
	if got, want := stampduty.ErrorCode(err), stampduty.EUNAVAILABLE; got != want {
		t.Errorf("code = %q, want %q (%v)", got, want, err)
	}
	if got, want := stampduty.ErrorMessage(err), "Service Unavailable"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if got, want := env.Operations(calls), "GetItem:IdempotencyTable=3 PutItem:IdempotencyTable=3"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
}

// TestGetAndClaimAgreeOnExpiry: for any expires a record may hold, Get
// calling the record live and Claim's condition refusing to replace it are
// the same thing, decided by the engine's comparison and by Go's alike: a
// Claim makes one write when the record is gone, or one write and one read
// when it is live, and claims the key exactly when Get called it gone.
func TestGetAndClaimAgreeOnExpiry(t *testing.T) {
	env := storetest.New(t)
	db, proxy := openThroughProxy(t, env)
	keys := db.Idempotency(env.Table("IdempotencyTable"))
	now := time.Unix(time.Now().Unix(), 250*int64(time.Millisecond))
	sec := now.Unix()
	num := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	at := func(d int64) types.AttributeValue { return num(strconv.FormatInt(sec+d, 10)) }
	for _, tc := range []struct {
		name    string
		expires types.AttributeValue
		live    bool
	}{
		{"SecondBefore", at(-1), false},
		{"SameSecond", at(0), false},
		{"SecondAfter", at(1), true},
		{"HalfSecondBefore", num(strconv.FormatInt(sec-1, 10) + ".5"), false},
		{"HalfSecondAfter", num(strconv.FormatInt(sec, 10) + ".5"), true},
		{"TinyFractionAfter", num(strconv.FormatInt(sec, 10) + ".000000000000000000001"), true},
		{"Exponent", num("1e11"), true},
		{"Zero", num("0"), false},
		{"Negative", num("-1.5"), false},
		{"Huge", num("1e100"), true},
		{"Missing", nil, false},
		{"String", &types.AttributeValueMemberS{Value: strconv.FormatInt(sec+3600, 10)}, false},
		{"Bool", &types.AttributeValueMemberBOOL{Value: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			putKeyRecord(t, env, "alice", tc.name, "old", now, tc.expires)
			_, live, err := keys.Get(context.Background(), "alice", tc.name, now)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if got, want := live, tc.live; got != want {
				t.Errorf("Get live = %v, want %v", got, want)
			}
			rec, claimed, calls, err := claim(t, keys, proxy, "alice", tc.name, "new", now)
			if err != nil {
				t.Fatalf("Claim: %v (%d calls: %s)", err, len(calls), env.Operations(calls))
			}
			if got, want := claimed, !tc.live; got != want {
				t.Errorf("Claim claimed = %v, want %v (record %+v)", got, want, rec)
			}
			want := "PutItem:IdempotencyTable=1"
			if tc.live {
				want = "GetItem:IdempotencyTable=1 PutItem:IdempotencyTable=1"
			}
			if got := env.Operations(calls); got != want {
				t.Errorf("Claim calls = %s, want %s", got, want)
			}
		})
	}
}
