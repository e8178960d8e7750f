package orders

// This file holds the batch create (papers.md "Batches"): many create
// bodies in one request, each checked and created on its own.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"stampduty/shared/stampduty"
)

// MaxBatchRows is the most rows a batch may have (papers.md).
const MaxBatchRows = 100

// batchWorkers bounds the PutItems of one batch in flight at once: enough
// that 100 rows take a few round trips' time, few enough that one batch
// does not take every connection of the instance's client.
const batchWorkers = 16

// BatchRow is one row of a batch as the edge decoded it: the create body
// (decoded exactly as a create's body is), or the error that decoding it
// met, which is then the row's answer.
type BatchRow struct {
	Body *stampduty.OrderBody
	Err  error
}

// RowResult is the answer for one row: the order created (OrderID; "" in a
// dry run) and its price, or Err, the error a create with the row's body
// would have answered.
type RowResult struct {
	OrderID                       string
	Amount, Quantity, TotalAmount int64
	Err                           error
}

// BatchOrders is the order store a batch needs: the create's, plus
// reserving a range of seqs in one call and reading what a range holds.
type BatchOrders interface {
	Store
	// ReserveN reserves n consecutive seqs for owner's next orders, taken
	// for them alone, and returns the last (the first is last-n+1).
	ReserveN(ctx context.Context, owner string, n int64) (int64, error)
	// Slots returns the documentId stored at each of owner's seqs lo…hi
	// that holds something: an order's, or "" for a voided seq.
	Slots(ctx context.Context, owner string, lo, hi int64) (map[int64]string, error)
}

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

// Batcher creates the orders of a batch: the batch create workflow. Every
// row goes through its Creator's checks and the same store as a create.
type Batcher struct {
	Creator *Creator
	Orders  BatchOrders
	Keys    BatchKeys
}

// row is one row of a batch being created: its index, its checked body,
// its order once built, and its result so far.
type row struct {
	index int
	ok    checked
	order stampduty.Order
	seq   int64
	res   RowResult
	done  bool // res is the row's answer
}

// CheckedBatch is a batch whose rows were checked and priced (Check), to
// be stored once (Store) or answered as a dry run (Results).
type CheckedBatch struct {
	rows []*row
}

// Check checks and prices every row of a batch, as a create checks its
// body (Creator.check), and writes nothing. A refused row is answered with
// the create's error; the error returned is for the whole batch: the
// catalogue could not be read, so no row is decided.
func (b *Batcher) Check(ctx context.Context, batch []BatchRow) (*CheckedBatch, error) {
	rows := make([]*row, len(batch))
	for i, br := range batch {
		r := &row{index: i}
		rows[i] = r
		if br.Err != nil {
			r.res, r.done = RowResult{Err: br.Err}, true
			continue
		}
		ok, err := b.Creator.check(ctx, br.Body)
		if err != nil {
			if !isRowError(err) {
				return nil, err
			}
			r.res, r.done = RowResult{Err: err}, true
			continue
		}
		r.ok = ok
		r.res = RowResult{Amount: ok.amount, Quantity: ok.quantity(), TotalAmount: ok.total}
	}
	return &CheckedBatch{rows: rows}, nil
}

// Results returns each row's result as checked: the refusals, and the
// price of each row that passed, without an order (a dry run's answer:
// it stores nothing, not even the Idempotency-Key, and may be repeated
// freely).
func (c *CheckedBatch) Results() []RowResult { return results(c.rows) }

// Store creates the orders of the checked rows that passed, as owner's
// (once per key, when key is not nil), and returns each row's result, in
// the batch's order. A row that fails never stops the others. The error is
// for the whole batch: a failure before any row could be stored (the id
// or seq counter, the key, the webhooks read), or a key conflict.
func (b *Batcher) Store(ctx context.Context, owner string, c *CheckedBatch, key *Key) ([]RowResult, error) {
	rows := c.rows
	if err := b.build(ctx, pending(rows)); err != nil {
		return nil, err
	}
	if key == nil {
		if err := b.store(ctx, owner, pending(rows), nil); err != nil {
			return nil, err
		}
		return results(rows), nil
	}
	return b.createOnce(ctx, owner, *key, rows)
}

// isRowError reports whether err is a refusal of a row's body (a 4xx: the
// checks' 400 and 404, the row reader's 413 and 415), which is the row's
// final answer, rather than a failure of the service that a retry may cure.
func isRowError(err error) bool {
	switch stampduty.ErrorCode(err) {
	case stampduty.EINVALID, stampduty.ENOTFOUND, stampduty.ETOOLARGE, stampduty.EUNSUPPORTED:
		return true
	}
	return false
}

