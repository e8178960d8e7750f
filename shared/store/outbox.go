package store

// This file holds an order's outbox: its pending events as the order's
// item stores them, the outbox index's keys, and the relay's reads and
// removals.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// eventItem is a stampduty.Pending as an order's outbox (or a delivery
// job) stores it. o, the order right after the change, is left out of the
// newest event of an outbox when it is the order item itself (the change
// that made the event is the item's latest): the item does not carry its
// order twice, which keeps a typical order with its pending event under
// 1 KB, so the change, the relay and their index entries are billed 1 WCU
// each instead of 2. A later change that keeps the event pending stores it
// with its o again (it is then no longer the item's order). Events stored
// with o always (before this) read as they did.
type eventItem struct {
	ID             string     `dynamodbav:"id"`
	Type           string     `dynamodbav:"t"`
	Order          *orderBody `dynamodbav:"o,omitempty"`
	At             string     `dynamodbav:"at"`
	PreviousStatus *string    `dynamodbav:"ps,omitempty"`
	Status         *string    `dynamodbav:"st,omitempty"`
	Fulfillment    string     `dynamodbav:"f,omitempty"` // stampduty.Pending.Fulfillment; absent when empty
	// Paper is, in a paper item's outbox, the paper right after the change
	// (the relay puts the order together around it; see papers.go).
	Paper *stampduty.Fulfillment `dynamodbav:"pf,omitempty"`
	// Version is the order's version the change was stored at, when the
	// store keeps it per event (stampduty.Pending.Version).
	Version int64 `dynamodbav:"v,omitempty"`
}

// outboxPending is the base of the outbox index's partition key: an order
// with pending events has obp = outboxShard(its documentId), one of
// "pending#00"…"pending#15"; orders stored before the sharding have
// "pending" until their next write.
const outboxPending = "pending"

// outboxShard is the outbox index's partition key of order doc.
func outboxShard(doc string) string { return shardKey(outboxPending, doc) }

// outboxKey is an order's sort key in the outbox index: the time of its
// oldest pending event, then its documentId, so the relay takes the
// longest-waiting orders first.
func outboxKey(outbox []stampduty.Pending, doc string) string { return outbox[0].At + "#" + doc }

// newEventItems returns the items of the outbox of an item that stores
// self (nil for none): the newest without its o when that is self.
func newEventItems(outbox []stampduty.Pending, self stampduty.Order) []eventItem {
	var items []eventItem
	for _, p := range outbox {
		items = append(items, newEventItem(p))
	}
	if n := len(items); n > 0 && reflect.DeepEqual(*items[n-1].Order, newOrderBody(self)) {
		items[n-1].Order = nil
	}
	return items
}

// newEventItem returns p as an outbox (or a delivery job) stores it.
func newEventItem(p stampduty.Pending) eventItem {
	o := newOrderBody(p.Order)
	return eventItem{ID: p.ID, Type: p.Type, At: p.At, PreviousStatus: p.PreviousStatus,
		Status: p.Status, Fulfillment: p.Fulfillment, Order: &o, Version: p.Version}
}

// pending returns the event e stores, of owner's order; one stored without
// its order is of self, the order of the item that holds it (nil: none may
// be left out).
func (e eventItem) pending(owner string, self *stampduty.Order) (stampduty.Pending, error) {
	var o stampduty.Order
	switch {
	case e.Order != nil:
		var err error
		if o, err = e.Order.order(owner); err != nil {
			return stampduty.Pending{}, err
		}
	case self != nil && e.Paper != nil:
		o = withPaper(*self, *e.Paper, e.At)
	case self != nil:
		o = *self
	default:
		return stampduty.Pending{}, stampduty.Internal(fmt.Errorf("event %s stored without its order", e.ID))
	}
	return stampduty.Pending{ID: e.ID, Type: e.Type, At: e.At, PreviousStatus: e.PreviousStatus, Status: e.Status,
		Fulfillment: e.Fulfillment, Order: o, Version: e.Version}, nil
}

