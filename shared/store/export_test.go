package store

import "time"

// OutboxShard and JobDueShard expose the shard of an order's outbox entry
// and of a job's due entry to the tests of package store_test.
var (
	OutboxShard = outboxShard
	JobDueShard = jobDueShard
)

// SetClock makes c (and the articles table cache it falls back on) read
// the time from now, so that tests step past a TTL without sleeping: a
// sleep is a race with the machine's load.
func (c *SnapshotCache) SetClock(now func() time.Time) {
	c.now = now
	if c.legacy != nil {
		c.legacy.now = now
	}
}

// SetClock makes c read the time from now.
func (c *ArticleCache) SetClock(now func() time.Time) { c.now = now }
