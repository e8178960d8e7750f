package store

// This file holds the operators' work queue: its pages and their cursors.
// The queue index's keys and shards are in queuekeys.go, the backfill of
// orders stored before it or before its shards in queuebackfill.go.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// queueEntry is an entry of the queue index, which projects the keys only:
// its own and the item's. An order of several papers has an entry per
// paper waiting in the status (each paper's item, and the order's item for
// the papers still as created: papers.go), all with the order's qk.
type queueEntry struct {
	Partition string `dynamodbav:"qs"`
	Key       string `dynamodbav:"qk"`
	// orderKey is the key of the entry's order (a paper's item's seq less
	// its paper's decimals).
	orderKey
	// Paper reports an entry of a paper's item.
	Paper bool
}

// decodeQueueEntry reads a queue index entry.
func decodeQueueEntry(item map[string]types.AttributeValue) (queueEntry, error) {
	var e struct {
		Partition string `dynamodbav:"qs"`
		Key       string `dynamodbav:"qk"`
		Owner     string `dynamodbav:"owner"`
	}
	if err := attributevalue.UnmarshalMap(item, &e); err != nil {
		return queueEntry{}, stampduty.Internal(fmt.Errorf("decode queue entry: %w", err))
	}
	seq, err := seqOf(item)
	if err != nil {
		return queueEntry{}, err
	}
	n := item["seq"].(*types.AttributeValueMemberN).Value // seqOf checked it
	return queueEntry{Partition: e.Partition, Key: e.Key, orderKey: orderKey{Owner: e.Owner, Seq: seq}, Paper: strings.Contains(n, ".")}, nil
}

// queueCursor is the position a queue page ends at: the status, and the
// last order's keys in the queue index (its qk) and in the table. Only Key
// places the next page (qk is unique); the cursor keeps the form it had
// before the shards, so a cursor handed out then still works.
type queueCursor struct {
	Status string `json:"s"`
	// Test marks a cursor of the test queue (absent from the live queue's,
	// so their cursors keep the form they had before test orders).
	Test  bool   `json:"t,omitempty"`
	Key   string `json:"k"`
	Owner string `json:"o"`
	Seq   int64  `json:"n"`
}

// Queue returns up to size orders waiting in status, oldest first (by
// createdAt, then documentId) across callers and shards, the live orders
// or, with test, the test orders only (each in queues of their own:
// queuePartition), after the position cursor names, and the cursor of the
// next page when this one is
// full ("" otherwise, as before the shards: a full last page has a cursor,
// to an empty page). It Queries every shard of the status (queuePartitions)
// at once for up to size entries after the cursor, merges them by qk, and
// reads the first size orders with one BatchGetItem, eventually consistent
// like the index; an order that has moved on from status since its entry
// was read is left out. The cursor is opaque to callers; one that Queue did
// not make for this status and mode is EINVALID.
func (s *Orders) Queue(ctx context.Context, status string, test bool, cursor string, size int) ([]stampduty.OpsOrder, string, error) {
	after := ""
	if cursor != "" {
		c, ok := decodeCursor(cursor)
		if !ok || c.Status != status || c.Test != test {
			return nil, "", stampduty.Errorf(stampduty.EINVALID, "Invalid pagination[cursor]: not a cursor of this queue")
		}
		after = c.Key
	}
	if size < 1 {
		return []stampduty.OpsOrder{}, "", nil
	}
	entries, err := s.queueEntries(ctx, queuePartitions(status, test), after, size)
	if err != nil {
		return nil, "", err
	}
	page, err := s.queueOrders(ctx, status, entries)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(entries) == size {
		last := entries[size-1]
		b, _ := json.Marshal(queueCursor{Status: status, Test: test, Key: last.Key, Owner: last.Owner, Seq: last.Seq})
		next = base64.RawURLEncoding.EncodeToString(b)
	}
	return page, next, nil
}

