package orders

// This file holds the files of an order: the caller's document and the
// certificates, attached from a request's body or a staged upload, and
// the removal of what the order no longer points at.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"stampduty/shared/stampduty"
)

// Files keeps the bytes of files and makes their download addresses.
type Files interface {
	// Put stores body under key; sum is its SHA-256.
	Put(ctx context.Context, key, mime string, body []byte, sum [32]byte) error
	// Purge removes what key holds, every version of it.
	Purge(ctx context.Context, key string) error
	// Sign fills in the download address of each file of o.
	Sign(ctx context.Context, o *stampduty.Order) error
}

// The key prefixes of files: each function may write under its own only.
const (
	DocumentPrefix    = "documents/"
	CertificatePrefix = "certificates/"
)

// TestFiles is the part of a file's key, after its kind's prefix, that
// marks a test order's file: documents/test/… and certificates/test/….
// template.yaml's lifecycle rules expire what is under those prefixes
// (test-mode.md, "Costs": test orders' files are deleted 30 days after
// creation). They stay inside DocumentPrefix and CertificatePrefix, so
// every IAM grant (documents/*, certificates/*), the download links and
// the Sweeper treat them as any file; no live order's key can start so,
// its next part being the order's 24-character documentId.
const TestFiles = "test/"

// FilePrefix returns the prefix of the keys of the files of kind that an
// order of owner (an owner key: stampduty.TestOwnerOf for a test order) keeps:
// DocumentPrefix or CertificatePrefix, followed by TestFiles for a test
// order. A file's key is FileKey's.
func FilePrefix(owner string, kind stampduty.FileKind) string {
	prefix := DocumentPrefix
	if kind == stampduty.Certificate {
		prefix = CertificatePrefix
	}
	if _, live := stampduty.CallerOf(owner); !live {
		prefix += TestFiles
	}
	return prefix
}

// FileKey returns the key of the file fileDoc (its documentId) of kind
// of the order orderDoc of owner: FilePrefix, the order's documentId, the
// file's. The attach of a document or a certificate stores a file there;
// so must anything else that stores a file of an order (the test mode's
// SPECIMEN certificate).
func FileKey(owner string, kind stampduty.FileKind, orderDoc, fileDoc string) string {
	return FilePrefix(owner, kind) + orderDoc + "/" + fileDoc
}

// UploadDocument stores the caller's document of owner's order doc,
// replacing an earlier one, while every fulfillment is Pending.
func (f *Fulfiller) UploadDocument(ctx context.Context, owner, doc string, u stampduty.Upload) (stampduty.File, error) {
	return f.document(ctx, owner, doc, source{body: &u})
}

// AttachDocument attaches the file of the staged upload id (sent straight
// to the bucket) as the caller's document of owner's order doc, as
// UploadDocument stores one.
func (f *Fulfiller) AttachDocument(ctx context.Context, owner, doc, id string) (stampduty.File, error) {
	return f.document(ctx, owner, doc, source{upload: id})
}

// document stores the caller's document from src.
func (f *Fulfiller) document(ctx context.Context, owner, doc string, src source) (stampduty.File, error) {
	s, err := f.attach(ctx, target{owner: owner, doc: doc, kind: stampduty.Document}, src, stampduty.EventOrderDocumentUploaded, putDocument)
	if err != nil {
		return stampduty.File{}, err
	}
	signed := stampduty.Order{StampDuty: stampduty.StampDuty{UploadedDocument: s.StampDuty.UploadedDocument}}
	if err := f.Files.Sign(ctx, &signed); err != nil {
		return stampduty.File{}, err
	}
	return *signed.StampDuty.UploadedDocument, nil
}

// AttachCertificate stores the certificate of fulfillment ffDoc of order
// doc, replacing an earlier one, while the fulfillment is Procured.
func (f *Fulfiller) AttachCertificate(ctx context.Context, doc, ffDoc string, u stampduty.Upload) (stampduty.OpsOrder, error) {
	return f.certificate(ctx, doc, ffDoc, source{body: &u})
}

// AttachStagedCertificate attaches the file of the staged upload id as the
// certificate of fulfillment ffDoc of order doc, as AttachCertificate
// stores one.
func (f *Fulfiller) AttachStagedCertificate(ctx context.Context, doc, ffDoc, id string) (stampduty.OpsOrder, error) {
	return f.certificate(ctx, doc, ffDoc, source{upload: id})
}

// certificate stores a certificate from src.
func (f *Fulfiller) certificate(ctx context.Context, doc, ffDoc string, src source) (stampduty.OpsOrder, error) {
	s, err := f.attach(ctx, target{doc: doc, ffDoc: ffDoc, kind: stampduty.Certificate}, src, stampduty.EventOrderCertificateAttached,
		putCertificate(ffDoc))
	if err != nil {
		return stampduty.OpsOrder{}, err
	}
	return s.OpsOrder, f.Files.Sign(ctx, &s.Order)
}

