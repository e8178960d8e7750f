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
	Outbox  []rules.Pending
}

// ErrChanged is the failure of a Replace whose order changed since it was
// read: another request's change was stored first.
var ErrChanged = errors.New("the order changed since it was read")

// Fulfillments reads and changes stored orders for their fulfillment.
type Fulfillments interface {
	// ByDocument returns the order with documentId doc, read eventually
	// consistent (a moment's lag after a change), or ENOTFOUND.
	ByDocument(ctx context.Context, doc string) (Stored, error)
	// Reread returns s's order as it is now (a strongly consistent read).
	Reread(ctx context.Context, s Stored) (Stored, error)
	// Replace stores o in place of s, with s.Outbox followed by events as
	// its pending events, on condition that s is still the stored version;
	// ErrChanged (wrapped) when it is not.
	Replace(ctx context.Context, s Stored, o rules.Order, events ...rules.Pending) error
	// Queue returns up to size orders waiting in status, oldest first,
	// from the position cursor names ("" for the start), and the cursor of
	// what follows ("" at the end). A cursor it did not make is EINVALID.
	Queue(ctx context.Context, status, cursor string, size int) ([]rules.OpsOrder, string, error)
}

// Files keeps the bytes of files and makes their download addresses.
type Files interface {
	// Put stores body under key; sum is its SHA-256.
	Put(ctx context.Context, key, mime string, body []byte, sum [32]byte) error
	// Purge removes what key holds, every version of it.
	Purge(ctx context.Context, key string) error
	// Sign fills in the download address of each file of o.
	Sign(ctx context.Context, o *rules.Order) error
}

// Direct is what the pre-signed path needs of the bucket besides Files.
type Direct interface {
	// PresignPut returns a request that stores exactly size bytes of type
	// mime under key, which the bucket refuses for any other type or size.
	PresignPut(ctx context.Context, key, mime string, size int64) (Presigned, error)
	// Stat returns the size and type of what key holds, or ENOTFOUND.
	Stat(ctx context.Context, key string) (int64, string, error)
	// Copy copies what from holds to to, as type mime, inside the bucket.
	Copy(ctx context.Context, from, to, mime string) error
	// Digest reads what key holds once, streaming: its first
	// rules.SniffLength bytes, its size and its SHA-256.
	Digest(ctx context.Context, key string) (head []byte, size int64, sum [32]byte, err error)
}

// Presigned is a request that sends a file straight to the bucket.
type Presigned struct {
	Method, URL string
	Headers     map[string]string
}

// The key prefixes of files: each function may write under its own only.
const (
	DocumentPrefix    = "documents/"
	CertificatePrefix = "certificates/"
)

// Fulfiller is the fulfillment workflow: reading one order, the operators'
// queue and status changes, and the files of an order.
type Fulfiller struct {
	Orders Fulfillments
	Files  Files
	// Direct is the bucket for the pre-signed path (the same as Files in
	// production); Watches records the files in flight (see Watch).
	Direct  Direct
	Watches Watches
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

// Queue returns a page of the operators' work queue (see Fulfillments.Queue),
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
	return f.updateWith(ctx, s, ch, tl, nil)
}

