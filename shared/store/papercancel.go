package store

// This file holds the cancel of an order kept apart (papers.go): the locks
// on its papers' items, the order item's write, and the locks' undoing.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// cancelApart stores the cancel of an order kept apart. A paper's change
// writes only the paper's item, so the cancel cannot be one write: it
// first locks every paper's item — a paper never changed gets an item as
// created, with PutItem attribute_not_exists(seq); a changed one is
// marked with UpdateItem on condition that its version is the one read —
// each lock (lk, lt) taking the item out of the queue. A paper's change
// conditioned on its item's absence or version and on no lock then fails,
// so no paper can change once its lock is written; a change written
// before its lock makes the lock fail. With every paper locked the cancel
// writes the order's item (its own version as read): the order is
// cancelled and its papers stay locked. If a lock or that write fails,
// the locks written are undone (orders.ErrChanged: the workflow reads the
// order again and decides). A cancel that dies half way leaves locks on
// an order not cancelled: a paper's change meeting one younger than
// DeadAfter answers as a lost race (ErrChanged), and one older removes it
// first (unlock).
func (s *Orders) cancelApart(ctx context.Context, old orders.Stored, next stampduty.Order, v int64, events []stampduty.Pending) error {
	a := old.Apart
	now := time.Now()
	locked := make([]bool, len(a.Papers))
	errs := make([]error, len(a.Papers))
	var wg sync.WaitGroup
	for i, part := range a.Papers {
		wg.Go(func() {
			errs[i] = s.lock(ctx, old, i+1, part, v, now)
			locked[i] = errs[i] == nil
		})
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err == nil {
		item, merr := attributevalue.MarshalMap(apartOrderItem(old, next, v, events)) // cancelled: in no queue
		if merr != nil {
			err = stampduty.Internal(fmt.Errorf("encode order: %w", merr))
		} else if _, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item,
			ConditionExpression:       aws.String("v = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": avN(a.Version)}}); err == nil {
			return nil
		} else if conditionFailed(err) {
			err = fmt.Errorf("cancel order %s: %w", old.DocumentID, orders.ErrChanged)
		} else {
			err = writeFail("PutItem", err)
		}
	}
	// Undo the locks written, in a context of their own (the request's may
	// be what ran out); a lock left is removed by the paper's next change
	// after DeadAfter.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	for i, ok := range locked {
		if ok {
			part := a.Papers[i]
			part.Locked = now
			_ = s.unlock(uctx, old.Owner, old.Seq, i+1, part, old.Fulfillments[i], queueKey(old.Order))
		}
	}
	return err
}

// lock locks paper k (from 1) of old for the cancel at version v: an item
// as created for a paper that has none, else a mark on its item, on
// condition that it is as read. A failed condition is orders.ErrChanged.
func (s *Orders) lock(ctx context.Context, old orders.Stored, k int, part orders.Part, v int64, now time.Time) error {
	var err error
	if part.Version == 0 {
		p := newPaperItem(old.Owner, old.Seq, old.Order, k, v, nil)
		p.QueueStatus, p.QueueKey = "", ""
		p.Lock, p.LockedAt = v, now.UnixMilli()
		item, merr := attributevalue.MarshalMap(p)
		if merr != nil {
			return stampduty.Internal(fmt.Errorf("encode paper: %w", merr))
		}
		_, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item,
			ConditionExpression: aws.String("attribute_not_exists(seq)")})
	} else {
		_, err = s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:           aws.String(s.table),
			Key:                 map[string]types.AttributeValue{"owner": avS(old.Owner), "seq": avSeq(paperSeq(old.Seq, k))},
			UpdateExpression:    aws.String("SET lk = :lk, lt = :lt REMOVE qs, qk"),
			ConditionExpression: aws.String("v = :v AND attribute_not_exists(lk)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":lk": avN(v), ":lt": avN(now.UnixMilli()),
				":v": avN(part.Version)},
		})
	}
	switch {
	case conditionFailed(err):
		return fmt.Errorf("cancel order %s: paper %d changed: %w", old.DocumentID, k, orders.ErrChanged)
	case err != nil:
		return writeFail("PutItem", err)
	}
	return nil
}

// unlock undoes a lock of paper k (from 1) of the order at (owner, seq),
// on condition that the lock is the one read: the paper's item loses its
// lock and waits again in its status's queue (ff's, placed by qk). An item
// the lock made, for a paper that had none, stays: the paper as created,
// at the lock's version.
func (s *Orders) unlock(ctx context.Context, owner string, seq int64, k int, part orders.Part, ff stampduty.Fulfillment, qk string) error {
	_, doc, _ := strings.Cut(qk, "#") // createdAt#documentId
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 map[string]types.AttributeValue{"owner": avS(owner), "seq": avSeq(paperSeq(seq, k))},
		UpdateExpression:    aws.String("REMOVE lk, lt SET qs = :qs, qk = :qk"),
		ConditionExpression: aws.String("lt = :lt"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":lt": avN(part.Locked.UnixMilli()),
			":qs": avS(queuePartition(owner, ff.Status, doc)), ":qk": avS(qk)},
	})
	if conditionFailed(err) {
		return fmt.Errorf("unlock paper %d of order %s#%d: %w", k, owner, seq, orders.ErrChanged)
	}
	if err != nil {
		return writeFail("UpdateItem", err)
	}
	return nil
}