// putCertificate places a certificate in fulfillment ffDoc.
func putCertificate(ffDoc string) put {
	return func(o stampduty.Order, nf *stampduty.File, at string) (stampduty.Order, *stampduty.File, error) {
		i := o.Fulfillment(ffDoc)
		if i < 0 {
			return o, nil, stampduty.Errorf(stampduty.ENOTFOUND, "Fulfillment with the documentId: %s cannot be found.", ffDoc)
		}
		if err := o.NotCancelled(stampduty.CancelledCertificate); err != nil {
			return o, nil, err
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
func putDocument(o stampduty.Order, nf *stampduty.File, at string) (stampduty.Order, *stampduty.File, error) {
	if err := o.CanUploadDocument(); err != nil {
		return o, nil, err
	}
	old := o.StampDuty.UploadedDocument
	o.StampDuty.UploadedDocument, o.UpdatedAt = nf, at
	return o, old, nil
}

// target is the file an attach stores: the caller's document of owner's
// order doc, or (owner "") the certificate of fulfillment ffDoc of order doc.
type target struct {
	owner, doc, ffDoc string
	kind              stampduty.FileKind
}

// source is where an attach takes the file from: a request's body, or a
// staged upload's id.
type source struct {
	body   *stampduty.Upload
	upload string
}

// pointsAt reports whether a file of o is stored under key.
func pointsAt(o stampduty.Order, key string) bool {
	return slices.ContainsFunc(o.Files(), func(f *stampduty.File) bool { return f.Key == key })
}

// put places the new file nf in order o (updated at at) and returns the
// file it replaces, or why it may not.
type put func(o stampduty.Order, nf *stampduty.File, at string) (stampduty.Order, *stampduty.File, error)

// takes returns t's order when it takes a file now (p accepts one), read
// again consistently before a refusal is answered.
func (f *Fulfiller) takes(ctx context.Context, t target, p put) (Stored, error) {
	s, err := f.find(ctx, t.owner, t.doc)
	if err != nil {
		return Stored{}, err
	}
	if t.kind == stampduty.Certificate && stampduty.IsTestOwner(s.Owner) {
		return Stored{}, stampduty.ErrTestOrderMoves(t.doc)
	}
	if _, _, err := p(s.Order, &stampduty.File{}, ""); err != nil {
		if s, err = f.Orders.Reread(ctx, s); err != nil {
			return Stored{}, err
		}
		if _, _, err := p(s.Order, &stampduty.File{}, ""); err != nil {
			return Stored{}, err
		}
	}
	return s, nil
}

// noUpload is the answer for an upload id that may not be attached here.
func noUpload(id string) error {
	return stampduty.Errorf(stampduty.ENOTFOUND, "Upload with the id: %s cannot be found.", id)
}

// attach stores a file of t from src and points t's order at it, recording
// an event of type typ with the change. The order never points at a file
// that is not stored, and no stored file outlives the order's pointing at
// it (see Watch):
//
//  1. a watch of the new key, the staging key (an upload) and the key of
//     the file the order holds now is stored (for an upload, by its claim,
//     which also makes it single-use) — before any byte is stored;
//  2. the bytes are stored under a new key of random ids (FileKey: the
//     kind's prefix, under test/ for a test order, the order's
//     documentId, the file's): written from the body, or copied
//     from the staging key and read back once to sniff, size and hash;
//  3. the order is written (one conditional write), the watch first
//     extended if the order now holds another file than was read;
//  4. what the order does not point at is removed, and the watch dropped.
//
// A failure or a kill anywhere leaves the watch, and the Sweeper removes
// what the order does not point at once it is due.
func (f *Fulfiller) attach(ctx context.Context, t target, src source, typ string, p put) (Stored, error) {
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
		if stampduty.ErrorCode(err) == stampduty.ENOTFOUND || err == nil && !mayAttach(w, t, f.now()) {
			return Stored{}, noUpload(src.upload)
		}
		if err != nil {
			return Stored{}, err
		}
		staged = w.Upload
		if _, _, err := f.Direct.Stat(ctx, w.ID); stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
			return Stored{}, stampduty.Errorf(stampduty.ECONFLICT, "Nothing has been uploaded with the id: %s yet: send the file to its url first.", src.upload)
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
	id, fileDoc, err := NewIdentity(ctx, f.IDs)
	if err != nil {
		return Stored{}, err
	}
	now := f.now()
	at := stampduty.FormatTime(now)
	nf := &stampduty.File{ID: id, DocumentID: fileDoc, Name: name, Mime: mime, CreatedAt: at, Key: FileKey(s.Owner, t.kind, t.doc, fileDoc)}
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
			if stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
				return Stored{}, noUpload(src.upload)
			}
			return Stored{}, err
		}
		if err := f.copyStaged(ctx, staging, nf, t.kind, staged.Size); err != nil {
			return Stored{}, f.abandon(ctx, w, err, false)
		}
	}
	var replaced *stampduty.File
	read := s
	s, err = f.updateWith(ctx, read, func(o stampduty.Order) (stampduty.Order, bool, error) {
		next, old, err := p(o, nf, at)
		replaced = old
		return next, err == nil, err
	}, told(typ, t.ffDoc), func() error {
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
	now, rerr := f.Orders.Reread(cctx, Stored{OpsOrder: stampduty.OpsOrder{Owner: w.Owner}, Seq: w.Seq})
	if rerr != nil {
		return err // the Sweeper will see
	}
	f.settle(cctx, w, now.Order, drop)
	return err
}

// settle removes each key of w that o does not point at and, with drop,
// drops w; best effort: when any of it fails, w stays for the Sweeper.
func (f *Fulfiller) settle(ctx context.Context, w Watch, o stampduty.Order, drop bool) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if purge(cctx, f.Files, w, o) == nil && drop {
		f.Watches.Unwatch(cctx, w.ID)
	}
}

// purge removes each key of w that o does not point at.
func purge(ctx context.Context, files Files, w Watch, o stampduty.Order) error {
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
