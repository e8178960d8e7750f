package store

// This file holds numbering a caller's orders: the counter that hands out
// seqs without contention, storing an order at its seq, voiding a seq whose
// create failed, and Find.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// A caller's counter and its list of voided seqs are two small items of
// the orders table, under the caller's partition key and above any order's
// seq, so that the one Query that counts (newest first, Limit 2) reads
// both. They carry none of the index keys, so they are in no index.
const (
	// headSeq is the seq of a caller's counter item: n (seqs reserved),
	// b (the newest seq when the counter began: the caller's orders stored
	// before it), t (Unix ms of the last reservation).
	headSeq = 1<<53 - 1
	// voidsSeq is the seq of a caller's voids item: vs, the set of seqs
	// that hold no order and never will (see Void).
	voidsSeq = headSeq - 1
	// orderSeqs bounds the seqs of orders: every order's is below it.
	orderSeqs = voidsSeq
)

// headItem is a caller's counter item or voids item, through attributevalue.
type headItem struct {
	// Seq is the item's seq (a paper's item's order's: seqOf).
	Seq   int64   `dynamodbav:"-"`
	N     *int64  `dynamodbav:"n"`
	Base  *int64  `dynamodbav:"b"`
	At    int64   `dynamodbav:"t"`
	Voids []int64 `dynamodbav:"vs,numberset"`
}

// Reserve returns a seq for owner's next order, taken for it alone: one
// UpdateItem ADD on the caller's counter item, so concurrent creates of one
// caller never wait for or retry against each other. A caller whose
// counter does not exist yet (its first order, or orders stored before the
// counter: their seqs are dense from 1) seeds it once: the newest stored
// seq, read consistently, is written as the counter's base with
// if_not_exists, so of concurrent seeders the first one's base stands and
// every reservation lands above the orders already stored.
func (s *Orders) Reserve(ctx context.Context, owner string) (int64, error) {
	return s.ReserveN(ctx, owner, 1)
}

// ReserveN reserves n consecutive seqs for owner's next n orders (a batch)
// and returns the last: the seqs are last-n+1 … last, taken for them alone.
// It is Reserve's one UpdateItem with ADD n :n (and the same seeding), so a
// batch of any size costs one counter call: concurrent batches and creates
// of one caller get disjoint ranges, since each ADD is atomic.
func (s *Orders) ReserveN(ctx context.Context, owner string, n int64) (int64, error) {
	if n < 1 || n > orderSeqs/2 {
		return 0, stampduty.Internal(fmt.Errorf("reserve %d seqs", n))
	}
	out, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.key(owner, headSeq),
		UpdateExpression:          aws.String("ADD n :n SET t = :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": avN(n), ":now": avN(time.Now().UnixMilli())},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return 0, fail("UpdateItem", err)
	}
	head, err := decodeHead(out.Attributes)
	if err != nil || head.N == nil {
		return 0, stampduty.Internal(fmt.Errorf("seq counter of a caller: %v", err))
	}
	if head.Base == nil {
		if head.Base, err = s.seed(ctx, owner); err != nil {
			return 0, err
		}
	}
	return *head.Base + *head.N, nil
}

// seed sets owner's counter base to its newest stored seq, unless another
// seeder did first, and returns the base that stands.
func (s *Orders) seed(ctx context.Context, owner string) (*int64, error) {
	newest, err := s.newestStored(ctx, owner)
	if err != nil {
		return nil, err
	}
	out, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.key(owner, headSeq),
		UpdateExpression:          aws.String("SET b = if_not_exists(b, :b)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": avN(newest)},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, fail("UpdateItem", err)
	}
	head, err := decodeHead(out.Attributes)
	if err != nil || head.Base == nil {
		return nil, stampduty.Internal(fmt.Errorf("seq counter base of a caller: %v", err))
	}
	return head.Base, nil
}

// newestStored returns the seq of owner's newest stored order (0 when it
// has none): one consistent Query of one key, below the counter items.
func (s *Orders) newestStored(ctx context.Context, owner string) (int64, error) {
	item, err := s.newestOne(ctx, owner, "seq < :top", avN(orderSeqs), "seq")
	if err != nil || item == nil {
		return 0, err
	}
	head, err := decodeHead(item)
	return head.Seq, err
}

// newestOne returns owner's newest item whose seq meets cond (its value
// :top), projecting proj, with one strongly consistent Query; nil when
// there is none.
func (s *Orders) newestOne(ctx context.Context, owner, cond string, top types.AttributeValue, proj string) (map[string]types.AttributeValue, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o AND " + cond),
		ExpressionAttributeNames:  map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner), ":top": top},
		ProjectionExpression:      aws.String(proj),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, fail("Query", err)
	}
	if len(out.Items) == 0 {
		return nil, nil
	}
	return out.Items[0], nil
}

