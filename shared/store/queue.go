package store

// This file holds the operators' work queue: the queue index's keys and
// shards, its pages and their cursors, and the backfill of orders stored
// before it or before its shards.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

// queuePartition is the queue index's partition key of the order with
// documentId doc while it waits in status: <status>#<nn>, nn its shard
// (shardKey: FNV-1a of doc modulo Shards, two digits). The documentId never
// changes, so an order keeps its shard for life and only the status part
// moves.
func queuePartition(status, doc string) string { return shardKey(status, doc) }

// queuePartitions returns the partition keys a page of status's queue
// reads: its shards, and the bare status under which orders stored before
// the shards wait until a change or `stampctl orders backfill` moves them
// to their shard.
func queuePartitions(status string) []string { return shardKeys(status) }

// queueEntry is an entry of the queue index, which projects the keys only:
// its own and the order item's.
type queueEntry struct {
	Partition string `dynamodbav:"qs"`
	Key       string `dynamodbav:"qk"`
	orderKey
}

// queueCursor is the position a queue page ends at: the status, and the
// last order's keys in the queue index (its qk) and in the table. Only Key
// places the next page (qk is unique); the cursor keeps the form it had
// before the shards, so a cursor handed out then still works.
type queueCursor struct {
	Status string `json:"s"`
	Key    string `json:"k"`
	Owner  string `json:"o"`
	Seq    int64  `json:"n"`
}

// Queue returns up to size orders waiting in status, oldest first (by
// createdAt, then documentId) across callers and shards, after the
// position cursor names, and the cursor of the next page when this one is
// full ("" otherwise, as before the shards: a full last page has a cursor,
// to an empty page). It Queries every shard of the status (queuePartitions)
// at once for up to size entries after the cursor, merges them by qk, and
// reads the first size orders with one BatchGetItem, eventually consistent
// like the index; an order that has moved on from status since its entry
// was read is left out. The cursor is opaque to callers; one that Queue did
// not make for this status is EINVALID.
func (s *Orders) Queue(ctx context.Context, status, cursor string, size int) ([]stampduty.OpsOrder, string, error) {
	after := ""
	if cursor != "" {
		c, ok := decodeCursor(cursor)
		if !ok || c.Status != status {
			return nil, "", stampduty.Errorf(stampduty.EINVALID, "Invalid pagination[cursor]: not a cursor of this queue")
		}
		after = c.Key
	}
	if size < 1 {
		return []stampduty.OpsOrder{}, "", nil
	}
	entries, err := s.queueEntries(ctx, status, after, size)
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
		b, _ := json.Marshal(queueCursor{Status: status, Key: last.Key, Owner: last.Owner, Seq: last.Seq})
		next = base64.RawURLEncoding.EncodeToString(b)
	}
	return page, next, nil
}

// queueEntries returns the first size entries of status's queue after the
// sort key after ("" from the start), oldest first: one Query per
// partition, all at once.
func (s *Orders) queueEntries(ctx context.Context, status, after string, size int) ([]queueEntry, error) {
	parts := queuePartitions(status)
	found := make([][]queueEntry, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() { found[i], errs[i] = s.queueShard(ctx, p, after, size) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	all := slices.Concat(found...)
	slices.SortFunc(all, func(a, b queueEntry) int { return strings.Compare(a.Key, b.Key) })
	// An order has one entry, but a move from the bare status to its shard
	// may show both for a moment.
	all = slices.CompactFunc(all, func(a, b queueEntry) bool { return a.orderKey == b.orderKey })
	return all[:min(size, len(all))], nil
}

// queueShard returns the first size entries of the queue partition p after
// the sort key after.
func (s *Orders) queueShard(ctx context.Context, p, after string, size int) ([]queueEntry, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(QueueIndex),
		KeyConditionExpression:    aws.String("qs = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": avS(p)},
		Limit:                     aws.Int32(int32(size)),
	}
	if after != "" {
		in.KeyConditionExpression = aws.String("qs = :p AND qk > :k")
		in.ExpressionAttributeValues[":k"] = avS(after)
	}
	out, err := s.db.client.Query(ctx, in)
	if err != nil {
		return nil, fail("Query", err)
	}
	var entries []queueEntry
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &entries); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("decode queue entries: %w", err))
	}
	return entries, nil
}

// queueOrders reads the orders of entries and returns those still waiting
// in status, in the entries' order.
func (s *Orders) queueOrders(ctx context.Context, status string, entries []queueEntry) ([]stampduty.OpsOrder, error) {
	keys := make([]orderKey, len(entries))
	for i, e := range entries {
		keys[i] = e.orderKey
	}
	items, err := s.getItems(ctx, keys)
	if err != nil {
		return nil, err
	}
	page := make([]stampduty.OpsOrder, 0, len(entries))
	for _, k := range keys {
		item, ok := items[k]
		if !ok {
			continue
		}
		o, err := decodeStored(item)
		if err != nil {
			return nil, err
		}
		if o.QueueStatus() == status {
			page = append(page, o.OpsOrder)
		}
	}
	return page, nil
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
// that leaves alone an order a change reached first. It returns how many
// orders it queued. Running it again queues nothing more.
func (s *Orders) Backfill(ctx context.Context) (int, error) {
	n := 0
	err := s.db.scan(ctx, s.table, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			old, ok := item["qs"].(*types.AttributeValueMemberS)
			if ok && strings.Contains(old.Value, "#") {
				continue
			}
			if _, ok := item["doc"]; !ok { // a caller's counter or a void (seq.go)
				continue
			}
			o, err := decodeStored(item)
			if err != nil {
				return err
			}
			in := &dynamodb.UpdateItemInput{
				TableName:           aws.String(s.table),
				Key:                 orderKey{o.Owner, o.Seq}.av(),
				UpdateExpression:    aws.String("SET qs = :qs, qk = :qk"),
				ConditionExpression: aws.String("attribute_exists(seq) AND attribute_not_exists(qs)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":qs": avS(queuePartition(o.QueueStatus(), o.DocumentID)), ":qk": avS(queueKey(o.Order))},
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
