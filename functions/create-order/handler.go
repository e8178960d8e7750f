package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"stampduty/shared/rules"
	"stampduty/shared/store"
	"stampduty/shared/strapi"
)

// Idempotency-Key settings.
const (
	// keyTTL is how long a key is remembered.
	keyTTL = 24 * time.Hour
	// keyLease protects a request creating a key's order from being taken
	// over; it outlasts the function's 10 s timeout, so the holder is gone
	// when it runs out.
	keyLease = 15 * time.Second
	// keyWait is how long a request waits for another one holding its key
	// before answering 409, and keyPoll how often it looks.
	keyWait = 2 * time.Second
	keyPoll = 100 * time.Millisecond
)

// handler creates orders. Its dependencies are the small interfaces below;
// main wires them to the DynamoDB store.
type handler struct {
	auth interface {
		Owner(context.Context, string) (string, error)
	}
	articles interface {
		Get(ctx context.Context, purpose, state string) (rules.Article, error)
	}
	ids interface {
		Reserve(ctx context.Context, n int64) (int64, error)
	}
	orders interface {
		Create(ctx context.Context, owner string, o rules.Order) (int64, error)
		Find(ctx context.Context, owner, doc string, since time.Time) (bool, error)
	}
	keys interface {
		Claim(ctx context.Context, owner, key, fp, orderID string, now time.Time, lease, ttl time.Duration) (store.KeyRecord, bool, error)
		Get(ctx context.Context, owner, key string, now time.Time) (store.KeyRecord, bool, error)
		Complete(ctx context.Context, owner, key string) error
		Release(ctx context.Context, owner, key, orderID string) error
		TakeOver(ctx context.Context, owner, key string, rec store.KeyRecord, now time.Time, lease time.Duration) (bool, error)
	}
	now func() time.Time
}

// createResponse is the body of a created order.
type createResponse struct {
	Message string `json:"message"`
	OrderID string `json:"orderId"`
}

func (h *handler) routes() http.Handler {
	return strapi.Method(http.MethodPost, strapi.Budget(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := h.create(r)
		if err != nil {
			if rules.ErrorCode(err) == rules.ECONFLICT {
				w.Header().Set("Retry-After", "1")
			}
			strapi.WriteError(w, r, err)
			return
		}
		strapi.WriteJSON(w, http.StatusOK, createResponse{Message: "Successfully created the order!", OrderID: id})
	})))
}

// create runs the checks in the contract's order — token, body, article,
// fields, amount — then stores the order (once per Idempotency-Key) and
// returns its documentId.
func (h *handler) create(r *http.Request) (string, error) {
	ctx := r.Context()
	owner, err := h.auth.Owner(ctx, r.Header.Get("Authorization"))
	if err != nil {
		return "", err
	}
	strapi.SetCaller(ctx, owner)
	// API Gateway joins repeated headers with commas, and the adapter splits
	// them again: the key is all its values, joined back.
	vals, hasKey := r.Header["Idempotency-Key"]
	key := strings.Join(vals, ",")
	if hasKey && !validKey(key) {
		msg := "Idempotency-Key must have 1 to 255 printable ASCII characters"
		return "", &rules.Error{Code: rules.EINVALID, Message: msg, Fields: []rules.FieldError{{Path: "Idempotency-Key", Message: msg}}}
	}
	body, err := strapi.ReadJSONBody(r)
	if err != nil {
		return "", err
	}
	raw, err := rules.DecodeOrderRequest(body)
	if err != nil {
		return "", err
	}
	var art rules.Article
	purpose, state, ok, err := raw.PurposeState()
	if err != nil {
		return "", err
	}
	if ok {
		if art, err = h.articles.Get(ctx, purpose, state); err != nil {
			return "", err
		}
	}
	// When purpose or state is not a string, Validate reports it with the rest.
	req, err := raw.Validate()
	if err != nil {
		return "", err
	}
	amount, err := art.Amount(req.Amount, req.ConsiderationPrice)
	if err != nil {
		return "", err
	}
	first, err := h.ids.Reserve(ctx, 3)
	if err != nil {
		return "", err
	}
	order, err := rules.NewOrder(req, art, amount, rules.OrderIDs{Order: first, Fulfillment: first + 1, StampDuty: first + 2}, h.now())
	if err != nil {
		return "", err
	}
	if !hasKey {
		if _, err := h.orders.Create(ctx, owner, order); err != nil {
			return "", err
		}
		return order.DocumentID, nil
	}
	sum := sha256.Sum256(body)
	return h.createOnce(ctx, owner, key, hex.EncodeToString(sum[:]), order)
}

