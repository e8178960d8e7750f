package store

// This file holds the write of a change to an order kept apart (papers.go):
// one conditional PutItem of the one item the change is in.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

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
