package store

// This file holds the operators' work queue: the queue index's keys and
// shards, its pages and their cursors, and the backfill of orders stored
// before it or before its shards.

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

// Each status's queue is spread over Shards partition key values (the
// outbox and due keys share the scheme: shards.go). With one value per
// status, every new order of every caller
// wrote the same key (Pending): one partition's 1,000 WCU/s bounded the
// whole service's creates, and the time-ordered sort key kept DynamoDB
// from splitting it. An order's shard is a hash of its documentId, so the
// shares are random: 1/16 each on average, and in a run of 2,000 orders the
// largest shard stays far below 1/8 of the index's writes (it would need
// twice its mean, about 11 standard deviations). A page reads every shard.

// queueKey is o's sort key in the queue index: createdAt#documentId, so
// that the queue is oldest first, ties broken by documentId. It is unique:
// the documentId is.
func queueKey(o stampduty.Order) string { return o.CreatedAt + "#" + o.DocumentID }

// testQueue begins the queue partitions of test orders (test-mode.md):
// test#<status>#<nn>. Test orders wait in queues of their own, shaped as
// the live ones, so the live queue never reads them (a page and a count
// cost what they did, whatever the test orders) and the test queue reads
// only them; filtering a shared queue would read (and bill) every test
// entry on every live page and leave pages short.
const testQueue = "test#"

// queuePartition is the queue index's partition key of owner's order with
// documentId doc while it waits in status: <status>#<nn>, nn its shard
// (shardKey: FNV-1a of doc modulo Shards, two digits), prefixed testQueue
// when owner is a test principal (stampduty.CallerOf). The documentId and the owner
// never change, so an order keeps its shard and its queue's mode for life
// and only the status part moves.
func queuePartition(owner, status, doc string) string {
	return shardKey(queueStatus(status, !isLive(owner)), doc)
}

// queueStatus is the status part of a queue partition key: status, or
// testQueue+status for test orders.
func queueStatus(status string, test bool) string {
	if test {
		return testQueue + status
	}
	return status
}

// isLive reports whether owner is a live principal (not a caller's test
// principal).
func isLive(owner string) bool {
	_, live := stampduty.CallerOf(owner)
	return live
}

// queuePartitions returns the partition keys a page of status's queue
// reads. The live queue: its shards, and the bare status under which
// orders stored before the shards wait until a change or `stampctl orders
// backfill` moves them to their shard. The test queue (test): its shards
// only, as test orders came after the shards.
func queuePartitions(status string, test bool) []string {
	keys := shardKeys(queueStatus(status, test))
	if test {
		return keys[1:]
	}
	return keys
}

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

// Backfill puts every order stored before the work queue existed, or
// before its shards, into its shard: it scans the table and gives each
// order without queue keys, or with the bare status as its qs, its
// sharded qs and its qk (as Replace would), with a conditional UpdateItem
// that leaves alone an order a change reached first. A test order's item
// (or paper's) whose entry is in the live queue, stored before test
// orders had queues of their own, moves to the test queue (the same qs
// prefixed testQueue, on condition that qs is still the one read). The
// own item of an order of several papers is never queued here: without
// queue keys, its papers wait in their own items. It
// returns how many items it queued or moved. Running it again queues
// nothing more.
func (s *Orders) Backfill(ctx context.Context) (int, error) {
	n := 0
	err := s.db.scan(ctx, s.table, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			old, ok := item["qs"].(*types.AttributeValueMemberS)
			if ok && strings.Contains(old.Value, "#") {
				moved, err := s.toTestQueue(ctx, item, old.Value)
				if err != nil {
					return err
				}
				if moved {
					n++
				}
				continue
			}
			if _, ok := item["doc"]; !ok { // a caller's counter or a void (seq.go)
				continue
			}
			if _, ok := item["pa"]; ok {
				// An order of several papers came after the queue: its own
				// item without queue keys is one whose papers all wait in
				// items of their own (the stale-entry cleanup, a cancel).
				continue
			}
			o, err := decodeStored(item)
			if err != nil {
				return err
			}
			if o.QueueStatus() == "" { // a cancelled order waits in no queue
				continue
			}
			in := &dynamodb.UpdateItemInput{
				TableName:           aws.String(s.table),
				Key:                 orderKey{o.Owner, o.Seq}.av(),
				UpdateExpression:    aws.String("SET qs = :qs, qk = :qk"),
				ConditionExpression: aws.String("attribute_exists(seq) AND attribute_not_exists(qs)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":qs": avS(queuePartition(o.Owner, o.QueueStatus(), o.DocumentID)), ":qk": avS(queueKey(o.Order))},
			}
			if ok {
				in.ConditionExpression = aws.String("qs = :old")
				in.ExpressionAttributeValues[":old"] = avS(old.Value)
			}
			_, err = s.db.client.UpdateItem(ctx, in)
			if conditionFailed(err) {
				continue
			}
			if err != nil {
				return writeFail("UpdateItem", err)
			}
			n++
		}
		return nil
	})
	return n, err
}

// toTestQueue moves item's queue entry, qs, to the test queue when item is
// a test order's (or paper's) and qs a live queue's (Backfill): UpdateItem
// SET qs = test#qs on condition qs = :old (a change meanwhile wrote the
// right one). It reports whether it moved the entry.
func (s *Orders) toTestQueue(ctx context.Context, item map[string]types.AttributeValue, qs string) (bool, error) {
	owner, _ := item["owner"].(*types.AttributeValueMemberS)
	if owner == nil || isLive(owner.Value) || strings.HasPrefix(qs, testQueue) {
		return false, nil
	}
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       map[string]types.AttributeValue{"owner": item["owner"], "seq": item["seq"]},
		UpdateExpression:          aws.String("SET qs = :qs"),
		ConditionExpression:       aws.String("qs = :old"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":qs": avS(testQueue + qs), ":old": avS(qs)},
	})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, writeFail("UpdateItem", err)
	}
	return true, nil
}
