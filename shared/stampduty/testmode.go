package stampduty

import (
	"strings"
	"time"
)

// This file holds what the domain knows of test mode (test-mode.md): whose
// orders are test orders, how far apart they step, and the magic
// purchasedBy values of the unhappy paths (how long they live: expiry.go).

// testSuffix ends the owner key of a caller's test principal (TestOwnerOf):
// '~' is in no caller's name, so a test key is never a live caller's key.
const testSuffix = "~test"

// TestOwnerOf returns the owner key of the test principal of the caller
// named owner: what the caller's test tokens act as.
func TestOwnerOf(owner string) string { return owner + testSuffix }

// CallerOf returns the caller's name of an owner key and whether the key
// is the caller's live principal (false for a test principal's key).
func CallerOf(ownerKey string) (caller string, live bool) {
	caller, test := strings.CutSuffix(ownerKey, testSuffix)
	return caller, !test
}

// IsTestOwner reports whether ownerKey is a caller's test principal: its
// orders are test orders.
func IsTestOwner(ownerKey string) bool { return strings.HasSuffix(ownerKey, testSuffix) }

// DefaultStepEvery is how far apart a test order's steps are: "about 5
// seconds apart".
const DefaultStepEvery = 5 * time.Second

// The magic purchasedBy values of a test order (test-mode.md, "Magic
// values"). On a live order they are only text.
const (
	// MagicStuck keeps a test order Pending: it never steps.
	MagicStuck = "test:stuck"
	// MagicCancel has a test order cancelled, as by an operator with the
	// reason TestCancellation, at the step after its first.
	MagicCancel = "test:cancel"
)

// TestCancellation is the reason a MagicCancel test order is cancelled with.
const TestCancellation = "Test cancellation"

// TestModeActor is who a test order's status history names for the steps it
// made itself (operators see it where they would see an operator).
const TestModeActor = "test mode"

// ErrTestOrderMoves is the answer to an operator's change of a test
// order's paper: test orders move themselves.
func ErrTestOrderMoves(doc string) error {
	return Errorf(ECONFLICT, "Order %s is a test order: its papers move themselves (test mode), so operators cannot move them or attach their certificates.", doc)
}
