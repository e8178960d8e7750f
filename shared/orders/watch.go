package orders

import (
	"context"
	"time"

	"stampduty/shared/stampduty"
)

// No stored object may outlive the order that points at it, nor exist
// without one (lifecycle.md "Files"; issue 17). A request that writes or
// replaces a file first writes a Watch of the objects involved: the new
// object's key, the key of the file it replaces and, for an upload sent
// straight to the bucket, its staging key. The watch is due WatchDelay
// later, well after any request can still be running. When the request ends
// well, it removes what the order no longer points at and drops the watch;
// when it fails or is killed half-way, the watch stays, and the Sweeper,
// once it is due, removes every object of it that the order (read
// consistently) does not point at. There are no transactions: every step
// is one conditional write or an idempotent removal, and the same code runs
// on DynamoDB and S3 and on dynalite and versitygw.

// WatchDelay is how long after a watch is written the Sweeper may act on
// it: far longer than any request runs (the functions time out after
// 20 s at most), so that it never removes a file a live request is about
// to point an order at.
const WatchDelay = time.Hour

// UploadLifetime is how long an upload made for the pre-signed path may be
// attached: its URL works for 15 minutes (files.URLLifetime) and a
// transfer that started before then may take a while to finish, so the
// upload id stays attachable for one hour after it was made, then the
// Sweeper removes it (within its next run: an hour later at most).
const UploadLifetime = time.Hour

// StagingPrefix is where files sent straight to the bucket wait until they
// are attached: uploads/<upload id>, no personal data in the key. The
// bucket's lifecycle rule removes anything left there after a day, behind
// the Sweeper.
const StagingPrefix = "uploads/"

// What a staged upload's Used says once it may no longer be attached.
const (
	UsedAttached = "attached"
	UsedExpired  = "expired"
)

// Watch is a record that each object of Keys, written for the order
// (Owner, Seq), must be pointed at by that order or be removed; it is due
// at Due. A staged upload's watch carries the upload (Upload).
type Watch struct {
	// ID is the record's key: the staging key of an upload, or the key of
	// the new object a body upload writes.
	ID    string
	Owner string
	Seq   int64
	Keys  []string
	Due   time.Time
	// Upload is the staged upload this watch is for, nil for a body
	// upload's.
	Upload *Staged
}

// Staged is an upload made for the pre-signed path: what the client said
// it would send, for which order, and until when it may be attached.
type Staged struct {
	Kind stampduty.FileKind
	// Caller is the caller who made it; "" for a certificate, which any
	// operator may attach.
	Caller      string
	Order       string
	Fulfillment string
	Name, Mime  string
	Size        int64
	Until       time.Time
	// Used is "" while it may be attached, else UsedAttached or UsedExpired.
	Used string
}

// Watches stores watches and staged uploads.
type Watches interface {
	// Watch stores w, in place of any record with its ID.
	Watch(ctx context.Context, w Watch) error
	// Unwatch removes the record id.
	Unwatch(ctx context.Context, id string) error
	// Get returns the record id read consistently, or ENOTFOUND.
	Get(ctx context.Context, id string) (Watch, error)
	// Claim marks the staged upload id attached, with keys to watch and due
	// at due, on condition that it is still unused, attachable at now, and
	// is want's (kind, caller, order, fulfillment): of two claims of one
	// upload exactly one succeeds. It returns the watch after the claim;
	// ENOTFOUND when the condition fails.
	Claim(ctx context.Context, id string, want Staged, keys []string, now, due time.Time) (Watch, error)
	// Due returns up to limit watches due at now, soonest first per shard.
	Due(ctx context.Context, now time.Time, limit int) ([]Watch, error)
	// Hold makes w due at until, and an unused upload's Used used, on
	// condition that it is as it was read (its due and use): a sweeper run
	// holds a watch before it acts on it, so that no other run and no
	// claim acts at the same time. false when it changed.
	Hold(ctx context.Context, w Watch, until time.Time, used string) (bool, error)
}
