package orders

// This file holds a batch created under an Idempotency-Key (papers.md
// "Batches"): the key's record with the rows planned before any write, the
// claim and its takeover, and the replay of a completed key's answers.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
)

// PlannedRow is a row a batch under an Idempotency-Key is to create: its
// index in the batch, the documentId chosen for it before any write (its
// seq not yet put in: the stored one shares its random part,
// stampduty.SameOrderID), its seq once reserved (0 before), and its price.
type PlannedRow struct {
	Index            int
	Doc              string
	Seq              int64
	Amount, Quantity int64
}

// RowAnswer is one row's answer as a completed batch key keeps it, for its
// replays: the created order's documentId and price, or the error (Code
// not empty) with its message and fields. Only final answers are kept: a
// created order or a refusal of the row itself (never a 5xx).
type RowAnswer struct {
	Index            int
	OrderID          string
	Amount, Quantity int64
	Duty             *duty.Duty // a created order's
	Code             stampduty.Code
	Message          string
	Fields           []stampduty.FieldError
}

// BatchRecord is what a batch's Idempotency-Key stands for: the key's
// record (OrderID is the claim's own id, unique to the request that made
// it), the planned rows, and once done the answers.
type BatchRecord struct {
	KeyRecord
	Rows    []PlannedRow
	Answers []RowAnswer
}

// BatchKeys keeps the Idempotency-Key records of batches, beside the
// creates' (Keys: Release and TakeOver serve both).
type BatchKeys interface {
	// ClaimBatch records that a request (body fingerprint fp, claim id
	// claim) holds the key with its planned rows, unless a live record
	// exists; it returns the record now standing and whether this call
	// made it.
	ClaimBatch(ctx context.Context, owner, key, fp, claim string, rows []PlannedRow, now time.Time, lease, ttl time.Duration) (BatchRecord, bool, error)
	// GetBatch returns the live record of the key; ok is false when there
	// is none.
	GetBatch(ctx context.Context, owner, key string, now time.Time) (rec BatchRecord, ok bool, err error)
	// PlanBatch replaces the planned rows (with their seqs) of the pending
	// claim claim.
	PlanBatch(ctx context.Context, owner, key, claim string, rows []PlannedRow) error
	// CompleteBatch marks the claim's batch done, with its answers.
	CompleteBatch(ctx context.Context, owner, key, claim string, answers []RowAnswer) error
	// Yield ends the lease of the pending claim claim at now, so that a
	// retry takes over at once.
	Yield(ctx context.Context, owner, key, claim string, now time.Time) error
	// Release drops the pending claim claim (nothing of it was stored).
	Release(ctx context.Context, owner, key, claim string) error
	// TakeOver gives a pending claim whose lease ran out to the caller.
	TakeOver(ctx context.Context, owner, key string, rec KeyRecord, now time.Time, lease time.Duration) (ok bool, err error)
}

// batchFingerprint makes a batch's body fingerprint differ from any
// create's, so that one key used for both is a conflict.
func batchFingerprint(fp string) string { return "batch:" + fp }

