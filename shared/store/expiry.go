package store

// This file holds the expiry of test data (test-mode.md, "Costs"): the TTL
// attribute every item of a test order carries in the orders and
// deliveries tables.

import (
	"time"

	"stampduty/shared/stampduty"
)

// TTLAttribute is the attribute DynamoDB's TTL reads (epoch seconds) on
// every table that has one: template.yaml's TimeToLiveSpecification of the
// orders, deliveries, idempotency and uploads tables names it.
const TTLAttribute = "expires"

// testExpires returns the TTL of an item that belongs to owner's order
// created at createdAt: stampduty.TestDataExpiry in epoch seconds when
// owner is a test principal (stampduty.CallerOf), 0 for a live owner, whose items
// never expire (the attribute is then left out: omitempty).
//
// Which items carry it: in the orders table, an order's item, its papers'
// items (papers.go) and a void marker (Void: its seq's order never came to
// be); in the deliveries table, every job and attempt record of the
// order's events (deliveries.go, attempts.go), counted from the order's
// createdAt, not the event's or the attempt's time, so an order and its
// delivery log go together. Every write of such an item is either a whole
// PutItem built here (newOrderItem, newPaperItem, newJobItem, the attempt
// record) or an UpdateItem conditioned on the item existing, which keeps
// the attribute. Not carried, so never expiring: the caller's counter and
// voids items (a test owner's seqs are never reused, so its documentIds
// stay unique after its orders are gone), its webhooks item, its tokens;
// idempotency records already expire after 24 hours, test or live.
//
// A createdAt the service did not format (never: every order's is
// stampduty.FormatTime's) counts from now, so a test item still expires.
func testExpires(owner, createdAt string) int64 {
	if _, live := stampduty.CallerOf(owner); live {
		return 0
	}
	at, err := stampduty.TestDataExpiry(createdAt)
	if err != nil {
		at = time.Now().Add(stampduty.TestDataLifetime)
	}
	return at.Unix()
}
