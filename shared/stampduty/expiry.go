package stampduty

import (
	"fmt"
	"time"
)

// TestDataLifetime is how long a test order and what belongs to it are
// kept. test-mode.md, "Costs": "Test data expires: test orders, their
// files and their deliveries are deleted 30 days after creation (DynamoDB
// TTL and an S3 lifecycle rule, both in the template)." Live data never
// expires.
//
// What the lifetime counts from: the order's createdAt for every item of
// the orders and deliveries tables that belongs to the order (its item,
// its papers' items, and each delivery job and attempt record of its
// events), so an order and its delivery log go together and a caller never
// meets a delivery of an order that is gone; a file's own creation for its
// bytes (S3 counts from the object's creation, which for a test order is
// seconds to minutes after the order's).
const TestDataLifetime = 30 * 24 * time.Hour

// TestDataExpiry returns when the data of a test order created at
// createdAt (TimeLayout) expires: TestDataLifetime later.
func TestDataExpiry(createdAt string) (time.Time, error) {
	at, err := time.Parse(TimeLayout, createdAt)
	if err != nil {
		return time.Time{}, fmt.Errorf("expiry of test data created at %q: %w", createdAt, err)
	}
	return at.Add(TestDataLifetime), nil
}
