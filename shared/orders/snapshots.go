package orders

import (
	"context"
	"encoding/json"
	"sync"

	"stampduty/shared/stampduty"
)

// RuleSnapshots reads the rule versions orders were priced with, by hash
// (store.Catalogue.RuleSnapshot): an order's duty_rule_snapshot
// (duty-rules.md §8).
type RuleSnapshots interface {
	RuleSnapshot(ctx context.Context, hash string) (json.RawMessage, error)
}

// SnapshotCache keeps the rule versions read: a version never changes
// under its hash, so a warm instance reads each once. It holds at most
// maxSnapshots (then it starts again). Safe for concurrent use.
type SnapshotCache struct {
	From RuleSnapshots
	mu   sync.Mutex
	m    map[string]json.RawMessage
}

// maxSnapshots bounds what a SnapshotCache holds: at most 8 KiB each.
const maxSnapshots = 512

// RuleSnapshot returns the version of hash, read once.
func (c *SnapshotCache) RuleSnapshot(ctx context.Context, hash string) (json.RawMessage, error) {
	c.mu.Lock()
	v, ok := c.m[hash]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := c.From.RuleSnapshot(ctx, hash)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxSnapshots {
		c.m = map[string]json.RawMessage{}
	}
	c.m[hash] = v
	c.mu.Unlock()
	return v, nil
}

// withSnapshot returns o with its duty_rule_snapshot: the version its duty
// names, or null for an order made before duty rules.
func withSnapshot(ctx context.Context, rules RuleSnapshots, o stampduty.Order) (stampduty.Order, error) {
	o.StampDuty.RuleSnapshot = &stampduty.RuleSnapshot{}
	if o.StampDuty.Duty == nil || rules == nil {
		return o, nil
	}
	v, err := rules.RuleSnapshot(ctx, o.StampDuty.Duty.Rule.Hash)
	switch {
	case stampduty.ErrorCode(err) == stampduty.ENOTFOUND:
		// A version derived from a legacy article that was never stored
		// (before `stampctl articles migrate-rules`): it shows null.
		return o, nil
	case err != nil:
		return o, err
	}
	o.StampDuty.RuleSnapshot.JSON = v
	return o, nil
}
