package orders

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"stampduty/shared/rules"
	"stampduty/shared/webhooks"
)

// Stored is an order as the store holds it: the order and its owner, where
// it is (its owner's seq), its version, which each change raises by one,
// and its outbox: the events of its changes not yet relayed to webhooks,
// oldest first. A change is stored with the outbox it read, its own event
// appended, so no pending event is dropped by a later change.
type Stored struct {
	rules.OpsOrder
	Seq     int64
	Version int64
	Outbox  []webhooks.Pending
}

// ErrChanged is the failure of a Replace whose order changed since it was
// read: another request's change was stored first.
var ErrChanged = errors.New("the order changed since it was read")

// Fulfilments reads and changes stored orders for their fulfillment.
type Fulfilments interface {
	// ByDocument returns the order with documentId doc, read eventually
	// consistent (a moment's lag after a change), or ENOTFOUND.
	ByDocument(ctx context.Context, doc string) (Stored, error)
	// Reread returns s's order as it is now (a strongly consistent read).
	Reread(ctx context.Context, s Stored) (Stored, error)
	// Replace stores o in place of s, with s.Outbox followed by events as
	// its pending events, on condition that s is still the stored version;
	// ErrChanged (wrapped) when it is not.
	Replace(ctx context.Context, s Stored, o rules.Order, events ...webhooks.Pending) error
	// Queue returns up to size orders waiting in status, oldest first,
	// from the position cursor names ("" for the start), and the cursor of
	// what follows ("" at the end). A cursor it did not make is EINVALID.
	Queue(ctx context.Context, status, cursor string, size int) ([]rules.OpsOrder, string, error)
}

// Files keeps the bytes of files and makes their download addresses.
type Files interface {
	// Put stores body under key; sum is its SHA-256.
	Put(ctx context.Context, key, mime string, body []byte, sum [32]byte) error
	// Delete removes what key holds.
	Delete(ctx context.Context, key string) error
	// Sign fills in the download address of each file of o.
	Sign(ctx context.Context, o *rules.Order) error
}

// The key prefixes of files: each function may write under its own only.
const (
	DocumentPrefix    = "documents/"
	CertificatePrefix = "certificates/"
)

// Fulfiller is the fulfillment workflow: reading one order, the operators'
// queue and status changes, and the files of an order.
type Fulfiller struct {
	Orders Fulfilments
	Files  Files
	// IDs gives files their numeric ids.
	IDs IDs
	// Listeners decides whether a change's event is recorded; nil records
	// every one.
	Listeners Listeners
	Now       func() time.Time
}

func (f *Fulfiller) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// notFound is the answer for an order the caller may not see.
func notFound(doc string) error {
	return rules.Errorf(rules.ENOTFOUND, "Order with the documentId: %s cannot be found.", doc)
}

// find returns owner's order doc; another caller's order is not found.
// owner "" is an operator, who may see every order.
func (f *Fulfiller) find(ctx context.Context, owner, doc string) (Stored, error) {
	s, err := f.Orders.ByDocument(ctx, doc)
	if rules.ErrorCode(err) == rules.ENOTFOUND || err == nil && owner != "" && s.Owner != owner {
		return Stored{}, notFound(doc)
	}
	return s, err
}

// Get returns owner's order doc as its caller sees it, with fresh download
// addresses.
func (f *Fulfiller) Get(ctx context.Context, owner, doc string) (rules.Order, error) {
	s, err := f.find(ctx, owner, doc)
	if err != nil {
		return rules.Order{}, err
	}
	return ForCaller(ctx, f.Files, s.Order)
}

// ForCaller returns o as its caller sees it: without the operators'
// identities (rules.Order.ForCaller), with fresh download addresses.
func ForCaller(ctx context.Context, files Files, o rules.Order) (rules.Order, error) {
	o = o.ForCaller()
	return o, files.Sign(ctx, &o)
}

// OpsGet returns order doc as operators see it.
func (f *Fulfiller) OpsGet(ctx context.Context, doc string) (rules.OpsOrder, error) {
	s, err := f.find(ctx, "", doc)
	if err != nil {
		return rules.OpsOrder{}, err
	}
	return s.OpsOrder, f.Files.Sign(ctx, &s.Order)
}

// Queue returns a page of the operators' work queue (see Fulfilments.Queue),
// with fresh download addresses.
func (f *Fulfiller) Queue(ctx context.Context, status, cursor string, size int) ([]rules.OpsOrder, string, error) {
	if rules.StatusRank(status) < 0 {
		return nil, "", rules.Errorf(rules.EINVALID, "Invalid status: must be one of Pending, Created, Procured, Printed")
	}
	page, next, err := f.Orders.Queue(ctx, status, cursor, size)
	if err != nil {
		return nil, "", err
	}
	for i := range page {
		if err := f.Files.Sign(ctx, &page[i].Order); err != nil {
			return nil, "", err
		}
	}
	return page, next, nil
}

// change is one change of an order: it returns the changed order, whether
// anything changed, or why it may not change.
type change func(o rules.Order) (rules.Order, bool, error)