// Pending returns orders with pending events (their Outbox): one page of
// poller p's part of the outbox index, up to limit orders, read from cursor
// on ("" from the start), with the cursor to read on from ("" once the
// part has been read to its end: the next call starts a new sweep). One
// Scan, of segment i of n for poller i of n (a parallel Scan: no order is
// in two pollers' parts), Limit limit, eventually consistent (an event
// shows a moment after its change, and stays a moment after it is
// relayed: relaying is idempotent, see Relayed). The index holds only such
// orders, every shard and the unsharded "pending" of orders stored before
// the sharding, so while it holds fewer than limit of p's orders a call
// reads them all (0.5 RCU when it holds none). A sweep returns every order
// that is pending when it starts and still pending when the sweep reaches
// it, so a backlog is worked through to its end before the sweep starts
// again, whatever keeps arriving meanwhile; the scan's order is the
// index's storage order (shard by shard, by DynamoDB's hash of the shard,
// oldest first within one), and the page is returned oldest event first.
func (s *Orders) Pending(ctx context.Context, p webhooks.Poller, cursor string, limit int) ([]orders.Stored, string, error) {
	segment, total := p.Segment()
	in := &dynamodb.ScanInput{
		TableName: aws.String(s.table),
		IndexName: aws.String(OutboxIndex),
		Limit:     aws.Int32(int32(limit)),
	}
	if total > 1 {
		in.Segment, in.TotalSegments = aws.Int32(int32(segment)), aws.Int32(int32(total))
	}
	if cursor != "" {
		var err error
		if in.ExclusiveStartKey, err = decodeSweep(cursor); err != nil {
			return nil, "", err
		}
	}
	out, err := s.db.client.Scan(ctx, in)
	if err != nil {
		return nil, "", fail("Scan", err)
	}
	next, err := encodeSweep(out.LastEvaluatedKey)
	if err != nil {
		return nil, "", err
	}
	slices.SortStableFunc(out.Items, func(a, b map[string]types.AttributeValue) int { return cmpS(a["obk"], b["obk"]) })
	found := make([]orders.Stored, 0, len(out.Items))
	for _, item := range out.Items {
		o, ok, err := s.outboxOf(ctx, item)
		if err != nil {
			return nil, "", err
		}
		if ok {
			found = append(found, o)
		}
	}
	return found, next, nil
}

// outboxOf returns the outbox item as the relay handles it: an order's
// item as it is; a paper's (papers.go) as its order, read whole with one
// more Query (the events carry the order), standing for the paper's item
// (Apart.Item), with the paper item's outbox and version. ok is false for
// a paper whose outbox the read found empty (relayed meanwhile).
func (s *Orders) outboxOf(ctx context.Context, item map[string]types.AttributeValue) (orders.Stored, bool, error) {
	if !isPaper(item) {
		o, err := decodeStored(item)
		return o, err == nil, err
	}
	var p paperItem
	if err := attributevalue.UnmarshalMap(item, &p); err != nil {
		return orders.Stored{}, false, stampduty.Internal(fmt.Errorf("decode paper: %w", err))
	}
	seq, err := seqOf(item)
	if err != nil {
		return orders.Stored{}, false, err
	}
	o, found, err := s.readOrder(ctx, p.Owner, seq, false)
	if err != nil || !found || o.Apart == nil || p.Paper < 1 || p.Paper > len(o.Apart.Papers) {
		return orders.Stored{}, false, err
	}
	part := o.Apart.Papers[p.Paper-1]
	o.Outbox, o.Version, o.Apart.Item = part.Outbox, part.Version, p.Paper
	return o, len(o.Outbox) > 0, nil
}

// sweepCursor is where a sweep of the outbox index stopped: the last
// order it read, by the table's and the index's keys.
type sweepCursor struct {
	Owner string `dynamodbav:"owner" json:"owner"`
	// Seq is an order's seq, or a paper's item's (papers.go: s.kk).
	Seq   attributevalue.Number `dynamodbav:"seq" json:"seq"`
	Shard string                `dynamodbav:"obp" json:"obp"`
	Key   string                `dynamodbav:"obk" json:"obk"`
}

