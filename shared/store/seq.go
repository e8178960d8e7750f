package store

// This file holds creating an order at its owner's next seq, and the
// reads by seq: the count, the pages of the newest-first list, and Find.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// Create stores o as owner's newest order and returns its seq. It reads the
// newest seq (a strongly consistent Query of one key) and puts the order at
// the next one on condition that the slot is free or already holds this very
// order (see slotFree). When another order took that slot first, every slot
// below it is taken too, so it tries the next one straight away; every few
// misses it waits a little (jittered) and reads the newest seq again to jump
// over a run of concurrent creates. It keeps trying while ctx allows, then
// fails with EUNAVAILABLE. The order's pending events, events, are part of
// the same PutItem (the outbox). An error that may hide a stored order wraps
// orders.ErrOutcomeUnknown. Whatever the network does, one Create stores o at most
// once.
func (s *Orders) Create(ctx context.Context, owner string, o stampduty.Order, events ...stampduty.Pending) (int64, error) {
	if o.DocumentID == "" {
		// slotFree recognises the order by its documentId: it must have one.
		return 0, stampduty.Internal(fmt.Errorf("create order: no documentId"))
	}
	n, err := s.Count(ctx, owner)
	if err != nil {
		return 0, err
	}
	seq := int64(n) + 1
	// Encoded once: from one attempt to the next only the seq changes.
	item, err := attributevalue.MarshalMap(newOrderItem(owner, seq, o, 1, events))
	if err != nil {
		return 0, stampduty.Internal(fmt.Errorf("encode order: %w", err))
	}
	for miss := 0; ; miss++ {
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
			return 0, writeFail("PutItem", err)
		}
		// The slot holds another order (slotFree accepts this one's own
		// earlier write), so this order is stored nowhere yet: a failed
		// condition writes nothing, and each earlier PutItem of this loop
		// ended in a failed condition too.
		if miss >= s.attempts {
			return 0, stampduty.Unavailable(fmt.Errorf("create order: %d tries lost the race for the next number", miss+1))
		}
		seq++
		if miss%3 == 2 {
			if err := sleep(ctx, backoff(miss/3)); err != nil {
				return 0, stampduty.Unavailable(err)
			}
			if n, err = s.Count(ctx, owner); err != nil {
				return 0, err
			}
			seq = max(seq, int64(n)+1)
		}
	}
}

// slotFree is the condition of an order's PutItem: the seq is free, or it
// holds this very order already (:doc is its documentId). The second half is
// what makes a create store its order at most once. When the answer to a
// PutItem is lost after DynamoDB applied it (the connection dropped, or the
// answer came after AttemptTimeout), the SDK sends the same request again; a
// plain attribute_not_exists(seq) would then fail on the order's own item,
// and Create, taking it for another request's, would store the order a
// second time at the next seq. With this condition the retry succeeds
// instead, rewriting the item with the very same bytes (the SDK serializes a
// request once and sends that body on every attempt), so nothing changes.
//
// A documentId is 24 characters from crypto/rand, chosen for this order
// alone, so no other order can match :doc. The alternatives are worse: a
// consistent GetItem of the slot after each failed condition costs a read on
// every lost race under contention, and ReturnValuesOnConditionCheckFailure
// or a transaction would do in one call what this does, but dynalite (the
// local engine the tests and the local stack run) has neither, and the same
// code must run on both. This condition is atomic, costs nothing extra, and
// behaves the same on DynamoDB and dynalite.
const slotFree = "attribute_not_exists(seq) OR doc = :doc"

// backoff is the wait before the attempt-th re-read under contention: full
// jitter over 2ms·2^attempt, at most 64 ms.
func backoff(attempt int) time.Duration {
	ceiling := 2 * time.Millisecond << min(attempt, 5)
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Find reports whether owner has an order with documentId doc created at or
// after since, reading the newest orders first and stopping at the first one
// older than since. It is how an interrupted create is checked: its order,
// if stored, is among the few newest.
func (s *Orders) Find(ctx context.Context, owner, doc string, since time.Time) (bool, error) {
	cutoff := stampduty.FormatTime(since)
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner", "#at": "at"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner)},
		ProjectionExpression:      aws.String("doc, #at"),
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(25),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return false, fail("Query", err)
		}
		var items []orderItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			return false, stampduty.Internal(fmt.Errorf("decode orders: %w", err))
		}
		for _, it := range items {
			if it.DocumentID == doc {
				return true, nil
			}
			if it.CreatedAt < cutoff {
				return false, nil
			}
		}
	}
	return false, nil
}

// Count returns how many orders owner has: the newest seq, read with one
// strongly consistent Query of one item.
func (s *Orders) Count(ctx context.Context, owner string) (int, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner)},
		ProjectionExpression:      aws.String("seq"),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return 0, fail("Query", err)
	}
	if len(out.Items) == 0 {
		return 0, nil
	}
	// seq is the sort key: every item the Query returns has it.
	var it orderItem
	if err := attributevalue.UnmarshalMap(out.Items[0], &it); err != nil {
		return 0, stampduty.Internal(fmt.Errorf("order seq: %w", err))
	}
	return int(it.Seq), nil
}

// Page returns page (from 1) of owner's orders, newest first, size per page,
// and the exact total: Slice((page-1)*size, size).
func (s *Orders) Page(ctx context.Context, owner string, page, size int) ([]stampduty.Order, int, error) {
	if page < 1 || size < 1 {
		total, err := s.Count(ctx, owner)
		return []stampduty.Order{}, total, err
	}
	return s.Slice(ctx, owner, (page-1)*size, size)
}

// Slice returns limit of owner's orders, newest first, skipping the start
// newest, and the exact total. It costs two Queries wherever the slice is:
// the count, then the slice's seq range. The range is read eventually
// consistent (half the price); if it comes back short of what the count
// promises (an order written a moment ago not yet visible), it is read once
// more, consistently.
func (s *Orders) Slice(ctx context.Context, owner string, start, limit int) ([]stampduty.Order, int, error) {
	total, err := s.Count(ctx, owner)
	if err != nil {
		return nil, 0, err
	}
	// The newest seq of the slice is hi = total-start; past the end when < 1.
	if start < 0 || limit < 1 || start >= total {
		return []stampduty.Order{}, total, nil
	}
	hi := int64(total) - int64(start)
	lo := max(1, hi-int64(limit)+1)
	orders, err := s.seqRange(ctx, owner, lo, hi, false)
	if err != nil {
		return nil, 0, err
	}
	if int64(len(orders)) != hi-lo+1 {
		if orders, err = s.seqRange(ctx, owner, lo, hi, true); err != nil {
			return nil, 0, err
		}
	}
	return orders, total, nil
}

// seqRange returns owner's orders with lo <= seq <= hi, newest first.
func (s *Orders) seqRange(ctx context.Context, owner string, lo, hi int64, consistent bool) ([]stampduty.Order, error) {
	orders := make([]stampduty.Order, 0, hi-lo+1)
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                aws.String(s.table),
		KeyConditionExpression:   aws.String("#o = :o AND seq BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":o":  avS(owner),
			":lo": avN(lo),
			":hi": avN(hi),
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(consistent),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fail("Query", err)
		}
		page, err := decodeItems(out.Items, theOrder)
		if err != nil {
			return nil, err
		}
		orders = append(orders, page...)
	}
	return orders, nil
}
