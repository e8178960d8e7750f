package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// IDs hands out unique positive integer ids from the id counter of the
// counters table, spread over IDShards counter items ("id#00"…"id#63") so
// that no counter item takes more than its share of the table's writes.
//
// The ids are cut into chunks of IDChunk: global chunk g holds the ids
// g*IDChunk+1 … g*IDChunk+IDChunk, and shard i owns the chunks g with
// g mod IDShards = i, counting them in its item's value (its chunk number
// k gives g = k*IDShards + i), so no two shards can hand out one id. An
// instance reserves a block of chunks by one atomic ADD on a shard (a
// random one first, then the next shard at each reservation, so even an
// instance's few reservations spread) and serves ids from memory, so most
// ids cost no DynamoDB call. Ids are unique across every entity (orders,
// fulfillments, stamp duties, webhooks, files, articles); a reservation's
// n ids are consecutive; ids are not ordered across shards or instances,
// and the unused rest of a block is lost when an instance ends.
type IDs struct {
	db     *DB
	table  string
	chunks int64 // per reservation
	shard  int   // the next reservation's

	mu     sync.Mutex
	free   []int64 // the first ids of reserved chunks not yet started
	next   int64   // the next id of the chunk in use, 0 when none
	remain int64   // ids left in the chunk in use from next
}

// IDBlock is how many ids a function reserves per counter call: 100 orders'
// worth (an order takes 3: order, fulfillment, stamp duty), so a warm create
// makes the counter call once per 99 orders (33 per chunk of IDChunk).
const IDBlock = 300

// IDShards is how many counter items the ids come from: more than the
// Shards of the index keys, because an instance takes a block only once per
// 99 orders, so a few dozen reservations must already spread (with 16, the
// 40 reservations of 20 instances' 100 orders each put more than 1/8 of the
// writes on one item about one run in ten; with 64, none in 10,000
// simulated). A shard costs nothing until used: its item is created on
// its first reservation.
const IDShards = 64

// IDChunk is how many consecutive ids a chunk holds: a reservation's n ids
// (at most IDChunk) never straddle two chunks.
const IDChunk = 100

// idCounter is the single counter item ids came from before the shards;
// idMargin is how far above its value the shards begin: the ids the
// instances of the previous release, still running while a deployment
// switches over, may take from it after a shard read it (each takes at
// most one block per invocation; 1,000,000 covers 3,333 such blocks).
const (
	idCounter = "id"
	idMargin  = 1_000_000
)

// maxID is JSON's largest safe integer: no id goes above it, leaving
// about 9.007e15 ids (2^53/IDChunk chunks).
const maxID = 1<<53 - 1

// IDs returns the id source of the given counters table, reserving block
// ids (rounded up to whole chunks) per DynamoDB call.
func (db *DB) IDs(table string, block int64) *IDs {
	return &IDs{db: db, table: table, chunks: max(1, (block+IDChunk-1)/IDChunk), shard: rand.IntN(IDShards)}
}

// idShard returns the name of shard i's counter item.
func idShard(i int) string { return shardValue(idCounter, i) }

// counterItem is a counter item as Reserve reads it back: its value (the
// chunks reserved on a shard; the last id handed out for the single
// counter before the shards) and a shard's base, nil when absent.
type counterItem struct {
	Value *int64 `dynamodbav:"value"`
	Base  *int64 `dynamodbav:"b"`
}

// Reserve returns the first of n consecutive unused ids (n at most
// IDChunk).
func (s *IDs) Reserve(ctx context.Context, n int64) (int64, error) {
	if n < 1 || n > IDChunk {
		return 0, stampduty.Internal(fmt.Errorf("ids: %d ids at once, want 1 to %d", n, IDChunk))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remain < n { // the rest of the chunk in use is too short: lost
		if len(s.free) == 0 {
			if err := s.reserve(ctx); err != nil {
				return 0, err
			}
		}
		s.next, s.remain, s.free = s.free[0], IDChunk, s.free[1:]
	}
	first := s.next
	s.next, s.remain = s.next+n, s.remain-n
	return first, nil
}

// reserve takes a block of chunks from the next shard. A shard's first
// reservation (its item has no base yet) also seeds it; see seed.
func (s *IDs) reserve(ctx context.Context) error {
	i := s.shard
	s.shard = (s.shard + 1) % IDShards
	c, err := s.update(ctx, i, "ADD #v :n", map[string]string{"#v": "value"}, map[string]types.AttributeValue{":n": avN(s.chunks)})
	if err == nil && c.Base == nil {
		c.Base, err = s.seed(ctx, i)
	}
	if err != nil {
		return err
	}
	if c.Value == nil {
		return stampduty.Internal(fmt.Errorf("counter %s: no value", idShard(i)))
	}
	for k := *c.Value - s.chunks + 1; k <= *c.Value; k++ {
		first := ((*c.Base+k)*IDShards+int64(i))*IDChunk + 1
		if first+IDChunk-1 > maxID {
			return stampduty.Internal(fmt.Errorf("counter %s: ids past 2^53-1", idShard(i)))
		}
		s.free = append(s.free, first)
	}
	return nil
}

// update applies expr to shard i's counter item and returns the item.
func (s *IDs) update(ctx context.Context, i int, expr string, names map[string]string, values map[string]types.AttributeValue) (counterItem, error) {
	out, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       map[string]types.AttributeValue{"name": avS(idShard(i))},
		UpdateExpression:          aws.String(expr),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return counterItem{}, fail("UpdateItem", err)
	}
	var c counterItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &c); err != nil {
		return counterItem{}, stampduty.Internal(fmt.Errorf("counter %s: %w", idShard(i), err))
	}
	return c, nil
}

// seed gives shard i's counter item its base, b, unless another instance
// did first, and returns the base stored: the shard's chunk k is chunk
// b+k, so its first begins above every id the single counter of the
// releases before the shards handed out, and the margin past it (read
// consistently; 0 on a stack that never had it). Until the base is
// stored no instance uses the chunks it added, and every instance uses the
// one stored, so the writes need no condition: none ever fails.
func (s *IDs) seed(ctx context.Context, i int) (*int64, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"name": avS(idCounter)}})
	if err != nil {
		return nil, fail("GetItem", err)
	}
	var old counterItem
	if err := attributevalue.UnmarshalMap(out.Item, &old); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("counter %s: %w", idCounter, err))
	}
	above := int64(0)
	if old.Value != nil {
		above = *old.Value + idMargin
	}
	// Chunk b+k (k ≥ 1) begins at ((b+k)*IDShards+i)*IDChunk+1 >
	// (b+1)*IDShards*IDChunk: above the old ids when b*IDShards*IDChunk ≥ above.
	b := (above + IDShards*IDChunk - 1) / (IDShards * IDChunk)
	c, err := s.update(ctx, i, "SET b = if_not_exists(b, :b)", nil, map[string]types.AttributeValue{":b": avN(b)})
	if err == nil && c.Base == nil {
		err = stampduty.Internal(fmt.Errorf("counter %s: no base", idShard(i)))
	}
	return c.Base, err
}
