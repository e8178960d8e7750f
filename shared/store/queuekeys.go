package store

// This file holds the queue index's keys: an order's sort key, and its
// partition key by status, shard and mode (live or test).

import "stampduty/shared/stampduty"

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
