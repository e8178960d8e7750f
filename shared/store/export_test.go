package store

// OutboxShard and JobDueShard expose the shard of an order's outbox entry
// and of a job's due entry to the tests of package store_test.
var (
	OutboxShard = outboxShard
	JobDueShard = jobDueShard
)
