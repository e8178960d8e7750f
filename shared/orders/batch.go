package orders

// This file holds the batch create (papers.md "Batches"): many create
// bodies in one request, each checked and created on its own (under an
// Idempotency-Key: batch_keys.go).

import (
	"context"
	"slices"
	"sync"

	"stampduty/shared/accounts"
	"stampduty/shared/duty"
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
	// Duty is the explained duty of one paper (duty-rules.md §15: on
	// every batch row's answer).
	Duty *duty.Duty
	Err  error
	// Fits is a dry run's answer of whether the row's total fits what the
	// account has available, the rows before it held (accounts.md); nil
	// for a row refused by its checks.
	Fits *bool
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
		r.res = RowResult{Amount: ok.amount, Quantity: ok.quantity(), TotalAmount: ok.total, Duty: ok.duty}
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
	b.hold(ctx, owner, rows)
	var wg sync.WaitGroup
	sem := make(chan struct{}, batchWorkers)
	for _, r := range pending(rows) {
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
		b.Creator.unhold(ctx, owner, o, err)
		r.res.Err, r.done = err, true
		return
	}
	countCreated(ctx, owner, o)
	r.res.OrderID, r.done = o.DocumentID, true
}

// hold holds each row's total on owner's account, one row after the other
// in the batch's order (accounts.md: rows are held in their order), before
// any row is put: a row that does not fit is answered with its own 402 and
// its seq given up, and the others go on. Each hold is the create's
// (Creator.hold): two calls, durable before the next.
func (b *Batcher) hold(ctx context.Context, owner string, rows []*row) {
	for _, r := range rows {
		if r.done {
			continue
		}
		o := r.order
		o.DocumentID = stampduty.WithSeq(o.DocumentID, r.seq)
		if err := b.Creator.hold(ctx, owner, r.seq, &o); err != nil {
			r.res.Err, r.done = err, true
			continue
		}
		r.order.Held = o.Held
	}
}

// DryRun answers a checked batch as a real one would be answered, storing
// nothing: each row's checks, and whether its total fits what owner's
// account has available with the rows before it held (a row that would not
// fit gets the 402 a real batch would give it); needed is the sum of the
// totals of the rows that pass their checks, available what the account
// has now (nil when unlimited). One read of the account.
func (b *Batcher) DryRun(ctx context.Context, owner string, c *CheckedBatch) (res []RowResult, needed accounts.Money, available *accounts.Money, err error) {
	res = c.Results()
	if b.Creator.Payments == nil {
		return res, 0, nil, nil
	}
	a, err := b.Creator.Payments.Account(ctx, owner)
	if err != nil {
		return nil, 0, nil, err
	}
	available = a.Available()
	left := a.Available()
	for i := range res {
		if res[i].Err != nil {
			continue
		}
		total := accounts.Rupees(res[i].TotalAmount)
		needed += total
		fits := left == nil || *left >= total
		res[i].Fits = &fits
		switch {
		case left == nil:
		case fits:
			*left -= total
		default:
			res[i].Err = accounts.PaymentRequired(total, withAvailable(a, *left))
		}
	}
	return res, needed, available, nil
}

// withAvailable returns a with its balance set so that it has left available.
func withAvailable(a accounts.Account, left accounts.Money) accounts.Account {
	a.Balance, a.Held = left-*a.Limit, 0
	return a
}
