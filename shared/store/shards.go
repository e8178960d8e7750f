package store

// This file spreads the index keys every caller's writes would otherwise
// share (the outbox's obp, the due jobs' dp, the queue's status) over
// shards, and reads them back: one Query per shard, all at once, each in
// its key's order, merged (the outbox is read by a Scan instead; see
// Orders.Pending).

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/webhooks"
)

// Shards is how many values the outbox and due index keys take: each
// event's entry lands on one of them by a hash of its order's documentId
// (outbox) or of its job's key (due), so no value takes more than about
// 1/16 of its index's writes whatever the callers do, and each value's
// partition gets 1/16 of the load (DynamoDB's 1,000 WCU/s per partition
// then allow about 16,000 index writes a second; see the table design).
const Shards = 16

// shardKey returns the sharded value of an index key: "<base>#<nn>", nn
// from the FNV-1a hash of what.
func shardKey(base, what string) string {
	return shardValue(base, int(shardOf(what, Shards)))
}

// shardValue returns shard i's value of a sharded key: "<base>#<nn>", the
// one spelling of a stored shard key.
func shardValue(base string, i int) string { return fmt.Sprintf("%s#%02d", base, i) }

// shardOf returns what's shard among n: the FNV-1a hash of what, mod n.
func shardOf(what string, n uint32) uint32 {
	h := fnv.New32a()
	h.Write([]byte(what))
	return h.Sum32() % n
}

// shardKeys returns every value of a sharded key, the unsharded base
// first: items written before the sharding carry it until their next
// write, which moves them to their shard.
func shardKeys(base string) []string {
	keys := []string{base}
	for i := range Shards {
		keys = append(keys, shardValue(base, i))
	}
	return keys
}

// pollerKeys returns the values of a sharded key that poller p reads: the
// shards s with s mod n = i for poller i of n, and the unsharded base for
// poller 0 only (every value for the only poller).
func pollerKeys(base string, p webhooks.Poller) []string {
	var keys []string
	if i, _ := p.Segment(); i == 0 {
		keys = append(keys, base)
	}
	for i := range Shards {
		if p.Owns(i) {
			keys = append(keys, shardValue(base, i))
		}
	}
	return keys
}

// queryShards runs query (a Query of one key value) for every value of
// keys at once and returns their items merged by sortKey, each shard's in
// its own order: Shards+1 Queries, each billed for what it returns (at
// least 0.5 RCU).
func (db *DB) queryShards(ctx context.Context, keys []string, sortKey string, query func(key string) *dynamodb.QueryInput) ([]map[string]types.AttributeValue, error) {
	var (
		wg    sync.WaitGroup
		pages = make([][]map[string]types.AttributeValue, len(keys))
		errs  = make([]error, len(keys))
	)
	for i, k := range keys {
		wg.Go(func() {
			out, err := db.client.Query(ctx, query(k))
			if err != nil {
				errs[i] = fail("Query", err)
				return
			}
			pages[i] = out.Items
		})
	}
	wg.Wait()
	var all []map[string]types.AttributeValue
	for i := range keys {
		if errs[i] != nil {
			return nil, errs[i]
		}
		all = append(all, pages[i]...)
	}
	slices.SortStableFunc(all, func(a, b map[string]types.AttributeValue) int {
		return cmpS(a[sortKey], b[sortKey])
	})
	return all, nil
}

// cmpS compares two string attributes (an absent one sorts first).
func cmpS(a, b types.AttributeValue) int {
	sa, _ := a.(*types.AttributeValueMemberS)
	sb, _ := b.(*types.AttributeValueMemberS)
	switch {
	case sa == nil && sb == nil:
		return 0
	case sa == nil:
		return -1
	case sb == nil:
		return 1
	}
	switch {
	case sa.Value < sb.Value:
		return -1
	case sa.Value > sb.Value:
		return 1
	}
	return 0
}
