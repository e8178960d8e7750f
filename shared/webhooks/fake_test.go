// The in-memory outbox, webhooks and jobs the dispatcher tests run over:
// the webhooks workflow is their only user, so they live in its tests (the
// store's real adapters are tested against dynalite in shared/store).

package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"sync"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// ErrDied is what Outbox.Relayed answers when told to die before marking.
var ErrDied = errors.New("the relay died before marking its events relayed")

// Outbox is a webhooks.Outbox over in-memory order items: each change
// bumps the order's version and appends its event, as the store's writes
// do. The next Conflicts calls of Relayed find the order changed meanwhile
// (version bumped, no event added); the next Deaths calls fail with
// nothing marked, as a relay that dies after putting its jobs.
type Outbox struct {
	mu                sync.Mutex
	items             []*orders.Stored
	Conflicts, Deaths int
}

// Change stores a change of owner's order doc with its event p and
// returns the order's new version.
func (o *Outbox) Change(owner, doc string, p stampduty.Pending) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	it := o.item(owner, doc)
	it.Version++
	p.Order.DocumentID = doc
	it.Order = p.Order
	it.Outbox = append(it.Outbox, p)
	return it.Version
}

// item returns the item of owner's order doc, adding it when new.
func (o *Outbox) item(owner, doc string) *orders.Stored {
	for _, it := range o.items {
		if it.Owner == owner && it.DocumentID == doc {
			return it
		}
	}
	it := &orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: owner, Order: stampduty.Order{DocumentID: doc}}}
	o.items = append(o.items, it)
	return it
}

// Pending returns up to limit items with pending events of poller p's part
// (by a hash of the order's documentId), in the order the items were
// first stored, after the one cursor names (its documentId; "" from the
// start), oldest event first, and the cursor of the last one returned when
// more may follow (as a Scan that stops at its Limit).
func (o *Outbox) Pending(_ context.Context, p webhooks.Poller, cursor string, limit int) ([]orders.Stored, string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []orders.Stored
	next := ""
	from := cursor == ""
	for _, it := range o.items {
		if !from {
			from = it.DocumentID == cursor
			continue
		}
		if len(it.Outbox) == 0 || !p.Owns(part(it.DocumentID)) {
			continue
		}
		if len(out) == limit {
			next = out[len(out)-1].DocumentID
			break
		}
		c := *it
		c.Outbox = slices.Clone(it.Outbox)
		out = append(out, c)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Outbox[0].At < out[b].Outbox[0].At })
	return out, next, nil
}

// part is the shard of a key among 16: the store hashes its keys so.
func part(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % 16)
}

// Relayed removes ids from p's outbox if its version is still p.Version,
// else fails with orders.ErrChanged.
func (o *Outbox) Relayed(_ context.Context, p orders.Stored, ids []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	it := o.item(p.Owner, p.DocumentID)
	switch {
	case o.Deaths > 0:
		o.Deaths--
		return ErrDied
	case o.Conflicts > 0:
		o.Conflicts--
		it.Version++
		return fmt.Errorf("mark order %s relayed: %w", p.DocumentID, orders.ErrChanged)
	case it.Version != p.Version:
		return fmt.Errorf("mark order %s relayed: %w", p.DocumentID, orders.ErrChanged)
	}
	it.Outbox = slices.DeleteFunc(it.Outbox, func(c stampduty.Pending) bool { return slices.Contains(ids, c.ID) })
	return nil
}

// Left returns how many events are still pending in all outboxes.
func (o *Outbox) Left() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, it := range o.items {
		n += len(it.Outbox)
	}
	return n
}

// Hooks is a webhooks.Hooks over in-memory sets of webhooks.
type Hooks struct {
	mu   sync.Mutex
	sets map[string]webhooks.Set
}

// Add registers w for owner.
func (h *Hooks) Add(owner string, w webhooks.Webhook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sets == nil {
		h.sets = map[string]webhooks.Set{}
	}
	w.Owner = owner
	s := h.sets[owner]
	s.V++
	s.Live = append(slices.Clone(s.Live), w)
	h.sets[owner] = s
}

// Delete removes owner's webhook doc.
func (h *Hooks) Delete(owner, doc string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sets[owner]
	s.V++
	s.Live = slices.DeleteFunc(slices.Clone(s.Live), func(w webhooks.Webhook) bool { return w.DocumentID == doc })
	h.sets[owner] = s
}

// Webhooks returns a copy of owner's set.
func (h *Hooks) Webhooks(_ context.Context, owner string) (webhooks.Set, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sets[owner]
	s.Live, s.Gone = slices.Clone(s.Live), slices.Clone(s.Gone)
	return s, nil
}

// SaveWebhooks stores s as owner's set if it is still at version v.
func (h *Hooks) SaveWebhooks(_ context.Context, owner string, s webhooks.Set, v int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sets[owner].V != v {
		return fmt.Errorf("save the webhooks of %s: %w", owner, webhooks.ErrRaced)
	}
	if h.sets == nil {
		h.sets = map[string]webhooks.Set{}
	}
	s.V = v + 1
	h.sets[owner] = s
	return nil
}

// job is a stored job and its lease's expiry (zero when none).
type job struct {
	webhooks.Job
	leased time.Time
}

