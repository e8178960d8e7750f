package webhooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// MaxGone is how many deleted webhooks a caller's record keeps (the newest),
// so that their deliveries stay listable.
const MaxGone = 100

// MaxDeliveries is how many attempts the deliveries list shows, newest first.
const MaxDeliveries = 100

// Set is one caller's webhooks as stored (see Hooks).
type Set struct {
	// V is the record's version: 0 when the caller has none stored yet,
	// +1 on every save.
	V int64
	// Live are the caller's webhooks, oldest first, at most
	// MaxPerCaller.
	Live []Webhook
	// Gone are the caller's deleted webhooks, newest first, at most
	// MaxGone, without their secrets.
	Gone []Gone
}

// Gone is a deleted webhook.
type Gone struct {
	Webhook
	// Deleted is when it was deleted, in stampduty.TimeLayout.
	Deleted string
}

// ErrRaced is the error (errors.Is) of a save that lost a race: the record
// changed since it was read. Read it again and redo the change.
var ErrRaced = errors.New("the caller's webhooks changed since they were read")

// Registry is a caller's webhooks: the workflows of the webhook endpoints.
type Registry struct {
	Hooks Hooks
	Jobs  Jobs
	IDs   orders.IDs
	// Guard decides which URLs may be registered.
	Guard Guard
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Registration is what a caller asks to register.
type Registration struct {
	URL    string
	Events []string
	// Format is FormatStampduty or FormatOriginal; "" means
	// FormatStampduty.
	Format string
}

// Redelivered is the answer to a redelivery: the event and the webhooks
// (documentIds) it is due again for.
type Redelivered struct {
	EventID  string   `json:"id"`
	Webhooks []string `json:"webhooks"`
}

// notFound is the 404 of a webhook the caller does not have.
func notFound(doc string) error {
	return stampduty.Errorf(stampduty.ENOTFOUND, "Webhook with the documentId: %s cannot be found.", doc)
}

// eventNotFound is the 404 of an event none of the caller's webhooks has.
func eventNotFound(id string) error {
	return stampduty.Errorf(stampduty.ENOTFOUND, "Event with the id: %s cannot be found.", id)
}

// update applies change to owner's set and saves it, reading and applying
// it again after each lost race, until the request's context ends. change
// is told whether an earlier save of this update may have been applied
// (raced: its answer may have been lost and the store's retry have found
// it done); it returns the new set, or done true when there is nothing to
// save.
func update(ctx context.Context, hooks Hooks, owner string, change func(s Set, raced bool) (next Set, done bool, err error)) error {
	for raced := false; ; raced = true {
		s, err := hooks.Webhooks(ctx, owner)
		if err != nil {
			return err
		}
		next, done, err := change(s, raced)
		if err != nil || done {
			return err
		}
		err = hooks.SaveWebhooks(ctx, owner, next, s.V)
		if !errors.Is(err, ErrRaced) {
			return err
		}
		// Another request changed the set: wait a moment (jittered, so
		// that racing requests spread out) and apply the change again.
		select {
		case <-ctx.Done():
			return stampduty.Unavailable(fmt.Errorf("save webhooks: %w", ctx.Err()))
		case <-time.After(time.Duration(1+rand.IntN(20)) * time.Millisecond):
		}
	}
}

// Register checks reg (its URL through the Guard, its event types, its
// format and the events the format allows) and registers it as a new
// webhook of owner, enabled, with a new secret, which the answer shows
// once. A caller with MaxPerCaller webhooks already is refused with
// ECONFLICT, also when registrations race.
func (r *Registry) Register(ctx context.Context, owner string, reg Registration) (Registered, error) {
	if err := r.Guard.CheckURL(ctx, reg.URL); err != nil {
		return Registered{}, err
	}
	if err := CheckEvents(reg.Events); err != nil {
		return Registered{}, err
	}
	if err := CheckFormat(reg.Format, reg.Events); err != nil {
		return Registered{}, err
	}
	id, doc, err := orders.NewIdentity(ctx, r.IDs)
	if err != nil {
		return Registered{}, err
	}
	w := Webhook{ID: id, DocumentID: doc, URL: reg.URL, Events: slices.Clone(reg.Events), Format: cmp.Or(reg.Format, FormatStampduty), Enabled: true,
		CreatedAt: stampduty.FormatTime(r.Now()), Secret: NewSecret(), Owner: owner}
	err = update(ctx, r.Hooks, owner, func(s Set, raced bool) (Set, bool, error) {
		if raced && slices.ContainsFunc(s.Live, func(l Webhook) bool { return l.DocumentID == doc }) {
			return s, true, nil // an earlier save of this registration was applied
		}
		if len(s.Live) >= MaxPerCaller {
			return s, false, stampduty.Errorf(stampduty.ECONFLICT, "A caller can have at most %d webhooks; delete one first.", MaxPerCaller)
		}
		s.Live = append(slices.Clone(s.Live), w)
		return s, false, nil
	})
	if err != nil {
		return Registered{}, err
	}
	return w.Registered(), nil
}

// List returns owner's webhooks, oldest first (their JSON has no secret).
func (r *Registry) List(ctx context.Context, owner string) ([]Webhook, error) {
	s, err := r.Hooks.Webhooks(ctx, owner)
	if err != nil {
		return nil, err
	}
	if s.Live == nil {
		s.Live = []Webhook{}
	}
	return s.Live, nil
}

// Delete deletes owner's webhook doc: no event is delivered to it any more,
// and its attempts stay listable (it is kept among the newest MaxGone
// deleted webhooks, without its secret). A webhook owner does not have is
// ENOTFOUND.
func (r *Registry) Delete(ctx context.Context, owner, doc string) (Webhook, error) {
	var deleted Webhook
	err := update(ctx, r.Hooks, owner, func(s Set, raced bool) (Set, bool, error) {
		i := slices.IndexFunc(s.Live, func(w Webhook) bool { return w.DocumentID == doc })
		if i < 0 {
			if j := slices.IndexFunc(s.Gone, func(g Gone) bool { return g.DocumentID == doc }); raced && j >= 0 {
				deleted = s.Gone[j].Webhook // an earlier save of this deletion was applied
				return s, true, nil
			}
			return s, false, notFound(doc)
		}
		deleted = s.Live[i]
		deleted.Secret = ""
		s.Live = slices.Delete(slices.Clone(s.Live), i, i+1)
		s.Gone = append([]Gone{{Webhook: deleted, Deleted: stampduty.FormatTime(r.Now())}}, s.Gone...)
		if len(s.Gone) > MaxGone {
			s.Gone = s.Gone[:MaxGone]
		}
		return s, false, nil
	})
	return deleted, err
}

// Deliveries returns the newest MaxDeliveries attempts of owner's webhook
// doc, newest first. A deleted webhook's attempts stay listable (while it
// is among the newest MaxGone deleted); a webhook owner never had is
// ENOTFOUND.
func (r *Registry) Deliveries(ctx context.Context, owner, doc string) ([]Attempt, error) {
	s, err := r.Hooks.Webhooks(ctx, owner)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(s.Live, func(w Webhook) bool { return w.DocumentID == doc }) &&
		!slices.ContainsFunc(s.Gone, func(g Gone) bool { return g.DocumentID == doc }) {
		return nil, notFound(doc)
	}
	atts, err := r.Jobs.Attempts(ctx, owner, doc, MaxDeliveries)
	if atts == nil && err == nil {
		atts = []Attempt{}
	}
	return atts, err
}

// Redeliver makes event eventID due now for each of owner's enabled
// webhooks subscribed to its type: the job of a webhook that had one is
// due again (its attempts keep counting), a webhook registered since gets
// a job of its own. The event must have a job under one of owner's
// webhooks; otherwise (an id of another caller's event, or not an event
// id at all) it is ENOTFOUND.
func (r *Registry) Redeliver(ctx context.Context, owner, eventID string) (Redelivered, error) {
	if !stampduty.ValidEventID(eventID) {
		return Redelivered{}, eventNotFound(eventID)
	}
	s, err := r.Hooks.Webhooks(ctx, owner)
	if err != nil {
		return Redelivered{}, err
	}
	var (
		found   *Job
		has     = make([]bool, len(s.Live))
		allDocs = make([]string, 0, len(s.Live)+len(s.Gone))
	)
	for _, w := range s.Live {
		allDocs = append(allDocs, w.DocumentID)
	}
	for _, g := range s.Gone {
		allDocs = append(allDocs, g.DocumentID)
	}
	// The live webhooks' jobs first (they are the ones redelivered to);
	// a deleted webhook's job only proves the event is the caller's.
	for i, doc := range allDocs {
		if found != nil && i >= len(s.Live) {
			break
		}
		j, ok, err := r.Jobs.Job(ctx, owner, doc, eventID)
		if err != nil {
			return Redelivered{}, err
		}
		if ok {
			if i < len(s.Live) {
				has[i] = true
			}
			if found == nil {
				found = &j
			}
		}
	}
	if found == nil {
		return Redelivered{}, eventNotFound(eventID)
	}
	now := r.Now()
	out := Redelivered{EventID: eventID, Webhooks: []string{}}
	for i, w := range s.Live {
		if !w.Subscribed(found.Type) {
			continue
		}
		if !has[i] {
			j := *found
			j.Webhook, j.First, j.N, j.Next, j.Done = w.DocumentID, "", 0, stampduty.FormatTime(now), JobDue
			put, err := r.Jobs.Put(ctx, j)
			if err != nil {
				return Redelivered{}, err
			}
			has[i] = !put // one appeared meanwhile: make it due below
		}
		if has[i] {
			if _, err := r.Jobs.Redeliver(ctx, owner, w.DocumentID, eventID, now); err != nil {
				return Redelivered{}, err
			}
		}
		out.Webhooks = append(out.Webhooks, w.DocumentID)
	}
	return out, nil
}