// tell returns the event a stored change from old to next records: its
// type ("" for none) and, for a status change, the statuses it moved
// between.
type tell func(old, next rules.Order) (typ string, previous, status *string)

// told returns the tell of a change that always records an event of type
// typ, without statuses.
func told(typ string) tell {
	return func(rules.Order, rules.Order) (string, *string, *string) { return typ, nil, nil }
}

// update applies ch to s, the order as read from the index, and stores the
// result with one conditional write, together with the event tl tells of
// it (made before the write: a retry of the write carries the same id). A refusal read from the eventually
// consistent index is checked against a consistent read before it is
// answered; a write that loses a race to another change is answered from a
// consistent read: done when what was asked is what is stored now, else
// ECONFLICT. At most three calls with the index read: it, the write, and one
// consistent read.
func (f *Fulfiller) update(ctx context.Context, s Stored, ch change, tl tell) (Stored, error) {
	next, changed, err := ch(s.Order)
	if err != nil {
		// The index may lag behind the last change: check on the table.
		if s, err = f.Orders.Reread(ctx, s); err != nil {
			return Stored{}, err
		}
		if next, changed, err = ch(s.Order); err != nil {
			return Stored{}, err
		}
	}
	if !changed {
		return s, nil
	}
	var events []webhooks.Pending
	if typ, previous, status := tl(s.Order, next); typ != "" {
		if events, err = record(ctx, f.Listeners, s.Owner, typ, func() (webhooks.Pending, error) {
			return webhooks.NewPending(typ, next.UpdatedAt, next, previous, status)
		}); err != nil {
			return Stored{}, err
		}
	}
	err = f.Orders.Replace(ctx, s, next, events...)
	if err == nil {
		s.Order, s.Version = next, s.Version+1
		s.Outbox = append(s.Outbox[:len(s.Outbox):len(s.Outbox)], events...)
		return s, nil
	}
	// The write failed, lost a race, or may have landed with its answer
	// lost (a retry of it then fails its own condition): what is stored
	// now decides.
	now, rerr := f.Orders.Reread(ctx, s)
	if rerr != nil {
		return Stored{}, errors.Join(err, rerr)
	}
	if now.Version == s.Version+1 && reflect.DeepEqual(now.Order, next) {
		return now, nil // this very write landed
	}
	if !errors.Is(err, ErrChanged) {
		return Stored{}, err
	}
	if _, changed, cerr := ch(now.Order); cerr != nil {
		return Stored{}, cerr
	} else if !changed {
		return now, nil
	}
	return Stored{}, rules.Errorf(rules.ECONFLICT, "The order was changed by another request at the same time; read it and try again.")
}

// Advance applies an operator's change to fulfillment ffDoc of order doc
// (rules.Fulfillment.Apply), by the operator by, and returns the order after
// it.
func (f *Fulfiller) Advance(ctx context.Context, doc, ffDoc string, c rules.Change, by string) (rules.OpsOrder, error) {
	at := rules.FormatTime(f.now())
	s, err := f.find(ctx, "", doc)
	if err != nil {
		return rules.OpsOrder{}, err
	}
	s, err = f.update(ctx, s, func(o rules.Order) (rules.Order, bool, error) {
		i := o.Fulfillment(ffDoc)
		if i < 0 {
			return o, false, rules.Errorf(rules.ENOTFOUND, "Fulfillment with the documentId: %s cannot be found.", ffDoc)
		}
		next, changed, err := o.Fulfillments[i].Apply(c, at, by)
		if err != nil || !changed {
			return o, false, err
		}
		return withFulfillment(o, i, next, at), true, nil
	}, statusChanged(ffDoc))
	if err != nil {
		return rules.OpsOrder{}, err
	}
	return s.OpsOrder, f.Files.Sign(ctx, &s.Order)
}

// statusChanged tells an order.status_changed when fulfillment ffDoc moved
// to another status, and nothing for a change that only stored a reference.
func statusChanged(ffDoc string) tell {
	return func(old, next rules.Order) (string, *string, *string) {
		i, j := old.Fulfillment(ffDoc), next.Fulfillment(ffDoc)
		if i < 0 || j < 0 || old.Fulfillments[i].Status == next.Fulfillments[j].Status {
			return "", nil, nil
		}
		previous, status := old.Fulfillments[i].Status, next.Fulfillments[j].Status
		return webhooks.EventOrderStatusChanged, &previous, &status
	}
}

// withFulfillment returns o with fulfillment i replaced, updated at at.
func withFulfillment(o rules.Order, i int, ff rules.Fulfillment, at string) rules.Order {
	o.Fulfillments = append([]rules.Fulfillment(nil), o.Fulfillments...)
	o.Fulfillments[i] = ff
	o.UpdatedAt = at
	return o
}

