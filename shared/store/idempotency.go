package store

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// Idempotency is the idempotency table: key pk = "<owner>#<Idempotency-Key>"
// (owners never contain '#'), one record per key a caller used in the last
// 24 hours. DynamoDB's TTL removes records after their expires time; until it
// does, an expired record counts as absent (see expiry).
type Idempotency struct {
	db    *DB
	table string
}

// Idempotency returns the idempotency table of the given name.
func (db *DB) Idempotency(table string) *Idempotency { return &Idempotency{db: db, table: table} }

// keyItem is an idempotency record as stored, through attributevalue.
type keyItem struct {
	PK          string `dynamodbav:"pk"`
	Fingerprint string `dynamodbav:"fp"`
	State       string `dynamodbav:"st"`
	OrderID     string `dynamodbav:"doc"`
	// Claimed and Lease are Unix milliseconds.
	Claimed int64       `dynamodbav:"claimed"`
	Lease   int64       `dynamodbav:"lease"`
	Expires expiresAttr `dynamodbav:"expires"`
}

// pk is the key of owner's idempotency key.
func pk(owner, key string) string { return owner + "#" + key }

func keyOf(owner, key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": avS(pk(owner, key))}
}

// claimAttempts bounds the conditional writes of one Claim. With one
// definition of expiry (see expiry), a write fails its condition only when a
// live record of another request holds the key; when the consistent read
// that follows finds none, the record went in between (a failed create
// released it, say), and another write will likely win. Losing that race
// claimAttempts times in a row means something is wrong — the key churns
// faster than a claim lands, or the engine and this code disagree about a
// record — and looping would only burn the request's budget in billed calls.
// Claim then answers EUNAVAILABLE (503 with Retry-After): this request could
// not be decided now and may be retried as it is. A 409 would report a
// conflict with another request that no read has seen.
const claimAttempts = 3

// Claim records that a request (body fingerprint fp, order orderID, which
// must be unique to the request) holds the key, unless a live record of
// another request exists. It returns the record now standing and whether
// this call made it. ttl is how long the record counts; lease is how long a
// pending claim is protected from takeover. It makes at most claimAttempts
// writes (and as many reads), then gives up with EUNAVAILABLE.
func (s *Idempotency) Claim(ctx context.Context, owner, key, fp, orderID string, now time.Time, lease, ttl time.Duration) (orders.KeyRecord, bool, error) {
	rec := orders.KeyRecord{Fingerprint: fp, State: orders.KeyPending, OrderID: orderID, Claimed: now, Lease: now.Add(lease), Expires: now.Add(ttl)}
	if orderID == "" {
		// The condition recognises this claim by its orderID: it must have one.
		return orders.KeyRecord{}, false, stampduty.Internal(fmt.Errorf("claim idempotency key: no order id"))
	}
	item, err := attributevalue.MarshalMap(keyItem{PK: pk(owner, key), Fingerprint: fp, State: rec.State, OrderID: orderID,
		Claimed: rec.Claimed.UnixMilli(), Lease: rec.Lease.UnixMilli(), Expires: expiresAttr{end: rec.Expires.Unix(), ok: true}})
	if err != nil {
		return orders.KeyRecord{}, false, stampduty.Internal(fmt.Errorf("encode idempotency record: %w", err))
	}
	live, err := s.claim(ctx, owner, key, item, orderID, now)
	if err != nil {
		return orders.KeyRecord{}, false, err
	}
	if live == nil {
		return rec, true, nil
	}
	var it keyItem
	if err := attributevalue.UnmarshalMap(live, &it); err != nil {
		return orders.KeyRecord{}, false, stampduty.Internal(fmt.Errorf("decode idempotency record: %w", err))
	}
	return it.record(), false, nil
}

// claim writes item, a claim whose doc is orderID, unless the key holds a
// live record of another request, which it then returns (nil: claimed). It makes
// at most claimAttempts writes (and as many reads), then gives up with
// EUNAVAILABLE. Claim and ClaimBatch use it.
func (s *Idempotency) claim(ctx context.Context, owner, key string, item map[string]types.AttributeValue, orderID string, now time.Time) (map[string]types.AttributeValue, error) {
	// The key is free, or it holds this very claim already: when the
	// answer to this PutItem is lost after DynamoDB applied it, the SDK
	// sends it again, and without "doc = :doc" the retry would fail on the
	// request's own record, which Claim would return as another request's
	// live claim (the caller would wait for itself, then answer 409). The
	// orderID is a documentId chosen for this request alone, and the retry
	// rewrites the same bytes, as Orders.Create's slotFree does.
	cond, vals := expiryAt(now).claimable()
	cond += " OR doc = :doc"
	vals[":doc"] = avS(orderID)
	for attempt := 1; ; attempt++ {
		_, err := s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 aws.String(s.table),
			Item:                      item,
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeValues: vals,
		})
		if err == nil {
			return nil, nil
		}
		if !conditionFailed(err) {
			return nil, writeFail("PutItem", err)
		}
		live, err := s.live(ctx, owner, key, now)
		if err != nil || live != nil {
			return live, err
		}
		// Released between the two calls: try again, a few times.
		if attempt == claimAttempts {
			return nil, stampduty.Unavailable(fmt.Errorf("claim idempotency key: %d conditional writes failed, yet no live record was read after any", attempt))
		}
	}
}

// expiry is the one definition of when an idempotency record stops
// counting, so that Get (which applies it in Go) and Claim (which has
// DynamoDB apply it, in its condition) can never disagree about a record —
// when they did, Claim's write failed on a record Get called gone, and Claim
// tried again until the request ran out of time. A record counts while the
// Unix second of now is below its expires attribute, which must be a number:
// expires is in whole seconds (DynamoDB's TTL format), so now is compared
// in whole seconds too, both sides from the same now.Unix(). A record whose
// expires is missing or not a number never counts: DynamoDB's TTL would
// never remove it, and it must not hold its key forever.
type expiry struct{ now int64 }

