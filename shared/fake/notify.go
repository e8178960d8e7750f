package fake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"stampduty/shared/notify"
	"stampduty/shared/rules"
	"stampduty/shared/webhooks"
)

// ErrConflict is what Outbox.Relayed answers when the order changed since
// it was read, as the store's conditioned UpdateItem does.
var ErrConflict = errors.New("the order changed since it was read")

// ErrDied is what Outbox.Relayed answers when told to die before marking.
var ErrDied = errors.New("the relay died before marking its events relayed")

// outboxItem is one order item's version and pending events.
type outboxItem struct {
	owner, doc string
	v          int64
	ob         []notify.Change
}

// Outbox is a notify.Outbox over in-memory order items: each stored change
// bumps the order's version and appends its event, as the store's order
// writes do.
type Outbox struct {
	mu    sync.Mutex
	items []*outboxItem
	// Conflicts makes the next Conflicts calls of Relayed find the order
	// changed meanwhile (its version bumped, no event added) and fail.
	Conflicts int
	// Deaths makes the next Deaths calls of Relayed fail with nothing
	// marked, as a relay that dies after putting its jobs.
	Deaths int
}

// Change stores a change of owner's order doc with its event and returns
// the order's new version.
func (o *Outbox) Change(owner, doc string, c notify.Change) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	it := o.item(owner, doc)
	it.v++
	it.ob = append(it.ob, c)
	return it.v
}

// item returns the item of owner's order doc, adding it when new.
func (o *Outbox) item(owner, doc string) *outboxItem {
	for _, it := range o.items {
		if it.owner == owner && it.doc == doc {
			return it
		}
	}
	it := &outboxItem{owner: owner, doc: doc}
	o.items = append(o.items, it)
	return it
}

// Pending returns up to limit items with pending events, oldest event first.
func (o *Outbox) Pending(_ context.Context, limit int) ([]notify.Pending, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []notify.Pending
	for _, it := range o.items {
		if len(it.ob) > 0 {
			out = append(out, notify.Pending{Owner: it.owner, Order: it.doc, Version: it.v, Changes: append([]notify.Change(nil), it.ob...)})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Changes[0].At < out[b].Changes[0].At })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Relayed removes ids from p's outbox if its version is still p.Version.
func (o *Outbox) Relayed(_ context.Context, p notify.Pending, ids []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	it := o.item(p.Owner, p.Order)
	switch {
	case o.Deaths > 0:
		o.Deaths--
		return ErrDied
	case o.Conflicts > 0:
		o.Conflicts--
		it.v++
		return fmt.Errorf("mark order %s relayed: %w", p.Order, ErrConflict)
	case it.v != p.Version:
		return fmt.Errorf("mark order %s relayed: %w", p.Order, ErrConflict)
	}
	kept := it.ob[:0]
	for _, c := range it.ob {
		found := false
		for _, id := range ids {
			found = found || c.ID == id
		}
		if !found {
			kept = append(kept, c)
		}
	}
	it.ob = kept
	return nil
}

// Left returns how many events are still pending in all outboxes.
func (o *Outbox) Left() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, it := range o.items {
		n += len(it.ob)
	}
	return n
}

// Hooks is a notify.Hooks over in-memory webhooks.
type Hooks struct {
	mu    sync.Mutex
	hooks map[string][]webhooks.Webhook
}

// Add registers w for owner.
func (h *Hooks) Add(owner string, w webhooks.Webhook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hooks == nil {
		h.hooks = map[string][]webhooks.Webhook{}
	}
	w.Owner = owner
	h.hooks[owner] = append(h.hooks[owner], w)
}

// Delete removes owner's webhook doc.
func (h *Hooks) Delete(owner, doc string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kept := h.hooks[owner][:0]
	for _, w := range h.hooks[owner] {
		if w.DocumentID != doc {
			kept = append(kept, w)
		}
	}
	h.hooks[owner] = kept
}

// Webhooks returns a copy of owner's webhooks.
func (h *Hooks) Webhooks(_ context.Context, owner string) ([]webhooks.Webhook, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]webhooks.Webhook(nil), h.hooks[owner]...), nil
}