// createOnce creates the batch's rows under the caller's key, as
// Creator.createOnce does for one order: the first request with the key
// claims it, with the documentIds it chose for its valid rows, and
// creates them; a later one with the same body answers the same rows and
// creates nothing; another body gets 409; one that finds the key held
// waits up to KeyWait, then answers 409. A claim whose holder vanished or
// yielded (its lease ran out or was ended) is taken over: the rows it
// stored are recognised and the rest created (resume).
func (b *Batcher) createOnce(ctx context.Context, owner string, key Key, rows []*row) ([]RowResult, error) {
	fp := batchFingerprint(key.Fingerprint)
	claim, err := stampduty.NewDocumentID()
	if err != nil {
		return nil, stampduty.Internal(err)
	}
	var plan []PlannedRow
	for _, r := range pending(rows) {
		plan = append(plan, PlannedRow{Index: r.index, Doc: r.order.DocumentID, Amount: r.ok.amount, Quantity: r.ok.quantity()})
	}
	now := b.Creator.now
	deadline := now().Add(KeyWait)
	rec, claimed, err := b.Keys.ClaimBatch(ctx, owner, key.Value, fp, claim, plan, now(), KeyLease, KeyTTL)
	for {
		if err != nil {
			return nil, err
		}
		if claimed {
			rec.Rows = plan
			return b.resume(ctx, owner, key.Value, rec, rows, false)
		}
		if rec.Fingerprint != fp {
			return nil, stampduty.Errorf(stampduty.ECONFLICT, "This Idempotency-Key was already used with a different request")
		}
		if rec.State == KeyDone {
			return replay(rec.Answers, rows)
		}
		if !now().Before(rec.Lease) {
			ok, err := b.Keys.TakeOver(ctx, owner, key.Value, rec.KeyRecord, now(), KeyLease)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, errKeyBusy()
			}
			return b.resume(ctx, owner, key.Value, rec, rows, true)
		}
		if !now().Before(deadline) {
			return nil, errKeyBusy()
		}
		select {
		case <-time.After(keyPoll):
		case <-ctx.Done():
			return nil, stampduty.Unavailable(ctx.Err())
		}
		var live bool
		if rec, live, err = b.Keys.GetBatch(ctx, owner, key.Value, now()); err == nil && !live {
			rec, claimed, err = b.Keys.ClaimBatch(ctx, owner, key.Value, fp, claim, plan, now(), KeyLease, KeyTTL)
		}
	}
}

// resume creates the rows of a batch whose key this request holds: rec is
// its record, whose planned rows give each valid row its documentId (and,
// once reserved, its seq). With takenOver (another request made the plan
// and may have stored some of it), the planned seqs are read in one Query
// (Slots): a row whose seq holds its order is answered with it, and not
// created again; a row whose seq holds something else (a voided seq, or
// another order, as when its put moved on) is looked for with Find first.
// Rows without a seq get theirs in one counter call, recorded in the plan
// before any put, so that a retry after a cut-off finds them. Then the key
// is completed with every row's answer, or, when a row failed in a way a
// retry may cure (a 5xx), its lease is ended so that the retry, with the
// same key, resumes at once and creates just those rows. When nothing
// could be stored the claim is released (the single create's rule).
func (b *Batcher) resume(ctx context.Context, owner, key string, rec BatchRecord, rows []*row, takenOver bool) ([]RowResult, error) {
	claim := rec.OrderID
	planned := map[int]PlannedRow{}
	for _, p := range rec.Rows {
		planned[p.Index] = p
	}
	var stored map[int64]string
	if takenOver {
		var lo, hi int64
		for _, p := range rec.Rows {
			if p.Seq > 0 {
				lo, hi = minSeq(lo, p.Seq), max(hi, p.Seq)
			}
		}
		if hi > 0 {
			var err error
			if stored, err = b.Orders.Slots(ctx, owner, lo, hi); err != nil {
				return nil, err
			}
		}
	}
	var todo []*row
	for _, r := range rows {
		p, isPlanned := planned[r.index]
		if !isPlanned {
			if !r.done { // valid now, not when the plan was made: a row of its own
				todo = append(todo, r)
			}
			continue
		}
		if takenOver && p.Seq > 0 {
			doc, held := stored[p.Seq]
			found := held && stampduty.SameOrderID(doc, p.Doc)
			if held && !found {
				var err error
				if doc, found, err = b.Creator.Orders.Find(ctx, owner, p.Doc, rec.Claimed.Add(-time.Minute)); err != nil {
					return nil, err
				}
			}
			if found {
				// The order was priced as the row is now, unless the
				// catalogue changed since: then its duty is not told.
				var d *duty.Duty
				if r.ok.duty != nil && r.ok.amount == p.Amount {
					d = r.ok.duty
				}
				r.res, r.done = RowResult{OrderID: doc, Amount: p.Amount, Quantity: p.Quantity, TotalAmount: p.Amount * p.Quantity, Duty: d}, true
				continue
			}
		}
		if r.done { // refused now (the catalogue changed), and not stored
			continue
		}
		r.order.DocumentID, r.seq = p.Doc, p.Seq
		todo = append(todo, r)
	}
	err := b.store(ctx, owner, todo, func(fresh []*row) error {
		plan := slices.Clone(rec.Rows)
		for _, r := range fresh {
			at := slices.IndexFunc(plan, func(p PlannedRow) bool { return p.Index == r.index })
			p := PlannedRow{Index: r.index, Doc: r.order.DocumentID, Seq: r.seq, Amount: r.ok.amount, Quantity: r.ok.quantity()}
			if at < 0 {
				plan = append(plan, p)
			} else {
				plan[at] = p
			}
		}
		return b.Keys.PlanBatch(ctx, owner, key, claim, plan)
	})
	// A fresh context for the key's last write: the request's may be what
	// ran out.
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err != nil {
		if !takenOver {
			// Nothing was put (store fails only before its puts): the
			// claim goes, and a retry starts afresh.
			b.Keys.Release(kctx, owner, key, claim)
		}
		return nil, err
	}
	answers, final := answersOf(rows)
	if !final {
		if err := b.Keys.Yield(kctx, owner, key, claim, b.Creator.now()); err != nil {
			return nil, err
		}
		return results(rows), nil
	}
	if err := b.Keys.CompleteBatch(kctx, owner, key, claim, answers); err != nil {
		// The orders exist; a retry finds them after the lease.
		return nil, err
	}
	return results(rows), nil
}