// pending returns the rows not yet answered.
func pending(rows []*row) []*row {
	var out []*row
	for _, r := range rows {
		if !r.done {
			out = append(out, r)
		}
	}
	return out
}

// results returns the rows' results in order.
func results(rows []*row) []RowResult {
	out := make([]RowResult, len(rows))
	for i, r := range rows {
		out[i] = r.res
	}
	return out
}

// build builds the orders of rows, reserving their ids in as few IDs
// calls as the ids' chunks allow: consecutive rows share one reservation
// while their ids fit in one (IDsPerOrder each, at most maxIDsPerReserve
// together).
func (b *Batcher) build(ctx context.Context, rows []*row) error {
	now := b.Creator.now()
	for start := 0; start < len(rows); {
		end, n := start, int64(0)
		for end < len(rows) && n+stampduty.IDsPerOrder(rows[end].ok.quantity()) <= maxIDsPerReserve {
			n += stampduty.IDsPerOrder(rows[end].ok.quantity())
			end++
		}
		first, err := b.Creator.IDs.Reserve(ctx, n)
		if err != nil {
			return err
		}
		for _, r := range rows[start:end] {
			o, err := r.ok.order(first, now)
			if err != nil {
				return stampduty.Internal(err)
			}
			r.order = o
			first += stampduty.IDsPerOrder(r.ok.quantity())
		}
		start = end
	}
	return nil
}

// maxIDsPerReserve is the most ids one IDs.Reserve call hands out (the
// store's chunk: store.IDChunk).
const maxIDsPerReserve = 100

// store creates the orders of rows, whose orders are built: it reads once
// whether owner listens to order.created, reserves a seq for each row
// without one in one counter call (recording them in the key's plan first
// when plan is not nil), then puts each order at its seq, batchWorkers at a
// time, with its event. A row whose put fails gets that error as its
// answer; the error returned is for a failure before any put.
func (b *Batcher) store(ctx context.Context, owner string, rows []*row, plan func([]*row) error) error {
	if len(rows) == 0 {
		return nil
	}
	listens, err := listens(ctx, b.Creator.Listeners, owner, stampduty.EventOrderCreated)
	if err != nil {
		return err
	}
	fresh := slices.DeleteFunc(slices.Clone(rows), func(r *row) bool { return r.seq != 0 })
	if len(fresh) > 0 {
		last, err := b.Orders.ReserveN(ctx, owner, int64(len(fresh)))
		if err != nil {
			return err
		}
		for k, r := range fresh {
			r.seq = last - int64(len(fresh)) + 1 + int64(k)
		}
		if plan != nil {
			if err := plan(fresh); err != nil {
				return err
			}
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, batchWorkers)
	for _, r := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			b.put(ctx, owner, r, listens)
		}()
	}
	wg.Wait()
	return nil
}

// put stores r's order at its seq, as a create stores its order (its
// documentId carrying the seq, its order.created event in the same write
// when listens), and sets r's answer.
func (b *Batcher) put(ctx context.Context, owner string, r *row, listens bool) {
	o := r.order
	o.DocumentID = stampduty.WithSeq(o.DocumentID, r.seq)
	var events []stampduty.Pending
	if listens {
		p, err := stampduty.NewPending(stampduty.EventOrderCreated, o.CreatedAt, o, nil, nil)
		if err != nil {
			r.res.Err, r.done = stampduty.Internal(err), true
			return
		}
		events = append(events, p)
	}
	if err := schedule(ctx, b.Creator.Steps, b.Creator.StepEvery, owner, o); err != nil {
		r.res.Err, r.done = err, true
		return
	}
	if _, err := b.Orders.Put(ctx, owner, r.seq, o, events...); err != nil {
		r.res.Err, r.done = err, true
		return
	}
	countCreated(ctx, owner, o)
	r.res.OrderID, r.done = o.DocumentID, true
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
				r.res, r.done = RowResult{OrderID: doc, Amount: p.Amount, Quantity: p.Quantity, TotalAmount: p.Amount * p.Quantity}, true
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
		a := RowAnswer{Index: r.index, OrderID: r.res.OrderID, Amount: r.res.Amount, Quantity: r.res.Quantity}
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
			out[i] = RowResult{OrderID: a.OrderID, Amount: a.Amount, Quantity: a.Quantity, TotalAmount: a.Amount * a.Quantity}
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