// Disable turns owner's webhook doc off.
func (h *Hooks) Disable(_ context.Context, owner, doc string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, w := range h.hooks[owner] {
		if w.DocumentID == doc {
			h.hooks[owner][i].Enabled = false
			return nil
		}
	}
	return fmt.Errorf("disable webhook %s: no such webhook", doc)
}

// job is a stored job and its lease.
type job struct {
	notify.Job
	leased time.Time // lease expiry; zero when none
}

// Jobs is a notify.Jobs over in-memory jobs and attempt records.
type Jobs struct {
	mu       sync.Mutex
	jobs     []*job
	attempts map[string][]webhooks.Attempt
}

// find returns the job of webhook doc of owner and event id, nil when none.
func (s *Jobs) find(owner, doc, id string) *job {
	for _, j := range s.jobs {
		if j.Owner == owner && j.Webhook == doc && j.ID == id {
			return j
		}
	}
	return nil
}

// Put stores j unless its webhook has a job of its event.
func (s *Jobs) Put(_ context.Context, j notify.Job) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.find(j.Owner, j.Webhook, j.ID) != nil {
		return false, nil
	}
	s.jobs = append(s.jobs, &job{Job: j})
	return true, nil
}

// Due returns up to limit jobs not done and due at now, soonest first.
func (s *Jobs) Due(_ context.Context, now time.Time, limit int) ([]notify.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := rules.FormatTime(now)
	var out []notify.Job
	for _, j := range s.jobs {
		if j.Done == notify.Due && j.Next <= at {
			out = append(out, j.Job)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Next < out[b].Next })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Waiting reports whether an earlier job of j's webhook and order is not done.
func (s *Jobs) Waiting(_ context.Context, j notify.Job) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.jobs {
		if o.Owner == j.Owner && o.Webhook == j.Webhook && o.Done == notify.Due &&
			notify.OrderOf(o.Seq) == notify.OrderOf(j.Seq) && o.Seq < j.Seq {
			return true, nil
		}
	}
	return false, nil
}

// Lease claims j until until if it is as read and not leased at now.
func (s *Jobs) Lease(_ context.Context, j notify.Job, now, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.find(j.Owner, j.Webhook, j.ID)
	if o == nil || o.N != j.N || o.Done != notify.Due || now.Before(o.leased) {
		return false, nil
	}
	o.leased = until
	return true, nil
}

// Attempted stores the attempt a and the job j after it, lease released.
func (s *Jobs) Attempted(_ context.Context, j notify.Job, a webhooks.Attempt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.find(j.Owner, j.Webhook, j.ID)
	if o == nil {
		return fmt.Errorf("record an attempt of event %s: no such job", j.ID)
	}
	o.Job, o.leased = j, time.Time{}
	if s.attempts == nil {
		s.attempts = map[string][]webhooks.Attempt{}
	}
	k := j.Owner + "#" + j.Webhook
	s.attempts[k] = append(s.attempts[k], a)
	return nil
}

// Stop marks the jobs of owner's webhook doc that are not done Disabled.
func (s *Jobs) Stop(_ context.Context, owner, doc string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j.Owner == owner && j.Webhook == doc && j.Done == notify.Due {
			j.Done, j.Next = notify.Disabled, ""
		}
	}
	return nil
}

// All returns every job, in the order they were put.
func (s *Jobs) All() []notify.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]notify.Job, len(s.jobs))
	for i, j := range s.jobs {
		out[i] = j.Job
	}
	return out
}

// Attempts returns the attempt records of owner's webhook doc, oldest first.
func (s *Jobs) Attempts(owner, doc string) []webhooks.Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]webhooks.Attempt(nil), s.attempts[owner+"#"+doc]...)
}

// Renderer renders an order snapshot as its JSON, with no file to sign.
type Renderer struct{}

// Render returns the JSON of o.
func (Renderer) Render(_ context.Context, o notify.Snapshot) (json.RawMessage, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	return b, nil
}

// The fakes are the notify package's stores.
var (
	_ notify.Outbox   = (*Outbox)(nil)
	_ notify.Hooks    = (*Hooks)(nil)
	_ notify.Jobs     = (*Jobs)(nil)
	_ notify.Renderer = Renderer{}
)