// Jobs is a webhooks.Jobs over in-memory jobs and attempt records.
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
func (s *Jobs) Put(_ context.Context, j webhooks.Job) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.find(j.Owner, j.Webhook, j.ID) != nil {
		return false, nil
	}
	o := &job{Job: j}
	if j.Lease != "" {
		t, err := time.Parse(stampduty.TimeLayout, j.Lease)
		if err != nil {
			return false, err
		}
		o.leased = t
	}
	s.jobs = append(s.jobs, o)
	return true, nil
}

// Due returns up to limit jobs not done and due at now of poller p's
// part (by a hash of the job's key), soonest first.
func (s *Jobs) Due(_ context.Context, p webhooks.Poller, now time.Time, limit int) ([]webhooks.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := stampduty.FormatTime(now)
	var out []webhooks.Job
	for _, j := range s.jobs {
		if j.Done == webhooks.JobDue && j.Next <= at && p.Owns(part(j.Owner+"#"+j.Webhook+"#"+j.ID)) {
			out = append(out, j.Job)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Next < out[b].Next })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Waiting returns the Next of the earliest job of j's webhook and order
// before j not done, "" when none.
func (s *Jobs) Waiting(_ context.Context, j webhooks.Job) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first *job
	for _, o := range s.jobs {
		if o.Owner == j.Owner && o.Webhook == j.Webhook && o.Done == webhooks.JobDue &&
			webhooks.OrderOf(o.Seq) == webhooks.OrderOf(j.Seq) && o.Seq < j.Seq && (first == nil || o.Seq < first.Seq) {
			first = o
		}
	}
	if first == nil {
		return "", nil
	}
	return first.Next, nil
}

// Postpone makes j due at next if it is as read.
func (s *Jobs) Postpone(_ context.Context, j webhooks.Job, next string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.find(j.Owner, j.Webhook, j.ID)
	if o == nil || o.N != j.N || o.Done != webhooks.JobDue {
		return false, nil
	}
	o.Next = next
	return true, nil
}

// Lease claims j until until if it is as read and not leased at now, or
// leased with j.Lease when that is not "" (the caller's own).
func (s *Jobs) Lease(_ context.Context, j webhooks.Job, now, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.find(j.Owner, j.Webhook, j.ID)
	mine := j.Lease != "" && o != nil && o.Lease == j.Lease
	if o == nil || o.N != j.N || o.Done != webhooks.JobDue || (now.Before(o.leased) && !mine) {
		return false, nil
	}
	o.leased, o.Lease = until, stampduty.FormatTime(until)
	return true, nil
}

// Attempted stores the attempts and their jobs after them, unleased.
func (s *Jobs) Attempted(_ context.Context, done ...webhooks.AttemptDone) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range done {
		j := d.Job
		o := s.find(j.Owner, j.Webhook, j.ID)
		if o == nil {
			return fmt.Errorf("record an attempt of event %s: no such job", j.ID)
		}
		o.Job, o.leased = j, time.Time{}
		if s.attempts == nil {
			s.attempts = map[string][]webhooks.Attempt{}
		}
		k := j.Owner + "#" + j.Webhook
		s.attempts[k] = append(s.attempts[k], d.Attempt)
	}
	return nil
}

// Stop marks the jobs of owner's webhook doc that are not done Disabled.
func (s *Jobs) Stop(_ context.Context, owner, doc string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j.Owner == owner && j.Webhook == doc && j.Done == webhooks.JobDue {
			j.Done, j.Next = webhooks.JobDisabled, ""
		}
	}
	return nil
}

// All returns every job, in the order they were put.
func (s *Jobs) All() []webhooks.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]webhooks.Job, len(s.jobs))
	for i, j := range s.jobs {
		out[i] = j.Job
	}
	return out
}

// Log returns the attempt records of owner's webhook doc, oldest first.
func (s *Jobs) Log(owner, doc string) []webhooks.Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.attempts[owner+"#"+doc])
}

// Job returns the job of owner's webhook for event eventID.
func (s *Jobs) Job(_ context.Context, owner, webhook, eventID string) (webhooks.Job, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.find(owner, webhook, eventID); j != nil {
		return j.Job, true, nil
	}
	return webhooks.Job{}, false, nil
}

// Redeliver makes the job of owner's webhook for event eventID due at now.
func (s *Jobs) Redeliver(_ context.Context, owner, webhook, eventID string, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.find(owner, webhook, eventID)
	if j == nil {
		return false, nil
	}
	j.Done, j.Next = webhooks.JobDue, stampduty.FormatTime(now)
	return true, nil
}

// Attempts returns the newest limit attempts of owner's webhook, newest first.
func (s *Jobs) Attempts(_ context.Context, owner, webhook string, limit int) ([]webhooks.Attempt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	as := slices.Clone(s.attempts[owner+"#"+webhook])
	slices.Reverse(as)
	if len(as) > limit {
		as = as[:limit]
	}
	return as, nil
}

// Stepped stores a step job after its step, unleased, unless it is done.
func (s *Jobs) Stepped(_ context.Context, j webhooks.Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.find(j.Owner, j.Webhook, j.ID)
	if o == nil {
		return fmt.Errorf("store the step job of %s: no such job", j.ID)
	}
	if o.Done != webhooks.JobDue {
		return nil
	}
	if j.Next == "" && j.Done == webhooks.JobDue {
		return fmt.Errorf("store the step job of %s: neither due nor done", j.ID)
	}
	o.Job, o.leased = j, time.Time{}
	return nil
}
