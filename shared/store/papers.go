package store

// This file holds the papers of an order of several papers (quantity 2 to
// 20) kept apart (orders.Apart): their items beside the order's item, how
// a read puts the order together from them. A change's write is in
// paperwrite.go, a cancel's in papercancel.go.
//
// Paper k (from 1) of the order at seq s is kept, once it has changed
// since the create, at seq s.kk (s + k/100, two decimals: DynamoDB numbers
// are exact decimals), in the order's partition and just above it in the
// sort order. So one Query of seq BETWEEN s AND s.99 reads an order with
// all its papers, and the list's and $in's range Queries read them with
// their orders; no other reader sees them (the count and the voids are
// above every order, the indexes need attributes a paper item does not
// have, except queue-shards and outbox, which it takes part in). Until its
// first change a paper is as the create made it, in the order item's ff:
// creating an order of 20 papers is one write, as for one paper.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// paperSeq is the sort key of paper k (from 1) of the order at seq. Two
// decimals hold papers 1 to 99; the domain allows stampduty.MaxQuantity.
func paperSeq(seq int64, k int) string { return fmt.Sprintf("%d.%02d", seq, k) }

// avSeq is a sort key as DynamoDB takes it.
func avSeq(seq string) types.AttributeValue { return &types.AttributeValueMemberN{Value: seq} }

// rangeTop is the highest sort key of the order at seq with its papers:
// a Query up to it reads them all.
func rangeTop(seq int64) string { return fmt.Sprintf("%d.99", seq) }

// apart reports whether a new order is to keep its papers apart: one of
// several papers (quantity above 1; its item is marked pa). An order of
// one paper, and every order stored before quantity, is kept whole, in one
// item, as it always was.
func apart(o stampduty.Order) bool { return o.StampDuty.Quantity > 1 }

// paperItem is a paper's item.
//
//	owner, seq          the order's owner, and the order's seq with the paper's
//	                    number as two decimals (paperSeq)
//	p                   the paper's number, from 1: marks the item as a paper's
//	f                   the fulfillment, as an order item's ff holds one
//	v                   the version this item was written at: the order's next
//	                    (orders.Apart), so versions order the order's changes
//	up                  when the paper last changed (the order's updatedAt is the
//	                    latest of its items')
//	qs, qk              the work queue, as an order item's: the paper's status and
//	                    the order's shard, and the order's createdAt#documentId
//	ob, obp, obk        the outbox of the paper's changes, as an order item's;
//	                    each event keeps the paper as it was right after it (pf)
//	lk, lt              the lock of a cancel (cancelApart): its version, and when
//	                    (Unix ms); a locked paper takes no change
//	expires             a test order's TTL, as its order item's (testExpires); absent when live
type paperItem struct {
	Owner       string                `dynamodbav:"owner"`
	Seq         attributevalue.Number `dynamodbav:"seq"`
	Paper       int                   `dynamodbav:"p"`
	Fulfillment stampduty.Fulfillment `dynamodbav:"f"`
	Version     int64                 `dynamodbav:"v"`
	UpdatedAt   string                `dynamodbav:"up"`
	QueueStatus string                `dynamodbav:"qs,omitempty"`
	QueueKey    string                `dynamodbav:"qk,omitempty"`
	Outbox      []eventItem           `dynamodbav:"ob,omitempty"`
	OutboxState string                `dynamodbav:"obp,omitempty"`
	OutboxKey   string                `dynamodbav:"obk,omitempty"`
	// Lock is the version of the cancel that locked the paper (cancelApart)
	// and LockedAt when, in Unix milliseconds; absent on a paper no cancel
	// locked.
	Lock     int64 `dynamodbav:"lk,omitempty"`
	LockedAt int64 `dynamodbav:"lt,omitempty"`
	// Expires is the order's TTL (testExpires): the paper goes with it.
	Expires int64 `dynamodbav:"expires,omitempty"`
}

// isPaper reports whether item is a paper's item.
func isPaper(item map[string]types.AttributeValue) bool {
	_, ok := item["p"]
	return ok
}

// seqOf returns the order seq of an item's sort key: the whole part of a
// paper's, the seq itself for an order's.
func seqOf(item map[string]types.AttributeValue) (int64, error) {
	n, ok := item["seq"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, stampduty.Internal(fmt.Errorf("decode order: an item without a numeric seq"))
	}
	whole, _, _ := strings.Cut(n.Value, ".")
	seq, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, stampduty.Internal(fmt.Errorf("decode order: seq %q: %w", n.Value, err))
	}
	return seq, nil
}

// newPaperItem returns paper k (from 1) of order o, owner's at seq, as its
// item at version v with the outbox given (each event with the paper as it
// was right after it).
func newPaperItem(owner string, seq int64, o stampduty.Order, k int, v int64, outbox []stampduty.Pending) paperItem {
	ff := o.Fulfillments[k-1]
	it := paperItem{Owner: owner, Seq: attributevalue.Number(paperSeq(seq, k)), Paper: k, Fulfillment: ff, Version: v,
		UpdatedAt: o.UpdatedAt, QueueStatus: queuePartition(owner, ff.Status, o.DocumentID), QueueKey: queueKey(o),
		Expires: testExpires(owner, o.CreatedAt)}
	for _, p := range outbox {
		it.Outbox = append(it.Outbox, newPaperEvent(p, p.Order.Fulfillment(ff.DocumentID)))
	}
	if len(outbox) > 0 {
		it.OutboxState, it.OutboxKey = outboxShard(o.DocumentID), outboxKey(outbox, o.DocumentID)
	}
	return it
}

