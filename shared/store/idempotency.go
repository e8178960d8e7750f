package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/rules"
)

// Idempotency is the idempotency table: key pk = "<owner>#<Idempotency-Key>"
// (owners never contain '#'), one record per key a caller used in the last
// 24 hours. DynamoDB's TTL removes records after their expires time; until it
// does, an expired record counts as absent.
type Idempotency struct {
	db    *DB
	table string
}

// Idempotency returns the idempotency table of the given name.
func (db *DB) Idempotency(table string) *Idempotency { return &Idempotency{db: db, table: table} }

// The states of an idempotency record.
const (
	// KeyPending: a request holds the key and is creating its order.
	KeyPending = "pending"
	// KeyDone: the order was created; replays answer with it.
	KeyDone = "done"
)

// KeyRecord is what a key stands for.
type KeyRecord struct {
	// Fingerprint identifies the request body the key was first used with.
	Fingerprint string
	State       string
	// OrderID is the documentId of the key's order (chosen before it is created).
	OrderID string
	// Claimed is when the request holding the key claimed it.
	Claimed time.Time
	// Lease is when a pending claim may be taken over: its holder is gone by then.
	Lease time.Time
	// Expires is when the record stops counting.
	Expires time.Time
}

func keyOf(owner, key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": avS(owner + "#" + key)}
}

func unixMilli(t time.Time) types.AttributeValue { return avN(t.UnixMilli()) }

// Claim records that a request (body fingerprint fp, order orderID) holds
// the key, unless a live record exists. It returns the record now standing
// and whether this call made it. ttl is how long the record counts; lease is
// how long a pending claim is protected from takeover.
func (s *Idempotency) Claim(ctx context.Context, owner, key, fp, orderID string, now time.Time, lease, ttl time.Duration) (KeyRecord, bool, error) {
	rec := KeyRecord{Fingerprint: fp, State: KeyPending, OrderID: orderID, Claimed: now, Lease: now.Add(lease), Expires: now.Add(ttl)}
	item := keyOf(owner, key)
	item["fp"], item["st"], item["doc"] = avS(fp), avS(rec.State), avS(orderID)
	item["claimed"], item["lease"] = unixMilli(rec.Claimed), unixMilli(rec.Lease)
	item["expires"] = avN(rec.Expires.Unix())
	_, err := s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.table),
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR expires < :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": avN(now.Unix())},
		ReturnConsumedCapacity:    s.db.capacity(),
	})
	if err == nil {
		return rec, true, nil
	}
	if !conditionFailed(err) {
		return KeyRecord{}, false, writeFail("PutItem", err)
	}
	old, ok, err := s.Get(ctx, owner, key, now)
	if err != nil {
		return KeyRecord{}, false, err
	}
	if !ok { // expired or released between the two calls: try again
		return s.Claim(ctx, owner, key, fp, orderID, now, lease, ttl)
	}
	return old, false, nil
}

// Get returns the live record of the key (strongly consistent); ok is false
// when there is none or it has expired.
func (s *Idempotency) Get(ctx context.Context, owner, key string, now time.Time) (KeyRecord, bool, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:              aws.String(s.table),
		Key:                    keyOf(owner, key),
		ConsistentRead:         aws.Bool(true),
		ReturnConsumedCapacity: s.db.capacity(),
	})
	if err != nil {
		return KeyRecord{}, false, fail("GetItem", err)
	}
	if out.Item == nil {
		return KeyRecord{}, false, nil
	}
	var derr error
	r := newReader(out.Item, &derr)
	rec := KeyRecord{Fingerprint: r.str("fp"), State: r.str("st"), OrderID: r.str("doc"),
		Claimed: time.UnixMilli(r.num("claimed")), Lease: time.UnixMilli(r.num("lease")), Expires: time.Unix(r.num("expires"), 0)}
	if derr != nil {
		return KeyRecord{}, false, &rules.Error{Code: rules.EINTERNAL, Message: "Internal Server Error", Err: fmt.Errorf("decode idempotency record: %w", derr)}
	}
	if !rec.Expires.After(now) {
		return KeyRecord{}, false, nil
	}
	return rec, true, nil
}

// Complete marks the key's order as created.
func (s *Idempotency) Complete(ctx context.Context, owner, key string) error {
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(owner, key),
		UpdateExpression:          aws.String("SET st = :done"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":done": avS(KeyDone)},
		ReturnConsumedCapacity:    s.db.capacity(),
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
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": avS(KeyPending), ":doc": avS(orderID)},
		ReturnConsumedCapacity:    s.db.capacity(),
	})
	if err != nil && !conditionFailed(err) {
		return fail("DeleteItem", err)
	}
	return nil
}

// TakeOver gives a pending claim whose lease ran out to the caller, with a
// new lease; ok is false when another request took it over first.
func (s *Idempotency) TakeOver(ctx context.Context, owner, key string, rec KeyRecord, now time.Time, lease time.Duration) (bool, error) {
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 keyOf(owner, key),
		UpdateExpression:    aws.String("SET lease = :new"),
		ConditionExpression: aws.String("st = :pending AND lease = :old"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": avS(KeyPending), ":old": avN(rec.Lease.UnixMilli()),
			":new": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(lease).UnixMilli(), 10)},
		},
		ReturnConsumedCapacity: s.db.capacity(),
	})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fail("UpdateItem", err)
	}
	return true, nil
}