// encodeSweep returns the cursor of a Scan's LastEvaluatedKey ("" for
// none: the sweep is at its end).
func encodeSweep(key map[string]types.AttributeValue) (string, error) {
	if len(key) == 0 {
		return "", nil
	}
	var c sweepCursor
	if err := attributevalue.UnmarshalMap(key, &c); err != nil {
		return "", stampduty.Internal(fmt.Errorf("decode the outbox scan's last key: %w", err))
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", stampduty.Internal(fmt.Errorf("encode the outbox scan's cursor: %w", err))
	}
	return string(b), nil
}

// decodeSweep returns the ExclusiveStartKey of a cursor encodeSweep made.
func decodeSweep(cursor string) (map[string]types.AttributeValue, error) {
	var c sweepCursor
	if err := json.Unmarshal([]byte(cursor), &c); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("read the outbox scan's cursor: %w", err))
	}
	key, err := attributevalue.MarshalMap(c)
	if err != nil {
		return nil, stampduty.Internal(fmt.Errorf("encode the outbox scan's start key: %w", err))
	}
	return key, nil
}

// Relayed removes the events ids from the outbox of o, an order as Pending
// (or a read) returned it, once the relay has handed them on: one
// UpdateItem that rewrites ob without them (and drops it, with the index
// keys, when none is left), on condition that o's version and outbox are
// still the stored ones. The relay never changes the version, so it never
// makes a change of the order fail; the only writes that change an outbox
// without changing the version are Relayed's own removals, so the version
// and the outbox's length and first id being unchanged means the outbox is
// the one read. A failed condition is orders.ErrChanged (wrapped): read
// again and retry. A writer who read the order before the relay removed
// its events writes them back with its change (it stores the outbox it
// read); the relay then finds them again, which is why relaying an event
// twice must do nothing the second time.
func (s *Orders) Relayed(ctx context.Context, o orders.Stored, ids []string) error {
	if len(o.Outbox) == 0 {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(o.Outbox), func(p stampduty.Pending) bool { return slices.Contains(ids, p.ID) })
	if len(rest) == len(o.Outbox) {
		return nil
	}
	key := map[string]types.AttributeValue{"owner": avS(o.Owner), "seq": avN(o.Seq)}
	paper := -1 // the paper whose item it is, from 0
	if o.Apart != nil && o.Apart.Item > 0 {
		paper = o.Apart.Item - 1
		key["seq"] = avSeq(paperSeq(o.Seq, o.Apart.Item))
	}
	in := &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 key,
		ConditionExpression: aws.String("v = :v AND size(ob) = :n AND ob[0].id = :first"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":v": avN(o.Version), ":n": avN(int64(len(o.Outbox))), ":first": avS(o.Outbox[0].ID)},
	}
	if len(rest) == 0 {
		in.UpdateExpression = aws.String("REMOVE ob, obp, obk")
	} else {
		items := newEventItems(rest, o.Order)
		if paper >= 0 {
			items = items[:0]
			for _, p := range rest {
				items = append(items, newPaperEvent(p, p.Order.Fulfillment(o.Fulfillments[paper].DocumentID)))
			}
		}
		ob, err := attributevalue.Marshal(items)
		if err != nil {
			return stampduty.Internal(fmt.Errorf("encode outbox: %w", err))
		}
		// obp too: an order stored before the sharding moves to its shard.
		in.UpdateExpression = aws.String("SET ob = :ob, obp = :p, obk = :k")
		in.ExpressionAttributeValues[":ob"] = ob
		in.ExpressionAttributeValues[":p"] = avS(outboxShard(o.DocumentID))
		in.ExpressionAttributeValues[":k"] = avS(outboxKey(rest, o.DocumentID))
	}
	if _, err := s.db.client.UpdateItem(ctx, in); err != nil {
		if conditionFailed(err) {
			return fmt.Errorf("relay the events of order %s: %w", o.DocumentID, orders.ErrChanged)
		}
		return writeFail("UpdateItem", err)
	}
	return nil
}
