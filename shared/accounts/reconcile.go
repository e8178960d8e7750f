package accounts

// This file holds the reconciler (accounts.md: "a scheduled reconciler
// repairs it within 5 minutes, counts each repair and alarms when a sum
// disagrees"). Without transactions, each crash point of the order path
// leaves a state the reconciler can read and finish:
//
//   - a change whose writer stopped between its UpdateItem and its entry's
//     put, with no change after it: the entry is only the account's last
//     (repair: store it);
//   - a hold whose order was never stored (the create stopped between the
//     hold and the order's write, or the write and the unhold failed):
//     once the hold is older than Grace and the order's seq is void (the
//     reconciler voids it, so a late write of the order cannot land),
//     release it;
//   - a paper that reached Procured without its charge: charge it;
//   - a cancelled order still holding: release what it holds.
//
// Anything else that disagrees (the account against its entries, a missing
// seq, an id written twice, held against what the open orders hold) is a
// mismatch: reported, logged with the account and the seqs, never guessed.
//
// Each run is incremental: an account's Checkpoint says up to which seq its
// entries were checked, with the sums after it and the orders still
// holding then (Open), so a run reads only the entries since, and the
// orders of the open holds, by key.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"stampduty/shared/stampduty"
)

// Checkpoint is how far the reconciler has checked an account: entries
// 1 … Seq agree, with the sums after Seq and the orders that still held
// money then.
type Checkpoint struct {
	Seq     int64
	Balance Money
	Held    Money
	Totals  Totals
	// Open are the orders still holding after Seq, by documentId.
	Open map[string]OpenHold
}

// OpenHold is an order that still holds money: what it holds, when its
// hold was made, and the papers already charged.
type OpenHold struct {
	Held    Money
	At      time.Time
	Charged []string
}

// Books is what the reconciler needs of the ledger beyond Store: the
// accounts, each one's newest entry and entries, and its checkpoint.
type Books interface {
	Store
	// Owners calls fn with the owners of the stored accounts, a page at
	// a time, reading no entry.
	Owners(ctx context.Context, fn func(owners []string) error) error
	// Head returns owner's account and its newest entry (nil if none).
	Head(ctx context.Context, owner string) (Account, *Entry, error)
	// Entries returns owner's entries with seqs lo … hi, newest first.
	Entries(ctx context.Context, owner string, lo, hi int64) ([]Entry, error)
	// PutEntry stores e at its seq: the same item whoever writes it.
	PutEntry(ctx context.Context, owner string, e Entry) error
	// Checkpoint returns owner's checkpoint (the zero one when none).
	Checkpoint(ctx context.Context, owner string) (Checkpoint, error)
	// SaveCheckpoint stores owner's checkpoint.
	SaveCheckpoint(ctx context.Context, owner string, c Checkpoint) error
}

// Orders is what the reconciler needs of the orders: the open holds'
// orders by documentId, and voiding the seq of an order never stored.
type Orders interface {
	// ByDocuments returns owner's stored orders among docs.
	ByDocuments(ctx context.Context, owner string, docs []string) ([]stampduty.Order, error)
	// Void marks owner's seq as holding no order for good (a late write of
	// the order then fails); false when an order is stored there.
	Void(ctx context.Context, owner string, seq int64) (bool, error)
}

// Reconciler checks every account against its entries and its orders, and
// makes the writes a crash left unmade.
type Reconciler struct {
	Books  Books
	Orders Orders
	// Ledger applies the repairs (over Books).
	Ledger *Ledger
	// Grace is how old a hold, or an order's last change, must be before
	// the reconciler acts on it: longer than any function that could
	// still be finishing it runs (store.DeadAfter).
	Grace time.Duration
	// MaxEntries bounds the entries one run reads of one account; an
	// account further behind is caught up over several runs.
	MaxEntries int64
	Log        *slog.Logger
	Now        func() time.Time
}