// newPaperEvent returns p as a paper item stores it: without the order
// (the relay puts it together from the order's items), with the paper as
// it was right after the change (paper i of p.Order; none when i < 0).
func newPaperEvent(p stampduty.Pending, i int) eventItem {
	e := eventItem{ID: p.ID, Type: p.Type, At: p.At, PreviousStatus: p.PreviousStatus, Status: p.Status,
		Fulfillment: p.Fulfillment, Version: p.Version}
	if i >= 0 {
		e.Paper = &p.Order.Fulfillments[i]
	}
	return e
}

// initialPapers returns the papers of o as the create made them: what an
// order item of an order kept apart holds in its ff.
func initialPapers(o stampduty.Order) []stampduty.Fulfillment {
	out := make([]stampduty.Fulfillment, len(o.Fulfillments))
	for i, f := range o.Fulfillments {
		out[i] = stampduty.Fulfillment{ID: f.ID, DocumentID: f.DocumentID, Status: stampduty.StatusPending,
			History: []stampduty.StatusEntry{{Status: stampduty.StatusPending, At: o.CreatedAt}}}
	}
	return out
}

// assemble puts an order together from its item and its papers' items
// (any order; none for an order kept whole).
func assemble(order map[string]types.AttributeValue, papers []map[string]types.AttributeValue) (orders.Stored, error) {
	s, err := decodeStored(order)
	if err != nil || s.Apart == nil {
		return s, err
	}
	a := s.Apart
	s.Fulfillments = slices.Clone(s.Fulfillments)
	items := make([]paperItem, len(papers))
	for i, item := range papers {
		if err := attributevalue.UnmarshalMap(item, &items[i]); err != nil {
			return orders.Stored{}, stampduty.Internal(fmt.Errorf("decode paper: %w", err))
		}
		p := items[i]
		if p.Paper < 1 || p.Paper > len(s.Fulfillments) {
			return orders.Stored{}, stampduty.Internal(fmt.Errorf("order %s: paper %d of %d", s.DocumentID, p.Paper, len(s.Fulfillments)))
		}
		s.Fulfillments[p.Paper-1] = p.Fulfillment
		a.Papers[p.Paper-1].Version = p.Version
		if p.Lock > 0 {
			a.Papers[p.Paper-1].Lock, a.Papers[p.Paper-1].Locked = p.Lock, time.UnixMilli(p.LockedAt)
		}
		s.Version = max(s.Version, p.Version)
		s.UpdatedAt = max(s.UpdatedAt, p.UpdatedAt)
	}
	// The papers' outboxes, now that the order is whole: each event is the
	// order as it is, with its paper as it was right after the event. (The
	// order item's own events keep the order as that item holds it: its
	// create, or its document, made while every paper was as created.)
	for _, p := range items {
		for _, e := range p.Outbox {
			pe, err := e.pending(s.Owner, &s.Order)
			if err != nil {
				return orders.Stored{}, err
			}
			a.Papers[p.Paper-1].Outbox = append(a.Papers[p.Paper-1].Outbox, pe)
		}
	}
	return s, nil
}

// withPaper returns o with its paper of pf's documentId as pf, updated at.
func withPaper(o stampduty.Order, pf stampduty.Fulfillment, at string) stampduty.Order {
	if i := o.Fulfillment(pf.DocumentID); i >= 0 {
		o.Fulfillments = slices.Clone(o.Fulfillments)
		o.Fulfillments[i] = pf
		o.UpdatedAt = at
	}
	return o
}

// readOrder returns the order at (owner, seq) with its papers: one Query
// of seq BETWEEN seq AND seq.99 (rangeTop), strongly consistent when
// consistent; ok is false when the seq holds no order (nothing, or a
// void). For an order of one item it costs what a GetItem costs.
func (s *Orders) readOrder(ctx context.Context, owner string, seq int64, consistent bool) (orders.Stored, bool, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                aws.String(s.table),
		KeyConditionExpression:   aws.String("#o = :o AND seq BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":o": avS(owner), ":lo": avN(seq), ":hi": avSeq(rangeTop(seq))},
		ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return orders.Stored{}, false, fail("Query", err)
	}
	// Ascending: the order's item first, then its papers. (Past 1 MB the
	// Query would page: 20 papers at their bounds are far below it.)
	if len(out.Items) == 0 || isVoid(out.Items[0]) || isPaper(out.Items[0]) {
		return orders.Stored{}, false, nil
	}
	o, err := assemble(out.Items[0], out.Items[1:])
	return o, err == nil, err
}

// completeApart reads the papers of the orders among found that are kept
// apart and were read without them (a BatchGetItem reads order items
// only): one Query each (readOrder), lookups at a time.
func (s *Orders) completeApart(ctx context.Context, found []orders.Stored, consistent bool) error {
	sem := make(chan struct{}, lookups)
	errs := make([]error, len(found))
	var wg sync.WaitGroup
	for i, o := range found {
		if o.Apart == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			whole, ok, err := s.readOrder(ctx, o.Owner, o.Seq, consistent)
			if err == nil && !ok {
				err = stampduty.Internal(fmt.Errorf("order %s is gone", o.DocumentID))
			}
			found[i], errs[i] = whole, err
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
