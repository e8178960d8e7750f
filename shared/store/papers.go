package store

// This file holds the papers of an order of several papers (quantity 2 to
// 20) kept apart (orders.Apart): their items beside the order's item, how
// a read puts the order together from them, and a paper's write.
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
	"reflect"
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

// replaceApart is Replace for an order kept apart: it writes the one item
// the change is in, at the order's next version, with one conditional
// PutItem — the paper's item for a paper's change (its first: on
// condition that it has none yet; later: that its version is still the one
// read), the order's item for a change of the order's own fields (that
// its own version is still the one read). A paper's change so costs what
// it costs on an order of one paper: the write of one small item, and its
// queue entry's move. A change of several items at once is refused: no
// workflow makes one.
func (s *Orders) replaceApart(ctx context.Context, old orders.Stored, next stampduty.Order, events []stampduty.Pending) error {
	a := old.Apart
	if len(next.Fulfillments) != len(old.Fulfillments) || len(a.Papers) != len(old.Fulfillments) {
		return stampduty.Internal(fmt.Errorf("replace order %s: %d papers, was %d", old.DocumentID, len(next.Fulfillments), len(old.Fulfillments)))
	}
	v := old.Version + 1
	events = slices.Clone(events)
	for i := range events {
		events[i].Version = v
	}
	var changed []int
	for i := range next.Fulfillments {
		if !reflect.DeepEqual(next.Fulfillments[i], old.Fulfillments[i]) {
			changed = append(changed, i)
		}
	}
	own := func(o stampduty.Order) stampduty.Order { o.Fulfillments, o.UpdatedAt = nil, ""; return o }
	var (
		item map[string]types.AttributeValue
		err  error
		in   = &dynamodb.PutItemInput{TableName: aws.String(s.table)}
	)
	switch ownChanged := !reflect.DeepEqual(own(next), own(old.Order)); {
	case len(changed) == 1 && !ownChanged:
		k := changed[0] + 1
		part := a.Papers[k-1]
		if !part.Locked.IsZero() {
			// A cancel locked the paper and did not cancel the order: it
			// failed, or is under way. Once it is surely over, unlock.
			if time.Since(part.Locked) < DeadAfter {
				return fmt.Errorf("replace order %s: paper %d is locked by a cancel under way: %w", old.DocumentID, k, orders.ErrChanged)
			}
			if err := s.unlock(ctx, old.Owner, old.Seq, k, part, old.Fulfillments[k-1], queueKey(old.Order)); err != nil {
				return err
			}
			part.Version = max(part.Version, part.Lock) // a lock made the item of a paper that had none
		}
		item, err = attributevalue.MarshalMap(newPaperItem(old.Owner, old.Seq, next, k, v, append(slices.Clone(part.Outbox), events...)))
		switch {
		case part.Version == 0:
			in.ConditionExpression = aws.String("attribute_not_exists(seq)")
		default:
			// Not locked since it was read: a cancel's lock leaves v as it
			// was (it may be undone), so lk is checked too.
			in.ConditionExpression = aws.String("v = :v AND attribute_not_exists(lk)")
			in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": avN(part.Version)}
		}
	case len(changed) == 0 && next.Cancelled() && !old.Cancelled():
		return s.cancelApart(ctx, old, next, v, events)
	case len(changed) == 0:
		item, err = attributevalue.MarshalMap(apartOrderItem(old, next, v, events))
		in.ConditionExpression = aws.String("v = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": avN(a.Version)}
	default:
		return stampduty.Internal(fmt.Errorf("replace order %s: a change of %d papers and the order at once", old.DocumentID, len(changed)))
	}
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode order: %w", err))
	}
	in.Item = item
	if _, err := s.db.client.PutItem(ctx, in); err != nil {
		if conditionFailed(err) {
			return fmt.Errorf("replace order %s: %w", old.DocumentID, orders.ErrChanged)
		}
		return writeFail("PutItem", err)
	}
	return nil
}

// apartOrderItem is the item of old, an order kept apart, after next, a
// change of its own fields, at version v: its papers as created (their
// changes are in their own items), the outbox read with events after it,
// and a queue entry (newOrderItem's: Pending, none once cancelled) only
// while a paper has no item of its own.
func apartOrderItem(old orders.Stored, next stampduty.Order, v int64, events []stampduty.Pending) orderItem {
	base := next
	base.Fulfillments = initialPapers(next)
	it := newOrderItem(old.Owner, old.Seq, base, v, append(slices.Clone(old.Apart.Outbox), events...))
	it.Apart = true
	if !slices.ContainsFunc(old.Apart.Papers, func(p orders.Part) bool { return p.Version == 0 }) {
		it.QueueStatus, it.QueueKey = "", "" // every paper waits in its own item
	}
	return it
}

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
