package stampduty_test

import (
	"testing"
	"time"

	"stampduty/shared/stampduty"
)

// TestTestDataExpiry: test data expires 30 days (test-mode.md) after the
// createdAt it is given, to the millisecond; a createdAt that is not the
// service's layout is an error, never a zero time.
func TestTestDataExpiry(t *testing.T) {
	got, err := stampduty.TestDataExpiry("2026-11-21T05:00:00.123Z")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 21, 5, 0, 0, 123e6, time.UTC); !got.Equal(want) {
		t.Errorf("TestDataExpiry = %v, want %v", got, want)
	}
	if got, want := stampduty.TestDataLifetime, 30*24*time.Hour; got != want {
		t.Errorf("TestDataLifetime = %v, want %v (test-mode.md: 30 days)", got, want)
	}
	if _, err := stampduty.TestDataExpiry("21/11/2026"); err == nil {
		t.Error("TestDataExpiry of a malformed createdAt: no error")
	}
}