// minSeq is the smaller of two seqs, 0 standing for none.
func minSeq(a, b int64) int64 {
	if a == 0 {
		return b
	}
	return min(a, b)
}

// answersOf returns the rows' answers as a completed key keeps them, and
// whether every one is final: an order created, or a refusal of the row.
func answersOf(rows []*row) ([]RowAnswer, bool) {
	out := make([]RowAnswer, len(rows))
	for i, r := range rows {
		a := RowAnswer{Index: r.index, OrderID: r.res.OrderID, Amount: r.res.Amount, Quantity: r.res.Quantity, Duty: r.res.Duty}
		if r.res.Err != nil {
			var e *stampduty.Error
			if !isRowError(r.res.Err) || !errors.As(r.res.Err, &e) {
				return nil, false
			}
			a = RowAnswer{Index: r.index, Code: e.Code, Message: e.Message, Fields: e.Fields}
		}
		out[i] = a
	}
	return out, true
}

// replay returns the results a completed key's answers stand for, for
// rows, the request replaying it (the same body: the same rows). A refused
// row whose answer was kept without its message (a record too large for
// every message: store.maxAnswerBytes) is answered with the error its body
// gets now, which for the same bytes is the same one, unless the catalogue
// changed since; then with the kept code and a message saying so.
func replay(answers []RowAnswer, rows []*row) ([]RowResult, error) {
	if len(answers) != len(rows) {
		return nil, stampduty.Internal(fmt.Errorf("batch key: %d answers kept for %d rows", len(answers), len(rows)))
	}
	out := make([]RowResult, len(rows))
	for i, a := range answers {
		switch {
		case a.Code == "":
			out[i] = RowResult{OrderID: a.OrderID, Amount: a.Amount, Quantity: a.Quantity, TotalAmount: a.Amount * a.Quantity, Duty: a.Duty}
		case a.Message != "":
			out[i] = RowResult{Err: &stampduty.Error{Code: a.Code, Message: a.Message, Fields: a.Fields}}
		case rows[i].done && stampduty.ErrorCode(rows[i].res.Err) == a.Code:
			out[i] = RowResult{Err: rows[i].res.Err}
		default:
			out[i] = RowResult{Err: stampduty.Errorf(a.Code, "This row was refused when this Idempotency-Key was first used")}
		}
	}
	return out, nil
}
