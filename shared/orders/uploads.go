package orders

// This file holds the staged uploads, sent straight to the bucket: making
// one (a pre-signed request), and the checks of one before it is attached.

import (
	"context"
	"encoding/hex"
	"time"

	"stampduty/shared/stampduty"
)

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
	// stampduty.SniffLength bytes, its size and its SHA-256.
	Digest(ctx context.Context, key string) (head []byte, size int64, sum [32]byte, err error)
}

// Presigned is a request that sends a file straight to the bucket.
type Presigned struct {
	Method, URL string
	Headers     map[string]string
}

// Upload is the answer to a request for a pre-signed upload.
type Upload struct {
	ID string
	Presigned
	ExpiresAt string
}

// NewDocumentUpload makes an upload of the caller's document of owner's
// order doc, sent straight to the bucket (lifecycle.md "Large files").
func (f *Fulfiller) NewDocumentUpload(ctx context.Context, owner, doc string, d stampduty.Declared) (Upload, error) {
	return f.newUpload(ctx, target{owner: owner, doc: doc, kind: stampduty.Document}, d, putDocument)
}

// NewCertificateUpload makes an upload of the certificate of fulfillment
// ffDoc of order doc, sent straight to the bucket.
func (f *Fulfiller) NewCertificateUpload(ctx context.Context, doc, ffDoc string, d stampduty.Declared) (Upload, error) {
	return f.newUpload(ctx, target{doc: doc, ffDoc: ffDoc, kind: stampduty.Certificate}, d, putCertificate(ffDoc))
}

// newUpload checks what the client declares and the order's state (as a
// body upload would), records the staged upload (one PutItem) and
// pre-signs its request (no network call).
func (f *Fulfiller) newUpload(ctx context.Context, t target, d stampduty.Declared, p put) (Upload, error) {
	mime, name, err := t.kind.CheckDeclared(d)
	if err != nil {
		return Upload{}, err
	}
	s, err := f.takes(ctx, t, p)
	if err != nil {
		return Upload{}, err
	}
	id, err := stampduty.NewDocumentID()
	if err != nil {
		return Upload{}, stampduty.Internal(err)
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
	return Upload{ID: id, Presigned: req, ExpiresAt: stampduty.FormatTime(now.Add(URLLifetime))}, nil
}

// URLLifetime is how long a pre-signed upload request works (as the
// download addresses: files.URLLifetime).
const URLLifetime = 15 * time.Minute

// mayAttach reports whether w is a staged upload t may attach at now.
func mayAttach(w Watch, t target, now time.Time) bool {
	u := w.Upload
	return u != nil && u.Used == "" && now.Before(u.Until) && u.Kind == t.kind && u.Order == t.doc &&
		(t.kind == stampduty.Document && u.Caller == t.owner || t.kind == stampduty.Certificate && u.Fulfillment == t.ffDoc)
}

// copyStaged copies the staged file to nf's key and reads the copy once
// (the staging key could still be written to while its URL works; the copy
// cannot): its type must be the declared one (EUNSUPPORTED), its size at
// most the kind's limit; nf gets its size and SHA-256.
func (f *Fulfiller) copyStaged(ctx context.Context, staging string, nf *stampduty.File, k stampduty.FileKind, declared int64) error {
	if err := f.Direct.Copy(ctx, staging, nf.Key, nf.Mime); err != nil {
		if stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
			return stampduty.Errorf(stampduty.ECONFLICT, "The uploaded file is gone; make a new upload.")
		}
		return err
	}
	head, size, sum, err := f.Direct.Digest(ctx, nf.Key)
	if err != nil {
		return err
	}
	if size > k.MaxDirect() || size != declared {
		return stampduty.Errorf(stampduty.EUNSUPPORTED, "The file is not the %d bytes its upload declared.", declared)
	}
	if err := k.Sniff(head, nf.Mime); err != nil {
		return err
	}
	nf.Size, nf.SHA256 = size, hex.EncodeToString(sum[:])
	return nil
}
