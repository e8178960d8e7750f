package orders

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"stampduty/shared/stampduty"
)

// HoldFor is how long a sweeper run holds a watch it acts on: when the run
// dies half-way, the watch is due again that much later.
const HoldFor = 10 * time.Minute

// sweepBatch is how many due watches a sweeper run reads at a time.
const sweepBatch = 100

// Sweeper removes, once each watch is due, the objects of the watch that
// its order does not point at, then drops the watch (see Watch): files of
// requests that failed or were killed half-way, files replaced when the
// request could not remove them, and staged uploads never attached.
type Sweeper struct {
	Watches Watches
	Orders  interface {
		Reread(ctx context.Context, s Stored) (Stored, error)
	}
	Files interface {
		Purge(ctx context.Context, key string) error
	}
	Now func() time.Time
	// Log receives the line of each Run (slog's JSON); nil discards.
	Log io.Writer
}

// Run is one scheduled run: it sweeps (Sweep) and logs what it did as one
// line, level ERROR when the run failed (its error is the run's), INFO
// otherwise.
func (s *Sweeper) Run(ctx context.Context) error {
	done, err := s.Sweep(ctx)
	if s.Log != nil {
		level := slog.LevelInfo
		if err != nil {
			level = slog.LevelError
		}
		slog.New(slog.NewJSONHandler(s.Log, nil)).Log(ctx, level, "sweep", "settled", done.Settled, "removed", done.Removed, "failed", done.Failed)
	}
	return err
}

// Swept is what a sweeper run did: the watches it settled, the objects it
// removed (removing one already gone counts too) and the watches it
// failed to settle, which it leaves for a later run.
type Swept struct {
	Settled, Removed, Failed int
}

// Sweep settles every watch due now: it holds it (one conditional write:
// no claim, request or other run acts on it meanwhile, and a watch that
// changed since it was read is left alone), reads its order consistently
// unless every key is a staging key (never pointed at), removes each key the
// order does not point at, every version, and drops the watch. It goes on
// until no watch is due, a batch settles none, or ctx ends.
func (s *Sweeper) Sweep(ctx context.Context) (Swept, error) {
	var done Swept
	for ctx.Err() == nil {
		now := s.Now()
		due, err := s.Watches.Due(ctx, now, sweepBatch)
		if err != nil {
			return done, err
		}
		progress := false
		for _, w := range due {
			ok, removed, err := s.settle(ctx, w, now)
			done.Removed += removed
			switch {
			case err != nil:
				done.Failed++
			case ok:
				done.Settled++
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	if done.Failed > 0 {
		return done, errors.New("some watches could not be settled; a later run retries them")
	}
	return done, nil
}

// settle acts on w, due at now; ok is false when another actor holds or
// changed it.
func (s *Sweeper) settle(ctx context.Context, w Watch, now time.Time) (ok bool, removed int, err error) {
	used := ""
	if w.Upload != nil && w.Upload.Used == "" {
		used = UsedExpired
	}
	if ok, err := s.Watches.Hold(ctx, w, now.Add(HoldFor), used); err != nil || !ok {
		return false, 0, err
	}
	var o stampduty.Order
	if !allStaging(w.Keys) {
		st, err := s.Orders.Reread(ctx, Stored{OpsOrder: stampduty.OpsOrder{Owner: w.Owner}, Seq: w.Seq})
		switch {
		case stampduty.ErrorCode(err) == stampduty.ENOTFOUND:
			// A test order that expired (Reread): it points at nothing,
			// so its watched files go too, as the lifecycle rules would
			// take them.
		case err != nil:
			return false, 0, err
		default:
			o = st.Order
		}
	}
	for _, k := range w.Keys {
		if pointsAt(o, k) {
			continue
		}
		if err := s.Files.Purge(ctx, k); err != nil {
			return false, removed, err
		}
		removed++
	}
	return true, removed, s.Watches.Unwatch(ctx, w.ID)
}

// allStaging reports whether every key is a staging key.
func allStaging(keys []string) bool {
	for _, k := range keys {
		if !strings.HasPrefix(k, StagingPrefix) {
			return false
		}
	}
	return true
}