func decodeHead(item map[string]types.AttributeValue) (headItem, error) {
	var h headItem
	if err := attributevalue.UnmarshalMap(item, &h); err != nil {
		return headItem{}, stampduty.Internal(fmt.Errorf("decode seq counter: %w", err))
	}
	var err error
	h.Seq, err = seqOf(item)
	return h, err
}

func (s *Orders) key(owner string, seq int64) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"owner": avS(owner), "seq": avN(seq)}
}

// Create stores o as owner's newest order at a seq it reserves (Reserve,
// then Put) and returns the seq. The create-order workflow reserves first
// itself, to put the seq in the documentId.
func (s *Orders) Create(ctx context.Context, owner string, o stampduty.Order, events ...stampduty.Pending) (int64, error) {
	seq, err := s.Reserve(ctx, owner)
	if err != nil {
		return 0, err
	}
	return s.Put(ctx, owner, seq, o, events...)
}

// putTries bounds the seqs one Put tries: a reserved seq is taken by
// another order only while instances that number orders the old way
// (reading the newest seq) still run, or when a reader voided it after the
// create outlived any request's time.
const putTries = 3

// Put stores o as owner's order number seq (from Reserve) and returns the
// seq it stored it at. The PutItem is conditioned on the slot being free
// or holding this very order already (slotFree), so a retried PutItem whose
// first answer was lost finds its own order. When the slot holds something
// else, Put reserves another seq (at most putTries in all). When the
// PutItem fails, the seq is voided (Void) so the list never waits for it:
// if the void finds the slot taken, the order was stored after all, and
// Put succeeds. The order's pending events, events, are part of the same
// PutItem (the outbox). An error that may hide a stored order wraps
// orders.ErrOutcomeUnknown. Whatever the network does, one Put stores o at
// most once.
func (s *Orders) Put(ctx context.Context, owner string, seq int64, o stampduty.Order, events ...stampduty.Pending) (int64, error) {
	if o.DocumentID == "" {
		// slotFree recognises the order by its documentId: it must have one.
		return 0, stampduty.Internal(fmt.Errorf("create order: no documentId"))
	}
	if apart(o) {
		// Its papers' items will carry their events' versions: so does
		// its create's (replaceApart).
		events = slices.Clone(events)
		for i := range events {
			events[i].Version = 1
		}
	}
	it := newOrderItem(owner, seq, o, 1, events)
	it.Apart = apart(o)
	// Encoded once: from one attempt to the next only the seq changes.
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return 0, stampduty.Internal(fmt.Errorf("encode order: %w", err))
	}
	for try := 1; ; try++ {
		item["seq"] = avN(seq)
		_, err := s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 aws.String(s.table),
			Item:                      item,
			ConditionExpression:       aws.String(slotFree),
			ExpressionAttributeValues: map[string]types.AttributeValue{":doc": avS(o.DocumentID)},
		})
		if err == nil {
			return seq, nil
		}
		if !conditionFailed(err) {
			return s.voidFailed(ctx, owner, seq, o.DocumentID, err)
		}
		// The slot holds another order or a void: this order is stored
		// nowhere yet (a failed condition writes nothing, and each earlier
		// PutItem of this loop failed its condition too).
		if try == putTries {
			return 0, stampduty.Unavailable(fmt.Errorf("create order: %d reserved seqs were taken", try))
		}
		if seq, err = s.Reserve(ctx, owner); err != nil {
			return 0, err
		}
	}
}

// voidFailed voids seq after its order's PutItem failed with putErr, in a
// context of its own (the request's may be what ran out). When the void
// lands, the order is certainly not stored and can never be: the error
// says so (no ErrOutcomeUnknown). When the slot turns out to hold the
// order, Put succeeded after all.
func (s *Orders) voidFailed(ctx context.Context, owner string, seq int64, doc string, putErr error) (int64, error) {
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	voided, err := s.Void(vctx, owner, seq)
	switch {
	case err != nil:
		return 0, writeFail("PutItem", putErr)
	case voided:
		return 0, fail("PutItem", putErr)
	}
	if held, err := s.holds(vctx, owner, seq, doc); err == nil && held {
		return seq, nil
	}
	return 0, writeFail("PutItem", putErr)
}

// holds reports whether owner's slot seq holds the order doc: a consistent
// Query of that one key.
func (s *Orders) holds(ctx context.Context, owner string, seq int64, doc string) (bool, error) {
	item, err := s.newestOne(ctx, owner, "seq = :top", avN(seq), "doc")
	if err != nil || item == nil {
		return false, err
	}
	var it struct {
		Doc string `dynamodbav:"doc"`
	}
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return false, stampduty.Internal(fmt.Errorf("decode order: %w", err))
	}
	return it.Doc == doc, nil
}

