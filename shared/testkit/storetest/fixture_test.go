package storetest

import (
	"context"
	"testing"

	"stampduty/shared/store"
)

// TestFixtureIDs: fixture ids run from 1 without gaps or repeats, and stop
// below the id counter's first chunk (store.IDShards × store.IDChunk).
func TestFixtureIDs(t *testing.T) {
	ids := (&Env{}).FixtureIDs()
	ctx := context.Background()
	for _, step := range []struct{ n, first int64 }{{3, 1}, {1, 4}, {3, 5}} {
		if got, err := ids.Reserve(ctx, step.n); err != nil || got != step.first {
			t.Fatalf("Reserve(%d) = %d, %v, want %d", step.n, got, err, step.first)
		}
	}
	if _, err := ids.Reserve(ctx, store.IDShards*store.IDChunk); err == nil {
		t.Error("Reserve past the counter's first chunk succeeded")
	}
}