// updateWith is update that calls before, when not nil, right before the
// write (after ch made the order to write), and gives up with its error.
func (f *Fulfiller) updateWith(ctx context.Context, s Stored, ch change, tl tell, before func() error) (Stored, error) {
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
	var events []rules.Pending
	if typ, previous, status := tl(s.Order, next); typ != "" {
		if events, err = record(ctx, f.Listeners, s.Owner, typ, func() (rules.Pending, error) {
			return rules.NewPending(typ, next.UpdatedAt, next, previous, status)
		}); err != nil {
			return Stored{}, err
		}
	}
	if before != nil {
		if err := before(); err != nil {
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
		return rules.EventOrderStatusChanged, &previous, &status
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
	return f.document(ctx, owner, doc, source{body: &u})
}

// AttachDocument attaches the file of the staged upload id (sent straight
// to the bucket) as the caller's document of owner's order doc, as
// UploadDocument stores one.
func (f *Fulfiller) AttachDocument(ctx context.Context, owner, doc, id string) (rules.File, error) {
	return f.document(ctx, owner, doc, source{upload: id})
}

// document stores the caller's document from src.
func (f *Fulfiller) document(ctx context.Context, owner, doc string, src source) (rules.File, error) {
	s, err := f.attach(ctx, target{owner: owner, doc: doc, kind: rules.Document}, DocumentPrefix, src, rules.EventOrderDocumentUploaded, putDocument)
	if err != nil {
		return rules.File{}, err
	}
	signed := rules.Order{StampDuty: rules.StampDuty{UploadedDocument: s.StampDuty.UploadedDocument}}
	if err := f.Files.Sign(ctx, &signed); err != nil {
		return rules.File{}, err
	}
	return *signed.StampDuty.UploadedDocument, nil
}

// AttachCertificate stores the certificate of fulfillment ffDoc of order
// doc, replacing an earlier one, while the fulfillment is Procured.
func (f *Fulfiller) AttachCertificate(ctx context.Context, doc, ffDoc string, u rules.Upload) (rules.OpsOrder, error) {
	return f.certificate(ctx, doc, ffDoc, source{body: &u})
}

// AttachStagedCertificate attaches the file of the staged upload id as the
// certificate of fulfillment ffDoc of order doc, as AttachCertificate
// stores one.
func (f *Fulfiller) AttachStagedCertificate(ctx context.Context, doc, ffDoc, id string) (rules.OpsOrder, error) {
	return f.certificate(ctx, doc, ffDoc, source{upload: id})
}

// certificate stores a certificate from src.
func (f *Fulfiller) certificate(ctx context.Context, doc, ffDoc string, src source) (rules.OpsOrder, error) {
	s, err := f.attach(ctx, target{doc: doc, ffDoc: ffDoc, kind: rules.Certificate}, CertificatePrefix, src, rules.EventOrderCertificateAttached,
		putCertificate(ffDoc))
	if err != nil {
		return rules.OpsOrder{}, err
	}
	return s.OpsOrder, f.Files.Sign(ctx, &s.Order)
}

// putCertificate places a certificate in fulfillment ffDoc.
func putCertificate(ffDoc string) put {
	return func(o rules.Order, nf *rules.File, at string) (rules.Order, *rules.File, error) {
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
	}
}

// putDocument places the caller's document.
func putDocument(o rules.Order, nf *rules.File, at string) (rules.Order, *rules.File, error) {
	if err := o.CanUploadDocument(); err != nil {
		return o, nil, err
	}
	old := o.StampDuty.UploadedDocument
	o.StampDuty.UploadedDocument, o.UpdatedAt = nf, at
	return o, old, nil
}

// Upload is the answer to a request for a pre-signed upload.
type Upload struct {
	ID string
	Presigned
	ExpiresAt string
}

// NewDocumentUpload makes an upload of the caller's document of owner's
// order doc, sent straight to the bucket (lifecycle.md "Large files").
func (f *Fulfiller) NewDocumentUpload(ctx context.Context, owner, doc string, d rules.Declared) (Upload, error) {
	return f.newUpload(ctx, target{owner: owner, doc: doc, kind: rules.Document}, d, putDocument)
}

// NewCertificateUpload makes an upload of the certificate of fulfillment
// ffDoc of order doc, sent straight to the bucket.
func (f *Fulfiller) NewCertificateUpload(ctx context.Context, doc, ffDoc string, d rules.Declared) (Upload, error) {
	return f.newUpload(ctx, target{doc: doc, ffDoc: ffDoc, kind: rules.Certificate}, d, putCertificate(ffDoc))
}

// newUpload checks what the client declares and the order's state (as a
// body upload would), records the staged upload (one PutItem) and
// pre-signs its request (no network call).
func (f *Fulfiller) newUpload(ctx context.Context, t target, d rules.Declared, p put) (Upload, error) {
	mime, name, err := t.kind.CheckDeclared(d)
	if err != nil {
		return Upload{}, err
	}
	s, err := f.takes(ctx, t, p)
	if err != nil {
		return Upload{}, err
	}
	id, err := rules.NewDocumentID()
	if err != nil {
		return Upload{}, rules.Internal(err)
	}
	now := f.now()
	key := StagingPrefix + id
	until := now.Add(UploadLifetime)
	w := Watch{ID: key, Owner: s.Owner, Seq: s.Seq, Keys: []string{key}, Due: until,
		Upload: &Staged{Kind: t.kind, Caller: t.owner, Order: t.doc, Fulfillment: t.ffDoc, Name: name, Mime: mime, Size: d.Size, Until: until}}
	if err := f.Watches.Watch(ctx, w); err != nil {
		return Upload{}, err
	}
	req, err := f.Direct.PresignPut(ctx, key, mime, d.Size)
	if err != nil {
		return Upload{}, err
	}
	return Upload{ID: id, Presigned: req, ExpiresAt: rules.FormatTime(now.Add(URLLifetime))}, nil
}

// URLLifetime is how long a pre-signed upload request works (as the
// download addresses: files.URLLifetime).
const URLLifetime = 15 * time.Minute

// target is the file an attach stores: the caller's document of owner's
// order doc, or (owner "") the certificate of fulfillment ffDoc of order doc.
type target struct {
	owner, doc, ffDoc string
	kind              rules.FileKind
}

// source is where an attach takes the file from: a request's body, or a
// staged upload's id.
type source struct {
	body   *rules.Upload
	upload string
}

// pointsAt reports whether a file of o is stored under key.
func pointsAt(o rules.Order, key string) bool {
	return slices.ContainsFunc(o.Files(), func(f *rules.File) bool { return f.Key == key })
}

// put places the new file nf in order o (updated at at) and returns the
// file it replaces, or why it may not.
type put func(o rules.Order, nf *rules.File, at string) (rules.Order, *rules.File, error)

// takes returns t's order when it takes a file now (p accepts one), read
// again consistently before a refusal is answered.
func (f *Fulfiller) takes(ctx context.Context, t target, p put) (Stored, error) {
	s, err := f.find(ctx, t.owner, t.doc)
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
	return s, nil
}

// noUpload is the answer for an upload id that may not be attached here.
func noUpload(id string) error {
	return rules.Errorf(rules.ENOTFOUND, "Upload with the id: %s cannot be found.", id)
}

// attach stores a file of t from src and points t's order at it, recording
// an event of type typ with the change. The order never points at a file
// that is not stored, and no stored file outlives the order's pointing at
// it (see Watch):
//
//  1. a watch of the new key, the staging key (an upload) and the key of
//     the file the order holds now is stored (for an upload, by its claim,
//     which also makes it single-use) — before any byte is stored;
//  2. the bytes are stored under a new key of random ids (prefix, the
//     order's documentId, the file's): written from the body, or copied
//     from the staging key and read back once to sniff, size and hash;
//  3. the order is written (one conditional write), the watch first
//     extended if the order now holds another file than was read;
//  4. what the order does not point at is removed, and the watch dropped.
//
// A failure or a kill anywhere leaves the watch, and the Sweeper removes
// what the order does not point at once it is due.
func (f *Fulfiller) attach(ctx context.Context, t target, prefix string, src source, typ string, p put) (Stored, error) {
	var (
		mime, name string
		staged     *Staged
		err        error
	)
	if src.body != nil {
		if mime, name, err = t.kind.Check(*src.body); err != nil {
			return Stored{}, err
		}
	} else {
		// Refuse early, without using it up, an upload that is not this
		// target's or has no file yet.
		w, err := f.Watches.Get(ctx, StagingPrefix+src.upload)
		if rules.ErrorCode(err) == rules.ENOTFOUND || err == nil && !mayAttach(w, t, f.now()) {
			return Stored{}, noUpload(src.upload)
		}
		if err != nil {
			return Stored{}, err
		}
		staged = w.Upload
		if _, _, err := f.Direct.Stat(ctx, w.ID); rules.ErrorCode(err) == rules.ENOTFOUND {
			return Stored{}, rules.Errorf(rules.ECONFLICT, "Nothing has been uploaded with the id: %s yet: send the file to its url first.", src.upload)
		} else if err != nil {
			return Stored{}, err
		}
		mime, name = staged.Mime, staged.Name
	}
	// Refuse early what the order's state refuses, before any upload.
	s, err := f.takes(ctx, t, p)
	if err != nil {
		return Stored{}, err
	}
	id, err := f.IDs.Reserve(ctx, 1)
	if err != nil {
		return Stored{}, err
	}
	fileDoc, err := rules.NewDocumentID()
	if err != nil {
		return Stored{}, rules.Internal(err)
	}
	now := f.now()
	at := rules.FormatTime(now)
	nf := &rules.File{ID: id, DocumentID: fileDoc, Name: name, Mime: mime, CreatedAt: at, Key: prefix + t.doc + "/" + fileDoc}
	keys := []string{nf.Key}
	if _, old, _ := p(s.Order, nf, at); old != nil && old.Key != "" {
		keys = append(keys, old.Key)
	}
	var w Watch
	if staged == nil {
		body := src.body.Body
		sum := sha256.Sum256(body)
		nf.Size, nf.SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
		w = Watch{ID: nf.Key, Owner: s.Owner, Seq: s.Seq, Keys: keys, Due: now.Add(WatchDelay)}
		if err := f.Watches.Watch(ctx, w); err != nil {
			return Stored{}, err
		}
		if err := f.Files.Put(ctx, nf.Key, mime, body, sum); err != nil {
			return Stored{}, f.abandon(ctx, w, err, false)
		}
	} else {
		staging := StagingPrefix + src.upload
		want := Staged{Kind: t.kind, Caller: t.owner, Order: t.doc, Fulfillment: t.ffDoc}
		if w, err = f.Watches.Claim(ctx, staging, want, append([]string{staging}, keys...), now, now.Add(WatchDelay)); err != nil {
			if rules.ErrorCode(err) == rules.ENOTFOUND {
				return Stored{}, noUpload(src.upload)
			}
			return Stored{}, err
		}
		if err := f.copyStaged(ctx, staging, nf, t.kind, staged.Size); err != nil {
			return Stored{}, f.abandon(ctx, w, err, false)
		}
	}
	var replaced *rules.File
	read := s
	s, err = f.updateWith(ctx, read, func(o rules.Order) (rules.Order, bool, error) {
		next, old, err := p(o, nf, at)
		replaced = old
		return next, err == nil, err
	}, told(typ), func() error {
		// The order holds another file than was read: watch it too before
		// the order lets go of it.
		if replaced == nil || replaced.Key == "" || slices.Contains(w.Keys, replaced.Key) {
			return nil
		}
		w.Keys = append(slices.Clip(w.Keys), replaced.Key)
		return f.Watches.Watch(ctx, w)
	})
	if err != nil {
		return Stored{}, f.abandon(ctx, w, err, staged == nil)
	}
	// A staged upload's URL may still work for a while: its watch stays
	// (due after the URL expires) so that the Sweeper removes whatever is
	// sent to it after this.
	f.settle(ctx, w, s.Order, staged == nil)
	return s, nil
}

// mayAttach reports whether w is a staged upload t may attach at now.
func mayAttach(w Watch, t target, now time.Time) bool {
	u := w.Upload
	return u != nil && u.Used == "" && now.Before(u.Until) && u.Kind == t.kind && u.Order == t.doc &&
		(t.kind == rules.Document && u.Caller == t.owner || t.kind == rules.Certificate && u.Fulfillment == t.ffDoc)
}

// copyStaged copies the staged file to nf's key and reads the copy once
// (the staging key could still be written to while its URL works; the copy
// cannot): its type must be the declared one (EUNSUPPORTED), its size at
// most the kind's limit; nf gets its size and SHA-256.
func (f *Fulfiller) copyStaged(ctx context.Context, staging string, nf *rules.File, k rules.FileKind, declared int64) error {
	if err := f.Direct.Copy(ctx, staging, nf.Key, nf.Mime); err != nil {
		if rules.ErrorCode(err) == rules.ENOTFOUND {
			return rules.Errorf(rules.ECONFLICT, "The uploaded file is gone; make a new upload.")
		}
		return err
	}
	head, size, sum, err := f.Direct.Digest(ctx, nf.Key)
	if err != nil {
		return err
	}
	if size > k.MaxDirect() || size != declared {
		return rules.Errorf(rules.EUNSUPPORTED, "The file is not the %d bytes its upload declared.", declared)
	}
	if err := k.Sniff(head, nf.Mime); err != nil {
		return err
	}
	nf.Size, nf.SHA256 = size, hex.EncodeToString(sum[:])
	return nil
}

// abandon answers err for an attach that failed after its watch w was
// stored: what the order (read again) does not point at among w's keys is
// removed now, within a couple of seconds, and w is dropped when drop says
// so and all went well. After a failed write to S3, drop is false: that
// write may still land after the removal (a stalled S3 finishing it
// later), so the Sweeper looks again once w is due.
func (f *Fulfiller) abandon(ctx context.Context, w Watch, err error, drop bool) error {
	// A fresh context: the request's may be what ran out.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	now, rerr := f.Orders.Reread(cctx, Stored{OpsOrder: rules.OpsOrder{Owner: w.Owner}, Seq: w.Seq})
	if rerr != nil {
		return err // the Sweeper will see
	}
	f.settle(cctx, w, now.Order, drop)
	return err
}

// settle removes each key of w that o does not point at and, with drop,
// drops w; best effort: when any of it fails, w stays for the Sweeper.
func (f *Fulfiller) settle(ctx context.Context, w Watch, o rules.Order, drop bool) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if purge(cctx, f.Files, w, o) == nil && drop {
		f.Watches.Unwatch(cctx, w.ID)
	}
}

// purge removes each key of w that o does not point at.
func purge(ctx context.Context, files Files, w Watch, o rules.Order) error {
	var errs []error
	for _, k := range w.Keys {
		if !pointsAt(o, k) {
			if err := files.Purge(ctx, k); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", k, err))
			}
		}
	}
	return errors.Join(errs...)
}