// validKey reports whether k is 1 to 255 printable ASCII characters.
func validKey(k string) bool {
	if len(k) == 0 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// createOnce creates order under the caller's Idempotency-Key: the first
// request with the key claims it and creates the order; a later one with
// the same body gets the same orderId and creates nothing; one with another
// body gets 409. A request that finds the key held by another waits up to
// keyWait for it, then answers 409; a claim whose holder vanished (its lease
// ran out) is taken over, after checking whether its order was stored.
func (h *handler) createOnce(ctx context.Context, owner, key, fp string, order rules.Order) (string, error) {
	deadline := h.now().Add(keyWait)
	rec, claimed, err := h.keys.Claim(ctx, owner, key, fp, order.DocumentID, h.now(), keyLease, keyTTL)
	for {
		if err != nil {
			return "", err
		}
		if claimed {
			return h.createClaimed(ctx, owner, key, order)
		}
		if rec.Fingerprint != fp {
			return "", rules.Errorf(rules.ECONFLICT, "This Idempotency-Key was already used with a different request")
		}
		if rec.State == store.KeyDone {
			return rec.OrderID, nil
		}
		now := h.now()
		if !now.Before(rec.Lease) {
			return h.takeOver(ctx, owner, key, rec, order)
		}
		if !now.Before(deadline) {
			return "", rules.Errorf(rules.ECONFLICT, "A request with this Idempotency-Key is in progress; retry in a moment")
		}
		// Wait for the holder, then read the record (a read, not another
		// billed write): done (replay), still pending, or gone (claim it).
		select {
		case <-time.After(keyPoll):
		case <-ctx.Done():
			return "", &rules.Error{Code: rules.EUNAVAILABLE, Message: "Service Unavailable", Err: ctx.Err()}
		}
		var live bool
		if rec, live, err = h.keys.Get(ctx, owner, key, h.now()); err == nil && !live {
			rec, claimed, err = h.keys.Claim(ctx, owner, key, fp, order.DocumentID, h.now(), keyLease, keyTTL)
		}
	}
}

// createClaimed stores the order of a key this request holds and marks the
// key done. If the order was certainly not stored the claim is released, so
// a retry can go ahead at once; if it may have been, the claim stays for a
// retry to verify after its lease.
func (h *handler) createClaimed(ctx context.Context, owner, key string, order rules.Order) (string, error) {
	if _, err := h.orders.Create(ctx, owner, order); err != nil {
		if !errors.Is(err, store.ErrOutcomeUnknown) {
			// A fresh context: the request's may be what ran out.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			h.keys.Release(rctx, owner, key, order.DocumentID)
			cancel()
		}
		return "", err
	}
	if err := h.keys.Complete(ctx, owner, key); err != nil {
		// The order exists; a replay will find it after the lease.
		return "", err
	}
	return order.DocumentID, nil
}

// takeOver finishes the work of a vanished holder of the key: if its order
// (rec.OrderID) was stored, the key is completed with it; otherwise the
// order is created now under that documentId.
func (h *handler) takeOver(ctx context.Context, owner, key string, rec store.KeyRecord, order rules.Order) (string, error) {
	ok, err := h.keys.TakeOver(ctx, owner, key, rec, h.now(), keyLease)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", rules.Errorf(rules.ECONFLICT, "A request with this Idempotency-Key is in progress; retry in a moment")
	}
	// The holder built its order just before claiming: it is among the orders since then.
	found, err := h.orders.Find(ctx, owner, rec.OrderID, rec.Claimed.Add(-time.Minute))
	if err != nil {
		return "", err
	}
	if !found {
		order.DocumentID = rec.OrderID
		if _, err := h.orders.Create(ctx, owner, order); err != nil {
			return "", err
		}
	}
	if err := h.keys.Complete(ctx, owner, key); err != nil {
		return "", err
	}
	return rec.OrderID, nil
}