// expiryAt returns the expiry rule at now.
func expiryAt(now time.Time) expiry { return expiry{now: now.Unix()} }

// counts reports whether a record whose expires attribute is x counts.
func (e expiry) counts(x expiresAttr) bool { return x.ok && e.now < x.end }

// claimable returns the condition, and its values, under which a write may
// replace what the key holds: nothing, or a record that does not count —
// exactly the records for which counts is false. (NOT attribute_type is
// true of a missing attribute as of one of another type.)
func (e expiry) claimable() (string, map[string]types.AttributeValue) {
	return "attribute_not_exists(pk) OR NOT attribute_type(expires, :n) OR expires <= :now",
		map[string]types.AttributeValue{":n": avS("N"), ":now": avN(e.now)}
}

// expiresAttr is a record's expires attribute. Claim writes it in whole
// Unix seconds, DynamoDB's TTL format. Read, end is the first whole Unix
// second at which the record no longer counts (expires itself, rounded up
// when it has a fraction), and ok is false when the attribute is missing
// or not a number: reading it never fails, whatever the item holds. For a
// whole second n, n < expires exactly when n < end, so counts agrees with
// DynamoDB's comparison for any number stored, not only the whole seconds
// Claim writes.
type expiresAttr struct {
	end int64
	ok  bool
}

// MarshalDynamoDBAttributeValue writes end as a number.
func (x expiresAttr) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return avN(x.end), nil
}

// UnmarshalDynamoDBAttributeValue reads v with readExpires; it never fails.
func (x *expiresAttr) UnmarshalDynamoDBAttributeValue(v types.AttributeValue) error {
	*x = readExpires(v)
	return nil
}

// readExpires reads an expires attribute v (nil when there is none).
func readExpires(v types.AttributeValue) expiresAttr {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return expiresAttr{}
	}
	if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		return expiresAttr{end: i, ok: true}
	}
	r, ok := new(big.Rat).SetString(n.Value)
	if !ok {
		return expiresAttr{}
	}
	end := new(big.Int).Quo(r.Num(), r.Denom()) // toward zero: the ceiling when negative
	if r.Sign() > 0 && !r.IsInt() {
		end.Add(end, big.NewInt(1))
	}
	switch {
	case end.IsInt64():
		return expiresAttr{end: end.Int64(), ok: true}
	case end.Sign() > 0:
		return expiresAttr{end: math.MaxInt64, ok: true}
	}
	return expiresAttr{end: math.MinInt64, ok: true}
}

// Get returns the live record of the key (strongly consistent); ok is false
// when there is none or it does not count any more (see expiry).
func (s *Idempotency) Get(ctx context.Context, owner, key string, now time.Time) (orders.KeyRecord, bool, error) {
	item, err := s.live(ctx, owner, key, now)
	if err != nil || item == nil {
		return orders.KeyRecord{}, false, err
	}
	var it keyItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return orders.KeyRecord{}, false, stampduty.Internal(fmt.Errorf("decode idempotency record: %w", err))
	}
	return it.record(), true, nil
}

// record returns the record it stands for.
func (it keyItem) record() orders.KeyRecord {
	return orders.KeyRecord{Fingerprint: it.Fingerprint, State: it.State, OrderID: it.OrderID, Claimed: time.UnixMilli(it.Claimed),
		Lease: time.UnixMilli(it.Lease), Expires: time.Unix(it.Expires.end, 0)}
}

// live returns the item of the key (strongly consistent) when it is a live
// record, nil when there is none or it does not count any more (see expiry).
func (s *Idempotency) live(ctx context.Context, owner, key string, now time.Time) (map[string]types.AttributeValue, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            keyOf(owner, key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fail("GetItem", err)
	}
	// A record that does not count is absent, whatever else it holds.
	if out.Item == nil || !expiryAt(now).counts(readExpires(out.Item["expires"])) {
		return nil, nil
	}
	return out.Item, nil
}

// Complete marks the key's order as created, with orderID, the documentId
// it was stored with (its seq put in the one claimed: a replay answers it).
func (s *Idempotency) Complete(ctx context.Context, owner, key, orderID string) error {
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(owner, key),
		UpdateExpression:          aws.String("SET st = :done, doc = :doc"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":done": avS(orders.KeyDone), ":doc": avS(orderID)},
	})
	if err != nil {
		return fail("UpdateItem", err)
	}
	return nil
}

// Release drops a pending claim whose order was certainly not created, so
// that a retry with the key can go ahead at once.
func (s *Idempotency) Release(ctx context.Context, owner, key, orderID string) error {
	_, err := s.db.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(owner, key),
		ConditionExpression:       aws.String("st = :pending AND doc = :doc"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": avS(orders.KeyPending), ":doc": avS(orderID)},
	})
	if err != nil && !conditionFailed(err) {
		return fail("DeleteItem", err)
	}
	return nil
}

// TakeOver gives a pending claim whose lease ran out to the caller, with a
// new lease; ok is false when another request took it over first.
func (s *Idempotency) TakeOver(ctx context.Context, owner, key string, rec orders.KeyRecord, now time.Time, lease time.Duration) (bool, error) {
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 keyOf(owner, key),
		UpdateExpression:    aws.String("SET lease = :new"),
		ConditionExpression: aws.String("st = :pending AND lease = :old"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": avS(orders.KeyPending), ":old": avN(rec.Lease.UnixMilli()),
			":new": avN(now.Add(lease).UnixMilli()),
		},
	})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fail("UpdateItem", err)
	}
	return true, nil
}