// Void marks owner's seq as holding no order, for good, and reports
// whether it did: false when the slot holds an order (or is void
// already). A void is a marker item at the seq (vd, and nothing an index
// reads), written only where nothing is (UpdateItem with
// attribute_not_exists), so a late PutItem of the order fails its
// condition instead of landing unseen; then the seq is added to the
// caller's voids item (ADD to a set: doing it twice is doing it once),
// which the count subtracts and the pages skip. A marker whose set entry
// is missing (the second write failed) is added by the next reader that
// meets it. A test owner's marker expires as a test order would, created
// now (testExpires): it guards against a late PutItem for seconds, and
// the voids item keeps the seq void once it is gone.
func (s *Orders) Void(ctx context.Context, owner string, seq int64) (bool, error) {
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.key(owner, seq),
		UpdateExpression:          aws.String("SET vd = :t"),
		ConditionExpression:       aws.String("attribute_not_exists(seq)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}},
	}
	if exp := testExpires(owner, stampduty.FormatTime(time.Now())); exp > 0 {
		in.UpdateExpression = aws.String("SET vd = :t, " + TTLAttribute + " = :exp")
		in.ExpressionAttributeValues[":exp"] = avN(exp)
	}
	_, err := s.db.client.UpdateItem(ctx, in)
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fail("UpdateItem", err)
	}
	return true, s.listVoid(ctx, owner, seq)
}

// listVoid adds seq to owner's voids item.
func (s *Orders) listVoid(ctx context.Context, owner string, seq int64) error {
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.key(owner, voidsSeq),
		UpdateExpression:          aws.String("ADD vs :s"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberNS{Value: []string{fmt.Sprint(seq)}}},
	})
	if err != nil {
		return fail("UpdateItem", err)
	}
	return nil
}

// unlistVoids removes seqs from owner's voids item.
func (s *Orders) unlistVoids(ctx context.Context, owner string, seqs []int64) error {
	set := make([]string, len(seqs))
	for i, v := range seqs {
		set[i] = fmt.Sprint(v)
	}
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.key(owner, voidsSeq),
		UpdateExpression:          aws.String("DELETE vs :s"),
		ConditionExpression:       aws.String("attribute_exists(seq)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberNS{Value: set}},
	})
	if err != nil && !conditionFailed(err) {
		return fail("UpdateItem", err)
	}
	return nil
}

// slotFree is the condition of an order's PutItem: the seq is free, or it
// holds this very order already (:doc is its documentId). The second half is
// what makes a create store its order at most once. When the answer to a
// PutItem is lost after DynamoDB applied it (the connection dropped, or the
// answer came after AttemptTimeout), the SDK sends the same request again; a
// plain attribute_not_exists(seq) would then fail on the order's own item,
// and Put, taking it for another request's, would store the order a
// second time at another seq. With this condition the retry succeeds
// instead, rewriting the item with the very same bytes (the SDK serializes a
// request once and sends that body on every attempt), so nothing changes.
//
// A documentId has at least 72 bits from crypto/rand, chosen for this order
// alone, so no other order can match :doc; a void marker has no doc. The
// alternatives are worse: a consistent GetItem of the slot after each
// failed condition costs a read, and ReturnValuesOnConditionCheckFailure or
// a transaction would do in one call what this does, but dynalite (the
// local engine the tests and the local stack run) has neither, and the same
// code must run on both.
const slotFree = "attribute_not_exists(seq) OR doc = :doc"

// Find returns the documentId of owner's order that doc names
// (stampduty.SameOrderID: the id an Idempotency-Key's claim recorded, before
// the seq was put in it) if it was created at or after since, reading the
// newest orders first and stopping at the first one older than since. It
// is how an interrupted create is checked: its order, if stored, is among
// the few newest.
func (s *Orders) Find(ctx context.Context, owner, doc string, since time.Time) (string, bool, error) {
	cutoff := stampduty.FormatTime(since)
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o AND seq < :top"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner", "#at": "at"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner), ":top": avN(orderSeqs)},
		ProjectionExpression:      aws.String("doc, #at, vd"),
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(25),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return "", false, fail("Query", err)
		}
		var items []struct {
			Doc  string `dynamodbav:"doc"`
			At   string `dynamodbav:"at"`
			Void bool   `dynamodbav:"vd"`
		}
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			return "", false, stampduty.Internal(fmt.Errorf("decode orders: %w", err))
		}
		for _, it := range items {
			switch {
			case it.Void:
			case stampduty.SameOrderID(it.Doc, doc):
				return it.Doc, true, nil
			case it.At < cutoff:
				return "", false, nil
			}
		}
	}
	return "", false, nil
}
