package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Poller names one of the dispatcher's pollers: poller Index of Count
// (0 ≤ Index < Count). The zero value is the only poller. The pollers
// share the outbox and the due jobs out between them so that no item is
// read by two of them (see DECISIONS.md, "Scaling past one poller"): poller
// i of n scans segment i of n of the outbox index (a parallel Scan), and
// reads the due shards s with s mod n = i (the jobs stored before the
// sharding, under the unsharded key, are poller 0's).
type Poller struct{ Index, Count int }

// Segment returns p's segment of a parallel Scan and how many there are:
// the zero value (or a Count below 2) is segment 0 of 1, the whole.
func (p Poller) Segment() (segment, total int) {
	if p.Count < 2 {
		return 0, 1
	}
	return p.Index, p.Count
}

// Owns reports whether shard (of a sharded index key, from 0) is p's to
// read.
func (p Poller) Owns(shard int) bool {
	i, n := p.Segment()
	return shard%n == i
}

// Valid reports whether p names a poller: 0 ≤ Index < Count, or the zero
// value.
func (p Poller) Valid() bool {
	return p == Poller{} || (p.Count > 0 && p.Index >= 0 && p.Index < p.Count)
}

// PollerCounts are the numbers of pollers a stack may run, the template's
// DispatchPollers' AllowedValues: each divides the 16 due shards evenly, so
// every poller reads as many (see DECISIONS.md, "Pollers").
func PollerCounts() []int { return []int{1, 2, 4} }

// PollerOf reads which poller an invocation of the dispatch function is
// from its payload, the Input of its schedule: {"poller": i, "pollers": n}
// (0 ≤ i < n, n one of PollerCounts; other members are ignored). A payload
// with neither member, as EventBridge's plain Scheduled Event, or none at
// all is the only poller, as is one of 1. A payload naming a poller that is
// not one (a member missing, not a whole number, n not allowed, i out of
// range) is an error, so that no run polls a part that is not its own.
func PollerOf(payload []byte) (Poller, error) {
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 || string(payload) == "null" {
		return Poller{}, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(payload, &members); err != nil {
		return Poller{}, fmt.Errorf("dispatch input: not a JSON object: %w", err)
	}
	index, hasIndex := members["poller"]
	count, hasCount := members["pollers"]
	if !hasIndex && !hasCount {
		return Poller{}, nil
	}
	var p Poller
	for _, m := range []struct {
		name string
		raw  json.RawMessage
		has  bool
		into *int
	}{{"poller", index, hasIndex, &p.Index}, {"pollers", count, hasCount, &p.Count}} {
		if !m.has || string(m.raw) == "null" {
			return Poller{}, fmt.Errorf(`dispatch input %s: "poller" and "pollers" go together`, payload)
		}
		if err := json.Unmarshal(m.raw, m.into); err != nil {
			return Poller{}, fmt.Errorf("dispatch input %s: %q is not a whole number", payload, m.name)
		}
	}
	if !slices.Contains(PollerCounts(), p.Count) {
		return Poller{}, fmt.Errorf("dispatch input %s: %d pollers, want one of %v", payload, p.Count, PollerCounts())
	}
	if p.Index < 0 || p.Index >= p.Count {
		return Poller{}, fmt.Errorf("dispatch input %s: poller %d of %d does not exist (0 to %d)", payload, p.Index, p.Count, p.Count-1)
	}
	if p.Count == 1 {
		return Poller{}, nil
	}
	return p, nil
}

// Pollers runs a dispatch function's invocations: each as the poller its
// payload names (PollerOf), with a Dispatcher per poller made by New on its
// first run and kept, so that what a Dispatcher carries from one run to the
// next (webhooks backing off, where the relay's sweep goes on) stays with
// its poller when one instance serves several pollers' schedules.
type Pollers struct {
	// New makes the Dispatcher of poller p (its Poller set to p).
	New func(p Poller) *Dispatcher
	// Log receives a line when a poller's Dispatcher is made; nil
	// discards.
	Log io.Writer

	mu sync.Mutex
	by map[Poller]*Dispatcher
}

// Run runs the Dispatcher of the poller payload names (Dispatcher.Run with
// every and until), or returns PollerOf's error without polling.
func (ps *Pollers) Run(ctx context.Context, payload []byte, every, until time.Duration) error {
	p, err := PollerOf(payload)
	if err != nil {
		return err
	}
	ps.mu.Lock()
	d, ok := ps.by[p]
	if !ok {
		if ps.by == nil {
			ps.by = map[Poller]*Dispatcher{}
		}
		d = ps.New(p)
		d.Poller = p
		ps.by[p] = d
		if ps.Log != nil {
			i, n := p.Segment()
			fmt.Fprintf(ps.Log, "webhooks: polling as poller %d of %d\n", i, n)
		}
	}
	ps.mu.Unlock()
	return d.Run(ctx, every, until)
}
