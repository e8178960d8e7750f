package orders

import (
	"context"
	"errors"
	"time"

	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
)

// Idempotency-Key settings.
const (
	// KeyTTL is how long a key is remembered.
	KeyTTL = 24 * time.Hour
	// KeyLease protects a request creating a key's order from being taken
	// over; it outlasts the functions' 10 s timeout, so the holder is gone
	// when it runs out.
	KeyLease = 15 * time.Second
	// KeyWait is how long a request waits for another one holding its key
	// before answering 409, and keyPoll how often it looks.
	KeyWait = 2 * time.Second
	keyPoll = 100 * time.Millisecond
)

// Creator creates orders: the create-order workflow.
type Creator struct {
	Articles Articles
	IDs      IDs
	Orders   Store
	Keys     Keys
	// Listeners decides whether the order.created event is recorded; nil
	// records it always.
	Listeners Listeners
	// Steps keeps the steps of test orders (test-mode.md): a test order's
	// first is scheduled StepEvery after its creation, before the order is
	// stored. Nil: test orders do not step.
	Steps     Steps
	StepEvery time.Duration
	// Payments holds each order's total on its caller's account before
	// the order is stored (accounts.md); nil holds nothing (the order's
	// payment is then null, as for orders made before accounts).
	Payments Payments
	// Now is the clock; time.Now unless a test sets another.
	Now func() time.Time
}

// Key is the Idempotency-Key a create was sent with.
type Key struct {
	// Value is the key as the caller sent it (checked with CheckKey).
	Value string
	// Fingerprint identifies the request body: the same key with another
	// fingerprint is a conflict.
	Fingerprint string
}

// CheckKey checks an Idempotency-Key: 1 to 255 printable ASCII characters.
func CheckKey(k string) error {
	ok := len(k) > 0 && len(k) <= 255
	for i := 0; ok && i < len(k); i++ {
		ok = k[i] >= 0x20 && k[i] <= 0x7e
	}
	if !ok {
		msg := "Idempotency-Key must have 1 to 255 printable ASCII characters"
		return &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "Idempotency-Key", Message: msg}}}
	}
	return nil
}

// Create runs the contract's checks on a decoded create-order body, in its
// order — article, fields, amount — then stores the order as owner's (once
// per key, when key is not nil) and returns its documentId.
func (c *Creator) Create(ctx context.Context, owner string, body *stampduty.OrderBody, key *Key) (string, error) {
	ok, err := c.check(ctx, body)
	if err != nil {
		return "", err
	}
	first, err := c.IDs.Reserve(ctx, stampduty.IDsPerOrder(ok.req.Quantity))
	if err != nil {
		return "", err
	}
	order, err := ok.order(first, c.now())
	if err != nil {
		return "", err
	}
	if key == nil {
		return c.store(ctx, owner, order)
	}
	return c.createOnce(ctx, owner, *key, order)
}

// checked is a create-order body that passed every check, priced.
type checked struct {
	req    stampduty.OrderRequest
	art    stampduty.Article
	duty   *duty.Duty // of one paper, explained
	amount int64      // of one paper
	total  int64      // amount × quantity
}

// check runs the contract's checks on a decoded create-order body, in its
// order — article, fields, amount, total — and prices it: everything a
// create decides before it stores anything. A batch's rows go through it
// one by one, so that each row is refused exactly as a create with its body
// would be.
func (c *Creator) check(ctx context.Context, body *stampduty.OrderBody) (checked, error) {
	art, err := lookUp(ctx, c.Articles, body)
	if err != nil {
		return checked{}, err
	}
	// When purpose or state is not a string, Validate reports it with the rest.
	req, err := body.Validate(art.Schedule())
	if err != nil {
		return checked{}, err
	}
	d, err := art.Price(req, duty.TodayInIndia(c.now()))
	if err != nil {
		return checked{}, err
	}
	total, err := stampduty.TotalAmount(d.Amount, req.Quantity)
	if err != nil {
		return checked{}, err
	}
	return checked{req: req, art: art, duty: d, amount: d.Amount, total: total}, nil
}

// quantity is the checked body's number of papers (1 when it left it out).
func (ok checked) quantity() int64 { return max(ok.req.Quantity, 1) }

// order builds the checked body's order from the IDsPerOrder ids starting
// at first, with a new documentId (not yet carrying a seq).
func (ok checked) order(first int64, now time.Time) (stampduty.Order, error) {
	return stampduty.NewPricedOrder(ok.req, ok.art, ok.duty, stampduty.NewOrderIDs(first, ok.req.Quantity), now)
}

// store stores order as owner's, with its order.created event when owner
// listens to it, in one write, and returns its documentId: order's with the
// seq it is stored at put in (stampduty.WithSeq), so that a lookup by id is
// a read by key. The seq is reserved first and the event made after, so its
// snapshot carries that documentId; its id is made before the write, so
// every retry of the write carries the same one.
func (c *Creator) store(ctx context.Context, owner string, order stampduty.Order) (string, error) {
	listens, err := listens(ctx, c.Listeners, owner, stampduty.EventOrderCreated)
	if err != nil {
		return "", err
	}
	seq, err := c.Orders.Reserve(ctx, owner)
	if err != nil {
		return "", err
	}
	order.DocumentID = stampduty.WithSeq(order.DocumentID, seq)
	if err := c.hold(ctx, owner, seq, &order); err != nil {
		return "", err
	}
	var events []stampduty.Pending
	if listens {
		// Should this fail (crypto/rand), the seq stays empty until a
		// reader voids it (store.DeadAfter).
		p, err := stampduty.NewPending(stampduty.EventOrderCreated, order.CreatedAt, order, nil, nil)
		if err != nil {
			return "", stampduty.Internal(err)
		}
		events = append(events, p)
	}
	// The step first: an order stored without it would never step, while a
	// step whose order was not stored finds nothing and ends.
	if err := schedule(ctx, c.Steps, c.StepEvery, owner, order); err != nil {
		c.unhold(ctx, owner, order, err)
		return "", err
	}
	if _, err := c.Orders.Put(ctx, owner, seq, order, events...); err != nil {
		c.unhold(ctx, owner, order, err)
		return "", err
	}
	countCreated(ctx, owner, order)
	return order.DocumentID, nil
}

