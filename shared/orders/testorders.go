package orders

// This file holds the self-fulfilment of test orders (test-mode.md, "Test
// orders fulfil themselves"): the create schedules a test order's first
// step, and each step, made by Fulfiller.Step, moves every paper one
// status on (Pending → Created → Procured → Printed) with made-up
// references and a SPECIMEN certificate, through the same conditional
// writes and events as an operator's changes. The scheduling itself (a
// due job the webhook dispatcher's reads find: no poll of its own) is
// the dispatcher's and the store's.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"stampduty/shared/stampduty"
)

// StepsHook is the webhook name a test order's step job is filed under
// in the deliveries table (under its owner), beside the caller's webhooks:
// no webhook's documentId has a '~'.
const StepsHook = "~steps"

// StepType is the type a step job carries where a delivery job carries its
// event's: it is never sent anywhere.
const StepType = "test.step"

// Steps keeps the step jobs of test orders.
type Steps interface {
	// Schedule makes the first step of owner's test order doc due at at.
	// Scheduling an order's steps again is harmless: it has one job.
	Schedule(ctx context.Context, owner, doc string, at time.Time) error
}

// Specimen makes the certificate PDF of paper i (from 0) of test order o.
type Specimen func(o stampduty.Order, i int) ([]byte, error)

// schedule makes the first step of owner's order doc due every after
// createdAt, when owner is a test principal, steps is set and the order
// may step (not MagicStuck).
func schedule(ctx context.Context, steps Steps, every time.Duration, owner string, o stampduty.Order) error {
	if steps == nil || !stampduty.IsTestOwner(owner) || o.StampDuty.PurchasedBy == stampduty.MagicStuck {
		return nil
	}
	at, err := time.Parse(stampduty.TimeLayout, o.CreatedAt)
	if err != nil {
		return stampduty.Internal(fmt.Errorf("schedule the steps of order %s: %w", o.DocumentID, err))
	}
	return steps.Schedule(ctx, owner, o.DocumentID, at.Add(max(every, 0)))
}

// Step makes the next step of owner's test order doc and reports whether
// another is to follow. The step moves every paper at the lowest status the
// order's papers have one status on, each with its own conditional write
// and event, as an operator's move is stored:
//
//   - Pending → Created, with a made-up unique_doc_ref;
//   - Created → Procured, with a made-up certificate_number of the state
//     (stampduty.MadeUpReferences); a MagicCancel order is cancelled
//     instead, by "the operator" with the reason stampduty.TestCancellation;
//   - Procured → Printed, after attaching the paper's SPECIMEN certificate
//     (Specimen), with its order.certificate_attached event.
//
// A step is idempotent: a paper already moved is left as it is and the
// references are the same on every try, so a step retried after a failure
// half-way finishes the work. An order cancelled (by its caller too), all
// Printed, MagicStuck, or gone (never stored, or expired) has no step: more
// is false and nothing is written. A live order is never stepped.
func (f *Fulfiller) Step(ctx context.Context, owner, doc string) (more bool, err error) {
	if !stampduty.IsTestOwner(owner) {
		return false, stampduty.Internal(fmt.Errorf("step order %s of %s: not a test order", doc, owner))
	}
	if f.Listeners != nil { // one read per event type for the step's writes, not one per write
		step := *f
		step.Listeners = &stepListeners{l: f.Listeners, seen: map[string]bool{}}
		f = &step
	}
	s, err := f.owned(ctx, owner, doc)
	if stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if s.CancelledAt != nil || s.StampDuty.PurchasedBy == stampduty.MagicStuck || len(s.Fulfillments) == 0 {
		return false, nil
	}
	from := s.Fulfillments[0].Status
	for _, ff := range s.Fulfillments[1:] {
		if stampduty.StatusRank(ff.Status) < stampduty.StatusRank(from) {
			from = ff.Status
		}
	}
	switch from {
	case stampduty.StatusPending:
		return true, f.moveAll(ctx, s, from, stampduty.StatusCreated)
	case stampduty.StatusCreated:
		if s.StampDuty.PurchasedBy == stampduty.MagicCancel {
			reason := stampduty.TestCancellation
			_, err := f.cancel(ctx, s, stampduty.ByOperator, &reason)
			return false, err
		}
		return true, f.moveAll(ctx, s, from, stampduty.StatusProcured)
	case stampduty.StatusProcured:
		return false, f.printAll(ctx, s)
	}
	return false, nil
}

// moveAll moves each paper of s in status from to status to, with its
// made-up reference: the unique_doc_ref for Created, the
// certificate_number for Procured. A made-up number another test paper
// holds (papers.md: a test paper's numbers are unique among test papers)
// is made again, up to MadeUpTries sets.
func (f *Fulfiller) moveAll(ctx context.Context, s Stored, from, to string) error {
	for i := range s.Fulfillments {
		ff := s.Fulfillments[i]
		if ff.Status != from {
			continue
		}
		for try := 0; ; try++ {
			refs, err := stampduty.MadeUpReferences(s.DocumentID, ff.DocumentID, s.StampDuty.State, try)
			if err != nil {
				return err
			}
			c := stampduty.Change{Status: to, UniqueDocRef: refs.UniqueDocRef}
			if to != stampduty.StatusCreated {
				c.UniqueDocRef, c.CertificateNumber = "", refs.CertificateNumber // the paper's ref is stored
			}
			moved, err := f.advance(ctx, s, ff.DocumentID, c, stampduty.TestModeActor)
			if err == nil {
				s = moved
				break
			}
			if !errors.Is(err, ErrNumberTaken) || try+1 == MadeUpTries {
				return fmt.Errorf("step paper %s of test order %s to %s: %w", ff.DocumentID, s.DocumentID, to, err)
			}
		}
	}
	return nil
}