// queueEntries returns the entries of the first size orders of the queue
// whose partitions are parts after the sort key after ("" from the start), oldest first, one per
// order: one Query per partition, all at once, Limit size each. An order
// of several papers may have several entries (one per paper in the
// status), so a partition that filled its Limit may hold more orders
// before the others' next ones: while fewer than size orders are known to
// come first, the partitions that filled their Limit are read on, all at
// once (a round more only when orders of several papers fill a page).
func (s *Orders) queueEntries(ctx context.Context, parts []string, after string, size int) ([]queueEntry, error) {
	reads := make([]queueRead, len(parts))
	for i, p := range parts {
		reads[i] = queueRead{partition: p, more: true}
	}
	for {
		errs := make([]error, len(reads))
		var wg sync.WaitGroup
		for i := range reads {
			if reads[i].more {
				wg.Go(func() { errs[i] = s.queueShard(ctx, &reads[i], after, size) })
			}
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		// Every order up to bound is known: the partitions read to their
		// end hold no more, the others nothing below their last entry.
		bound, more := "", false
		var all []queueEntry
		for _, r := range reads {
			all = append(all, r.entries...)
			if r.more {
				last := r.entries[len(r.entries)-1].Key
				if !more || last < bound {
					bound = last
				}
				more = true
			}
		}
		slices.SortFunc(all, func(a, b queueEntry) int { return strings.Compare(a.Key, b.Key) })
		// One per order (its papers share its qk; a move from the bare
		// status to its shard may show two for a moment).
		all = slices.CompactFunc(all, func(a, b queueEntry) bool { return a.Key == b.Key })
		if more {
			all = slices.DeleteFunc(all, func(e queueEntry) bool { return e.Key > bound })
		}
		if len(all) >= size || !more {
			return all[:min(size, len(all))], nil
		}
	}
}

// queueRead is what the reads of one queue partition found so far.
type queueRead struct {
	partition string
	entries   []queueEntry
	// more says the last read filled its Limit: there may be more; start
	// is where the next read starts.
	more  bool
	start map[string]types.AttributeValue
}

// queueShard reads the next size entries of r's partition after the sort
// key after (continuing where r's last read stopped).
func (s *Orders) queueShard(ctx context.Context, r *queueRead, after string, size int) error {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(QueueIndex),
		KeyConditionExpression:    aws.String("qs = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": avS(r.partition)},
		Limit:                     aws.Int32(int32(size)),
		ExclusiveStartKey:         r.start,
	}
	if after != "" {
		in.KeyConditionExpression = aws.String("qs = :p AND qk > :k")
		in.ExpressionAttributeValues[":k"] = avS(after)
	}
	out, err := s.db.client.Query(ctx, in)
	if err != nil {
		return fail("Query", err)
	}
	for _, item := range out.Items {
		e, err := decodeQueueEntry(item)
		if err != nil {
			return err
		}
		r.entries = append(r.entries, e)
	}
	r.start = out.LastEvaluatedKey
	r.more = len(out.LastEvaluatedKey) > 0 && len(out.Items) > 0
	return nil
}

// queueOrders reads the orders of entries (their items with one
// BatchGetItem, then, for each order of several papers, its papers:
// completeApart) and returns those that still have a paper waiting in
// status, in the entries' order. The Pending entry of an order of several
// papers' own item stands for its papers still as created; once none is,
// it is removed here (stale: no write of the order's item would remove it).
func (s *Orders) queueOrders(ctx context.Context, status string, entries []queueEntry) ([]stampduty.OpsOrder, error) {
	keys := make([]orderKey, len(entries))
	for i, e := range entries {
		keys[i] = e.orderKey
	}
	items, err := s.getItems(ctx, keys)
	if err != nil {
		return nil, err
	}
	found := make([]orders.Stored, 0, len(entries))
	for _, k := range keys {
		if item, ok := items[k]; ok {
			o, err := decodeStored(item)
			if err != nil {
				return nil, err
			}
			found = append(found, o)
		}
	}
	if err := s.completeApart(ctx, found, false); err != nil {
		return nil, err
	}
	page := make([]stampduty.OpsOrder, 0, len(found))
	for _, o := range found {
		if o.Apart != nil && status == stampduty.StatusPending && !slices.ContainsFunc(o.Apart.Papers, func(p orders.Part) bool { return p.Version == 0 }) {
			s.dropStale(ctx, o)
		}
		if o.Waits(status) {
			page = append(page, o.OpsOrder)
		}
	}
	return page, nil
}

// dropStale removes the queue entry of o's own item, an order of several
// papers each in an item of its own: UpdateItem REMOVE qs, qk on condition
// that the order's own version is the one read (a change meanwhile wrote
// the right keys). A failure leaves the entry for the next page to drop.
func (s *Orders) dropStale(ctx context.Context, o orders.Stored) {
	_, _ = s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       orderKey{o.Owner, o.Seq}.av(),
		UpdateExpression:          aws.String("REMOVE qs, qk"),
		ConditionExpression:       aws.String("v = :v AND attribute_exists(qs)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": avN(o.Apart.Version)},
	})
}

// getItems reads the order items at keys (distinct) with BatchGetItem
// (DB.batchGet). A key with no item is absent from the answer.
func (s *Orders) getItems(ctx context.Context, keys []orderKey) (map[orderKey]map[string]types.AttributeValue, error) {
	items := make(map[orderKey]map[string]types.AttributeValue, len(keys))
	avs := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		avs[i] = k.av()
	}
	err := s.db.batchGet(ctx, s.table, avs, func(item map[string]types.AttributeValue) error {
		var k orderKey
		if err := attributevalue.UnmarshalMap(item, &k); err != nil {
			return stampduty.Internal(fmt.Errorf("decode order key: %w", err))
		}
		items[k] = item
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// decodeCursor reads a cursor Queue made.
func decodeCursor(cursor string) (queueCursor, bool) {
	var c queueCursor
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) > 1024 {
		return c, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || stampduty.StatusRank(c.Status) < 0 || c.Key == "" || c.Owner == "" || c.Seq < 1 {
		return c, false
	}
	return c, true
}