// hold holds order's total on owner's account, once its documentId is
// final (its seq, reserved, is in it) and before anything is stored: an
// order that does not fit is refused (EPAYMENT) and its seq given up, so
// nothing of it is stored. A create whose hold is made and whose order is
// then not stored releases it (unhold); one that stops in between leaves a
// hold the reconciler releases once the seq is void (see accounts.md and
// the ledger's table design).
func (c *Creator) hold(ctx context.Context, owner string, seq int64, order *stampduty.Order) error {
	if c.Payments == nil {
		return nil
	}
	order.Held = true
	if _, err := c.Payments.Hold(ctx, owner, *order); err != nil {
		vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		c.Orders.Void(vctx, owner, seq)
		return err
	}
	return nil
}

// unhold releases the hold of an order whose write failed, unless the
// write may have landed (ErrOutcomeUnknown): then the reconciler decides,
// from what is stored.
func (c *Creator) unhold(ctx context.Context, owner string, order stampduty.Order, putErr error) {
	if c.Payments == nil || !order.Held || errors.Is(putErr, ErrOutcomeUnknown) {
		return
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	c.Payments.Unhold(uctx, owner, order)
}

func (c *Creator) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// errKeyBusy is the answer while another request holds the key.
func errKeyBusy() error {
	return stampduty.Errorf(stampduty.ECONFLICT, "A request with this Idempotency-Key is in progress; retry in a moment")
}

// createOnce creates order under the caller's key: the first request with
// the key claims it and creates the order; a later one with the same body
// gets the same orderId and creates nothing; one with another body gets 409.
// A request that finds the key held by another waits up to KeyWait for it,
// then answers 409; a claim whose holder vanished (its lease ran out) is
// taken over, after checking whether its order was stored.
func (c *Creator) createOnce(ctx context.Context, owner string, key Key, order stampduty.Order) (string, error) {
	deadline := c.now().Add(KeyWait)
	rec, claimed, err := c.Keys.Claim(ctx, owner, key.Value, key.Fingerprint, order.DocumentID, c.now(), KeyLease, KeyTTL)
	for {
		if err != nil {
			return "", err
		}
		if claimed {
			return c.createClaimed(ctx, owner, key.Value, order)
		}
		if rec.Fingerprint != key.Fingerprint {
			return "", stampduty.Errorf(stampduty.ECONFLICT, "This Idempotency-Key was already used with a different request")
		}
		if rec.State == KeyDone {
			return rec.OrderID, nil
		}
		now := c.now()
		if !now.Before(rec.Lease) {
			return c.takeOver(ctx, owner, key.Value, rec, order)
		}
		if !now.Before(deadline) {
			return "", errKeyBusy()
		}
		// Wait for the holder, then read the record (a read, not another
		// billed write): done (replay), still pending, or gone (claim it).
		select {
		case <-time.After(keyPoll):
		case <-ctx.Done():
			return "", stampduty.Unavailable(ctx.Err())
		}
		var live bool
		if rec, live, err = c.Keys.Get(ctx, owner, key.Value, c.now()); err == nil && !live {
			rec, claimed, err = c.Keys.Claim(ctx, owner, key.Value, key.Fingerprint, order.DocumentID, c.now(), KeyLease, KeyTTL)
		}
	}
}

// createClaimed stores the order of a key this request holds and marks the
// key done. If the order was certainly not stored the claim is released, so
// a retry can go ahead at once; if it may have been, the claim stays for a
// retry to verify after its lease.
func (c *Creator) createClaimed(ctx context.Context, owner, key string, order stampduty.Order) (string, error) {
	doc, err := c.store(ctx, owner, order)
	if err != nil {
		if !errors.Is(err, ErrOutcomeUnknown) {
			// A fresh context: the request's may be what ran out.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			c.Keys.Release(rctx, owner, key, order.DocumentID)
			cancel()
		}
		return "", err
	}
	if err := c.Keys.Complete(ctx, owner, key, doc); err != nil {
		// The order exists; a replay will find it after the lease.
		return "", err
	}
	return doc, nil
}

// takeOver finishes the work of a vanished holder of the key: if its order
// (rec.OrderID) was stored, the key is completed with it; otherwise the
// order is created now under that documentId.
func (c *Creator) takeOver(ctx context.Context, owner, key string, rec KeyRecord, order stampduty.Order) (string, error) {
	ok, err := c.Keys.TakeOver(ctx, owner, key, rec, c.now(), KeyLease)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errKeyBusy()
	}
	// The holder built its order just before claiming: it is among the orders since then.
	doc, found, err := c.Orders.Find(ctx, owner, rec.OrderID, rec.Claimed.Add(-time.Minute))
	if err != nil {
		return "", err
	}
	if !found {
		order.DocumentID = rec.OrderID
		if doc, err = c.store(ctx, owner, order); err != nil {
			return "", err
		}
	}
	if err := c.Keys.Complete(ctx, owner, key, doc); err != nil {
		return "", err
	}
	return doc, nil
}