// MadeUpTries is how many sets of made-up references a test paper's step
// tries (stampduty.MadeUpReferences) before it fails and is retried: a
// set another test paper holds is rare, three in a row never.
const MadeUpTries = 3

// printAll attaches the SPECIMEN certificate of each Procured paper of s
// that has none, then moves each to Printed. The certificates go first, all
// of them, and the order is read again once before the moves when its papers
// are kept apart (a paper's item changed: its move is written on the new
// version), rather than once per paper.
func (f *Fulfiller) printAll(ctx context.Context, s Stored) error {
	attached := false
	for i := range s.Fulfillments {
		ff := s.Fulfillments[i]
		if ff.Status != stampduty.StatusProcured || ff.CertificateFile != nil {
			continue
		}
		var err error
		if s, err = f.attachSpecimen(ctx, s, i); err != nil {
			return fmt.Errorf("certificate of paper %s of test order %s: %w", ff.DocumentID, s.DocumentID, err)
		}
		attached = true
	}
	if attached && s.Apart != nil {
		var err error
		if s, err = f.Orders.Reread(ctx, s); err != nil {
			return err
		}
	}
	for i := range s.Fulfillments {
		ff := s.Fulfillments[i]
		if ff.Status != stampduty.StatusProcured {
			continue
		}
		var err error
		if s, err = f.advance(ctx, s, ff.DocumentID, stampduty.Change{Status: stampduty.StatusPrinted}, stampduty.TestModeActor); err != nil {
			return fmt.Errorf("step paper %s of test order %s to %s: %w", ff.DocumentID, s.DocumentID, stampduty.StatusPrinted, err)
		}
	}
	return nil
}

// SpecimenName is the file name of a SPECIMEN certificate as orders show
// it: "specimen-<paper number>.pdf".
func SpecimenName(paper int) string { return "specimen-" + strconv.Itoa(paper) + ".pdf" }

// attachSpecimen stores the SPECIMEN certificate of paper i of s and points
// the paper at it, with the order.certificate_attached event. Its key is
// the paper's own (SpecimenKey), so a retried step writes the same object
// again rather than leaving one behind: no watch is needed, and the
// bucket's lifecycle rule removes test files with their orders.
func (f *Fulfiller) attachSpecimen(ctx context.Context, s Stored, i int) (Stored, error) {
	if f.Specimen == nil {
		return Stored{}, stampduty.Internal(fmt.Errorf("no specimen maker wired"))
	}
	body, err := f.Specimen(s.Order, i)
	if err != nil {
		return Stored{}, stampduty.Internal(err)
	}
	ff := s.Fulfillments[i]
	ffDoc := ff.DocumentID
	// The paper's own id: ids come from one counter, so no other file has
	// it, and each paper has one specimen (no counter call, no grant).
	fileDoc, err := stampduty.NewDocumentID()
	if err != nil {
		return Stored{}, stampduty.Internal(err)
	}
	now := f.now()
	nf := &stampduty.File{ID: ff.ID, DocumentID: fileDoc, Name: SpecimenName(i + 1), Mime: "application/pdf",
		CreatedAt: stampduty.FormatTime(now), Key: SpecimenKey(s.Owner, s.DocumentID, ffDoc)}
	sum := sha256.Sum256(body)
	nf.Size, nf.SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
	if err := f.Files.Put(ctx, nf.Key, nf.Mime, body, sum); err != nil {
		return Stored{}, err
	}
	return f.update(ctx, s, func(o stampduty.Order) (stampduty.Order, bool, error) {
		next, _, err := putCertificate(ffDoc)(o, nf, nf.CreatedAt)
		return next, err == nil, err
	}, told(stampduty.EventOrderCertificateAttached, ffDoc))
}

// SpecimenKey is where the SPECIMEN certificate of paper ffDoc of owner's
// test order doc is stored: a certificate's key (FileKey, in the test
// files' part, which the bucket's lifecycle rule expires), named for the
// paper, so that every try of the step writes the same object.
func SpecimenKey(owner, doc, ffDoc string) string {
	return FileKey(owner, stampduty.Certificate, doc, ffDoc+"-specimen")
}

// stepListeners answers whether a test order's owner listens to an event
// type once per type for a whole step: a step of 20 papers makes 20 writes
// of the same type, which need not read the owner's webhooks 20 times. A
// webhook registered during the step (a second at most) may miss its events,
// as one registered during an operator's change may.
type stepListeners struct {
	l    Listeners
	mu   sync.Mutex
	seen map[string]bool
}

// Listens reports whether owner listens to typ, read at the first ask.
func (s *stepListeners) Listens(ctx context.Context, owner, typ string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.seen[owner+" "+typ]; ok {
		return v, nil
	}
	v, err := s.l.Listens(ctx, owner, typ)
	if err == nil {
		s.seen[owner+" "+typ] = v
	}
	return v, err
}
