package webhooks

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/stampduty"
)

// lossyStore keeps sets in memory; while lose > 0 it applies a save but
// answers ErrRaced, as a store does whose first answer was lost and whose
// retry then failed its condition on its own write.
type lossyStore struct {
	sets map[string]Set
	lose int
}

func (s *lossyStore) Webhooks(_ context.Context, owner string) (Set, error) {
	return s.sets[owner], nil
}

func (s *lossyStore) SaveWebhooks(_ context.Context, owner string, set Set, v int64) error {
	if s.sets[owner].V != v {
		return fmt.Errorf("save: %w", ErrRaced)
	}
	set.V = v + 1
	s.sets[owner] = set
	if s.lose > 0 {
		s.lose--
		return fmt.Errorf("save: %w", ErrRaced)
	}
	return nil
}

type counter struct{ n atomic.Int64 }

func (c *counter) Reserve(_ context.Context, n int64) (int64, error) { return c.n.Add(n) - n + 1, nil }

func TestLostAnswers(t *testing.T) {
	st := &lossyStore{sets: map[string]Set{}}
	r := &Registry{Hooks: st, IDs: &counter{}, Guard: Guard{Local: true}, Now: time.Now}
	ctx := context.Background()

	t.Run("ARegistrationIsStoredOnce", func(t *testing.T) {
		st.lose = 1
		w, err := r.Register(ctx, "acme", Registration{URL: "http://127.0.0.1:9/x", Events: []string{stampduty.EventOrderCreated}})
		if err != nil {
			t.Fatal(err)
		}
		if live := st.sets["acme"].Live; len(live) != 1 || live[0].DocumentID != w.DocumentID {
			t.Errorf("stored %+v, want the one webhook once", live)
		}
	})
	t.Run("ADeletionAnswersTheWebhook", func(t *testing.T) {
		doc := st.sets["acme"].Live[0].DocumentID
		st.lose = 1
		w, err := r.Delete(ctx, "acme", doc)
		if err != nil || w.DocumentID != doc {
			t.Fatalf("Delete = %+v, %v", w, err)
		}
		if s := st.sets["acme"]; len(s.Live) != 0 || len(s.Gone) != 1 || s.Gone[0].Secret != "" {
			t.Errorf("stored %+v, want it gone once, without its secret", s)
		}
		var e *stampduty.Error
		if _, err := r.Delete(ctx, "acme", doc); !errors.As(err, &e) || e.Code != stampduty.ENOTFOUND {
			t.Errorf("deleting again: %v, want ENOTFOUND", err)
		}
	})
	t.Run("GoneKeepsTheNewest", func(t *testing.T) {
		for i := range MaxGone + 5 {
			w, err := r.Register(ctx, "many", Registration{URL: "http://127.0.0.1:9/x", Events: []string{stampduty.EventOrderCreated}})
			if err != nil {
				t.Fatal(i, err)
			}
			if _, err := r.Delete(ctx, "many", w.DocumentID); err != nil {
				t.Fatal(err)
			}
		}
		if gone := st.sets["many"].Gone; len(gone) != MaxGone || gone[0].ID < gone[1].ID {
			t.Errorf("gone holds %d, newest first: %v", len(gone), len(gone) > 1 && gone[0].ID > gone[1].ID)
		}
	})
}