// UploadDocument stores the caller's document of owner's order doc,
// replacing an earlier one, while every fulfillment is Pending.
func (f *Fulfiller) UploadDocument(ctx context.Context, owner, doc string, u rules.Upload) (rules.File, error) {
	var file *rules.File
	_, err := f.attach(ctx, owner, doc, rules.Document, DocumentPrefix, u, webhooks.EventOrderDocumentUploaded,
		func(o rules.Order, nf *rules.File, at string) (rules.Order, *rules.File, error) {
			if err := o.CanUploadDocument(); err != nil {
				return o, nil, err
			}
			old := o.StampDuty.UploadedDocument
			o.StampDuty.UploadedDocument, o.UpdatedAt = nf, at
			file = nf
			return o, old, nil
		})
	if err != nil {
		return rules.File{}, err
	}
	signed := rules.Order{StampDuty: rules.StampDuty{UploadedDocument: file}}
	if err := f.Files.Sign(ctx, &signed); err != nil {
		return rules.File{}, err
	}
	return *file, nil
}

// AttachCertificate stores the certificate of fulfillment ffDoc of order
// doc, replacing an earlier one, while the fulfillment is Procured.
func (f *Fulfiller) AttachCertificate(ctx context.Context, doc, ffDoc string, u rules.Upload) (rules.OpsOrder, error) {
	s, err := f.attach(ctx, "", doc, rules.Certificate, CertificatePrefix, u, webhooks.EventOrderCertificateAttached,
		func(o rules.Order, nf *rules.File, at string) (rules.Order, *rules.File, error) {
			i := o.Fulfillment(ffDoc)
			if i < 0 {
				return o, nil, rules.Errorf(rules.ENOTFOUND, "Fulfillment with the documentId: %s cannot be found.", ffDoc)
			}
			if err := o.Fulfillments[i].CanAttachCertificate(); err != nil {
				return o, nil, err
			}
			ff := o.Fulfillments[i]
			old := ff.CertificateFile
			ff.CertificateFile = nf
			return withFulfillment(o, i, ff, at), old, nil
		})
	if err != nil {
		return rules.OpsOrder{}, err
	}
	return s.OpsOrder, f.Files.Sign(ctx, &s.Order)
}

// pointsAt reports whether a file of o is stored under key.
func pointsAt(o rules.Order, key string) bool {
	return slices.ContainsFunc(o.Files(), func(f *rules.File) bool { return f.Key == key })
}

// put places the new file nf in order o (updated at at) and returns the
// file it replaces, or why it may not.
type put func(o rules.Order, nf *rules.File, at string) (rules.Order, *rules.File, error)

// attach stores an uploaded file of kind k and points order doc at it,
// recording an event of type typ with the change: the bytes first, under a key of random ids (prefix, the order's documentId,
// the file's), then the order. The order never points at a file that is not
// stored: when its write fails, the new object is removed; once it points
// at the new file, the file it replaced is removed.
func (f *Fulfiller) attach(ctx context.Context, owner, doc string, k rules.FileKind, prefix string, u rules.Upload, typ string, p put) (Stored, error) {
	mime, name, err := k.Check(u)
	if err != nil {
		return Stored{}, err
	}
	// Refuse early what the order's state refuses, before any upload.
	s, err := f.find(ctx, owner, doc)
	if err != nil {
		return Stored{}, err
	}
	if _, _, err := p(s.Order, &rules.File{}, ""); err != nil {
		if s, err = f.Orders.Reread(ctx, s); err != nil {
			return Stored{}, err
		}
		if _, _, err := p(s.Order, &rules.File{}, ""); err != nil {
			return Stored{}, err
		}
	}
	id, err := f.IDs.Reserve(ctx, 1)
	if err != nil {
		return Stored{}, err
	}
	fileDoc, err := rules.NewDocumentID()
	if err != nil {
		return Stored{}, rules.Internal(err)
	}
	sum := sha256.Sum256(u.Body)
	at := rules.FormatTime(f.now())
	nf := &rules.File{ID: id, DocumentID: fileDoc, Name: name, Mime: mime, Size: int64(len(u.Body)),
		SHA256: hex.EncodeToString(sum[:]), CreatedAt: at, Key: prefix + doc + "/" + fileDoc}
	if err := f.Files.Put(ctx, nf.Key, mime, u.Body, sum); err != nil {
		return Stored{}, err
	}
	var replaced *rules.File
	read := s
	s, err = f.update(ctx, read, func(o rules.Order) (rules.Order, bool, error) {
		next, old, err := p(o, nf, at)
		replaced = old
		return next, err == nil, err
	}, told(typ))
	// A fresh context: the request's may be what ran out.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err != nil {
		// Remove the new object only once the order is known not to point
		// at it: an unused object costs storage, a missing one breaks the order.
		if now, rerr := f.Orders.Reread(cctx, read); rerr == nil && !pointsAt(now.Order, nf.Key) {
			if derr := f.Files.Delete(cctx, nf.Key); derr != nil {
				return Stored{}, errors.Join(err, fmt.Errorf("remove the unused upload: %w", derr))
			}
		}
		return Stored{}, err
	}
	if replaced != nil && replaced.Key != "" && replaced.Key != nf.Key {
		// Best effort: the bucket keeps the old version either way.
		f.Files.Delete(cctx, replaced.Key)
	}
	return s, nil
}