// Report is what a run did: the accounts it checked, the repairs it made
// (LedgerRepairs) and the accounts whose sums disagree (LedgerMismatch).
type Report struct {
	Accounts   int
	Repairs    int
	Mismatches int
}

// DefaultMaxEntries is MaxEntries when it is 0: 2,000 entries, 20 pages
// of a Query, about 60 RCU.
const DefaultMaxEntries = 2000

// orderBatch is how many orders one read asks for (BatchGetItem's 100).
const orderBatch = 100

func (r *Reconciler) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func (r *Reconciler) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// Run reconciles every account. The report counts what was done even when
// it stops on an error; an account's error does not stop the others.
func (r *Reconciler) Run(ctx context.Context) (Report, error) {
	var rep Report
	var errs []error
	err := r.Books.Owners(ctx, func(owners []string) error {
		for _, owner := range owners {
			if err := ctx.Err(); err != nil {
				return err
			}
			rep.Accounts++
			if err := r.Account(ctx, owner, &rep); err != nil {
				errs = append(errs, fmt.Errorf("reconcile %s: %w", owner, err))
			}
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// mismatch is a disagreement found in an account.
type mismatch struct {
	what string
	seqs []int64
}

// Account reconciles owner's account, adding what it did to rep.
func (r *Reconciler) Account(ctx context.Context, owner string, rep *Report) error {
	acct, last, err := r.Books.Head(ctx, owner)
	if err != nil || !acct.Opened {
		return err
	}
	cp, err := r.Books.Checkpoint(ctx, owner)
	if err != nil {
		return err
	}
	limit := r.MaxEntries
	if limit <= 0 {
		limit = DefaultMaxEntries
	}
	hi := min(acct.Seq, cp.Seq+limit)
	es, err := r.Books.Entries(ctx, owner, cp.Seq+1, hi)
	if err != nil {
		return err
	}
	slices.Reverse(es) // oldest first
	if hi > cp.Seq && hi == acct.Seq && last != nil && last.Seq == hi && (len(es) == 0 || es[len(es)-1].Seq != hi) {
		// (a) the newest change's writer stopped before its entry's put.
		if err := r.Books.PutEntry(ctx, owner, *last); err != nil {
			return err
		}
		es = append(es, *last)
		r.repaired(ctx, rep, owner, "stored the newest entry", last.ID)
	}
	next, bad := replay(cp, es, hi)
	if len(bad) == 0 && hi == acct.Seq {
		bad = append(bad, agree(acct, next)...)
	}
	if len(bad) > 0 {
		if young := r.now().Sub(acct.UpdatedAt) < r.Grace; young && onlyGaps(bad) {
			return nil // an entry's writer may still be finishing: next run
		}
		r.mismatched(rep, owner, bad)
		return nil
	}
	if hi == acct.Seq {
		bad, err := r.settle(ctx, owner, next.Open, rep)
		if err != nil {
			return err
		}
		if len(bad) > 0 {
			r.mismatched(rep, owner, bad)
		}
	}
	if next.Seq == cp.Seq {
		return nil
	}
	return r.Books.SaveCheckpoint(ctx, owner, next)
}

// onlyGaps says every mismatch is a missing seq.
func onlyGaps(bad []mismatch) bool {
	return !slices.ContainsFunc(bad, func(m mismatch) bool { return m.what != gap })
}

const gap = "missing entries"

// replay checks es (the entries after cp, oldest first, meant to be every
// seq cp.Seq+1 … hi) against cp and returns the checkpoint after them and
// what disagrees: a missing seq, after-values or totals that are not the
// running sums, an id written twice, a charge or release of an order not
// holding, a release that leaves something held.
func replay(cp Checkpoint, es []Entry, hi int64) (Checkpoint, []mismatch) {
	next := cp
	next.Open = maps.Clone(cp.Open)
	if next.Open == nil {
		next.Open = map[string]OpenHold{}
	}
	var bad []mismatch
	var missing []int64
	want := cp.Seq + 1
	ids := map[string]int64{}
	for _, e := range es {
		for ; want < e.Seq; want++ {
			missing = append(missing, want)
		}
		if e.Seq < want {
			bad = append(bad, mismatch{"entry out of order", []int64{e.Seq}})
			continue
		}
		want = e.Seq + 1
		if seq, dup := ids[e.ID]; dup {
			bad = append(bad, mismatch{"id " + e.ID + " written twice", []int64{seq, e.Seq}})
		}
		ids[e.ID] = e.Seq
		if len(missing) > 0 {
			continue // the sums after a gap cannot be checked
		}
		db, dh := e.Effects()
		next.Balance, next.Held, next.Totals = next.Balance+db, next.Held+dh, next.Totals.Add(e.Type, e.Amount)
		next.Seq = e.Seq
		if e.BalanceAfter != next.Balance || e.HeldAfter != next.Held || e.Totals != next.Totals {
			bad = append(bad, mismatch{fmt.Sprintf("entry %s after %s/%s, the running sums %s/%s", e.ID, e.BalanceAfter, e.HeldAfter, next.Balance, next.Held), []int64{e.Seq}})
		}
		if m := next.open(e); m != "" {
			bad = append(bad, mismatch{m, []int64{e.Seq}})
		}
	}
	for ; want <= hi; want++ {
		missing = append(missing, want)
	}
	if len(missing) > 0 {
		bad = append(bad, mismatch{gap, missing})
	}
	return next, bad
}

// open moves c's open holds by entry e, and says what disagrees ("" when
// nothing).
func (c *Checkpoint) open(e Entry) string {
	switch e.Type {
	case TypeHold:
		if _, dup := c.Open[e.Order]; dup {
			return "a second hold of order " + e.Order
		}
		c.Open[e.Order] = OpenHold{Held: e.Amount, At: e.CreatedAt}
	case TypeCharge, TypeRelease:
		h, ok := c.Open[e.Order]
		if !ok {
			return fmt.Sprintf("%s of order %s, which holds nothing", e.Type, e.Order)
		}
		if e.Type == TypeCharge {
			if slices.Contains(h.Charged, e.Fulfillment) {
				return "a second charge of paper " + e.Fulfillment
			}
			h.Charged = append(slices.Clone(h.Charged), e.Fulfillment)
		}
		h.Held -= e.Amount
		switch {
		case h.Held < 0:
			return fmt.Sprintf("order %s holds %s after its %s", e.Order, h.Held, e.Type)
		case e.Type == TypeRelease && h.Held != 0:
			return fmt.Sprintf("order %s still holds %s after its release", e.Order, h.Held)
		case h.Held == 0:
			delete(c.Open, e.Order)
		default:
			c.Open[e.Order] = h
		}
	}
	return ""
}

// agree says what of account a disagrees with the checkpoint of its
// entries cp (cp.Seq = a.Seq): its balance, held and totals must be the
// entries' sums, and held what the open orders hold.
func agree(a Account, cp Checkpoint) []mismatch {
	var bad []mismatch
	if a.Balance != cp.Balance || a.Held != cp.Held || a.Totals != cp.Totals {
		bad = append(bad, mismatch{fmt.Sprintf("account %s/%s, its entries sum to %s/%s", a.Balance, a.Held, cp.Balance, cp.Held), []int64{a.Seq}})
	}
	var open Money
	for _, h := range cp.Open {
		open += h.Held
	}
	if open != cp.Held {
		bad = append(bad, mismatch{fmt.Sprintf("held %s, the open orders hold %s", cp.Held, open), []int64{a.Seq}})
	}
	return bad
}

// settle reads the open holds' orders and makes the writes a crash left
// unmade: the release of an order never stored, the charge of a paper
// that reached Procured, the release of a cancelled order. An order still
// holding other than what its state says is a mismatch.
func (r *Reconciler) settle(ctx context.Context, owner string, open map[string]OpenHold, rep *Report) ([]mismatch, error) {
	docs := slices.Sorted(maps.Keys(open))
	stored := map[string]stampduty.Order{}
	for chunk := range slices.Chunk(docs, orderBatch) {
		got, err := r.Orders.ByDocuments(ctx, owner, chunk)
		if err != nil {
			return nil, err
		}
		for _, o := range got {
			stored[o.DocumentID] = o
		}
	}
	var bad []mismatch
	now := r.now()
	for _, doc := range docs {
		h := open[doc]
		o, ok := stored[doc]
		if !ok {
			if now.Sub(h.At) < r.Grace {
				continue // its create may still be storing it
			}
			m, err := r.unheld(ctx, owner, doc, h, rep)
			if err != nil {
				return nil, err
			}
			if m != "" {
				bad = append(bad, mismatch{m, nil})
			}
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, o.UpdatedAt); err == nil && now.Sub(at) < r.Grace {
			continue // the function that changed it may still be charging
		}
		for _, f := range o.Fulfillments {
			if stampduty.StatusRank(f.Status) < stampduty.StatusRank(stampduty.StatusProcured) || slices.Contains(h.Charged, f.DocumentID) {
				continue
			}
			// (c) the paper moved to Procured, its charge failed.
			if err := r.Ledger.Charge(ctx, owner, o, f.DocumentID, BySystem); err != nil {
				return nil, err
			}
			h.Held -= Rupees(o.StampDuty.Amount)
			r.repaired(ctx, rep, owner, "charged a Procured paper", ChargeID(f.DocumentID))
		}
		// What the ledger must still hold for it before any release: its
		// state's held, or what its cancel releases.
		p := o.PaymentNow()
		if want := Money(p.HeldPaise + p.ReleasedPaise); h.Held != want {
			bad = append(bad, mismatch{fmt.Sprintf("order %s holds %s on the ledger, %s by its state", doc, h.Held, want), nil})
			continue
		}
		if o.CancelledAt != nil && h.Held > 0 {
			// (d) the order was cancelled, its release failed.
			if err := r.Ledger.Release(ctx, owner, o, BySystem); err != nil {
				return nil, err
			}
			r.repaired(ctx, rep, owner, "released a cancelled order", ReleaseID(doc))
		}
	}
	return bad, nil
}

// unheld releases the hold h of order doc, never stored, once its seq is
// void; "" when done or not yet due, else what disagrees.
func (r *Reconciler) unheld(ctx context.Context, owner, doc string, h OpenHold, rep *Report) (string, error) {
	seq, ok := stampduty.IDSeq(doc)
	if !ok {
		return "hold of order " + doc + ", which carries no seq and is not stored", nil
	}
	void, err := r.Orders.Void(ctx, owner, seq)
	if err != nil {
		return "", err
	}
	if !void {
		// Void already (an earlier run's release failed), or the order
		// was stored meanwhile: read it again (its writer ended Grace ago,
		// so a read sees what it stored).
		got, err := r.Orders.ByDocuments(ctx, owner, []string{doc})
		if err != nil || len(got) > 0 {
			return "", err // stored: the next run settles it
		}
	}
	// (b) the create stopped between the hold and its order.
	_, err = r.Ledger.apply(ctx, owner, Change{Entry: Entry{
		ID: ReleaseID(doc), Type: TypeRelease, Amount: h.Held, Order: doc, By: BySystem, CreatedAt: r.Ledger.now(),
	}})
	if err != nil {
		return "", err
	}
	r.repaired(ctx, rep, owner, "released the hold of an order never stored", ReleaseID(doc))
	return "", nil
}

func (r *Reconciler) repaired(ctx context.Context, rep *Report, owner, what, id string) {
	rep.Repairs++
	r.log().InfoContext(ctx, "ledger repaired", "owner", owner, "repair", what, "entry", id)
}

func (r *Reconciler) mismatched(rep *Report, owner string, bad []mismatch) {
	rep.Mismatches++
	for _, m := range bad {
		r.log().Error("ledger mismatch", "owner", owner, "mismatch", m.what, "seqs", m.seqs)
	}
}
