package fake

import (
	"context"
	"sync"
	"time"

	"stampduty/shared/orders"
)

// Keys is an orders.Keys: Idempotency-Key records in memory, with the
// DynamoDB store's rules. A record counts while the Unix second of now is
// below its expiry, which is kept in whole seconds; a claim may replace a
// record that does not count, or the very claim it repeats.
type Keys struct {
	mu   sync.Mutex
	recs map[[2]string]orders.KeyRecord
}

// live returns the record of (owner, key) if it counts at now; k.mu is held.
func (k *Keys) live(owner, key string, now time.Time) (orders.KeyRecord, bool) {
	rec, ok := k.recs[[2]string{owner, key}]
	return rec, ok && now.Unix() < rec.Expires.Unix()
}

// Claim records that a request holds the key, unless a live record of
// another request does; it returns the record standing and whether this
// call made it.
func (k *Keys) Claim(_ context.Context, owner, key, fp, orderID string, now time.Time, lease, ttl time.Duration) (orders.KeyRecord, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if old, ok := k.live(owner, key, now); ok && old.OrderID != orderID {
		return old, false, nil
	}
	rec := orders.KeyRecord{Fingerprint: fp, State: orders.KeyPending, OrderID: orderID, Claimed: now,
		Lease: now.Add(lease), Expires: time.Unix(now.Add(ttl).Unix(), 0)}
	if k.recs == nil {
		k.recs = map[[2]string]orders.KeyRecord{}
	}
	k.recs[[2]string{owner, key}] = rec
	return rec, true, nil
}

// Get returns the live record of the key; ok is false when there is none.
func (k *Keys) Get(_ context.Context, owner, key string, now time.Time) (orders.KeyRecord, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	rec, ok := k.live(owner, key, now)
	if !ok {
		return orders.KeyRecord{}, false, nil
	}
	return rec, true, nil
}

// Complete marks the key's order as created.
func (k *Keys) Complete(_ context.Context, owner, key string) error {
	return k.update(owner, key, func(rec *orders.KeyRecord) bool { rec.State = orders.KeyDone; return true })
}

// Release drops the pending claim of orderID, if the key still holds it.
func (k *Keys) Release(_ context.Context, owner, key, orderID string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if rec, ok := k.recs[[2]string{owner, key}]; ok && rec.State == orders.KeyPending && rec.OrderID == orderID {
		delete(k.recs, [2]string{owner, key})
	}
	return nil
}

// TakeOver gives the pending claim rec, whose lease ran out, to the caller
// with a new lease; ok is false when another request took it over first.
func (k *Keys) TakeOver(_ context.Context, owner, key string, rec orders.KeyRecord, now time.Time, lease time.Duration) (bool, error) {
	ok := false
	err := k.update(owner, key, func(cur *orders.KeyRecord) bool {
		ok = cur.State == orders.KeyPending && cur.Lease.Equal(rec.Lease)
		if ok {
			cur.Lease = now.Add(lease)
		}
		return ok
	})
	return ok, err
}

// update applies change to the key's record, if there is one, and keeps
// the result when change returns true.
func (k *Keys) update(owner, key string, change func(*orders.KeyRecord) bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	rec, ok := k.recs[[2]string{owner, key}]
	if ok && change(&rec) {
		k.recs[[2]string{owner, key}] = rec
	}
	return nil
}
