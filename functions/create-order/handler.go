package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"stampduty/shared/accounts"
	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// creator is the create-order workflow (orders.Creator), as the handler
// calls it.
type creator interface {
	Create(ctx context.Context, owner string, body *stampduty.OrderBody, key *orders.Key) (string, error)
}

// batcher is the batch create workflow (orders.Batcher), as the handler
// calls it.
type batcher interface {
	Check(ctx context.Context, rows []orders.BatchRow) (*orders.CheckedBatch, error)
	Store(ctx context.Context, owner string, b *orders.CheckedBatch, key *orders.Key) ([]orders.RowResult, error)
	DryRun(ctx context.Context, owner string, b *orders.CheckedBatch) ([]orders.RowResult, accounts.Money, *accounts.Money, error)
}

// handler translates POST /api/live-orders and POST
// /api/live-orders/batch to the create-order and batch workflows and their
// answers back to HTTP.
type handler struct {
	auth   *auth.Authenticator
	orders creator
	batch  batcher
}

// createResponse is the body of a created order. Livemode is the order's
// mode (test-mode.md), beside the contract's message and orderId: false when
// a test token created it.
type createResponse struct {
	Message  string `json:"message"`
	OrderID  string `json:"orderId"`
	Livemode bool   `json:"livemode"`
}

// routes answers a create with the new order's documentId, and a batch
// with each row's answer.
func (h *handler) routes() http.Handler {
	return function.Routes(
		function.Path{Method: http.MethodPost, Pattern: "/api/live-orders", Serve: function.AsCaller(h.auth, func(r *http.Request, owner string) (any, error) {
			id, err := h.create(r, owner)
			if err == nil {
				function.SetOrder(r.Context(), id) // its request line names it
			}
			_, live := stampduty.CallerOf(owner)
			return createResponse{Message: "Successfully created the order!", OrderID: id, Livemode: live}, err
		})},
		function.Path{Method: http.MethodPost, Pattern: "/api/live-orders/batch", Serve: function.AsCaller(h.auth, h.createBatch)},
	)
}

// create reads the rest of the request — Idempotency-Key, then body, in
// the contract's order after the token — and hands it to the workflow,
// which returns the documentId.
func (h *handler) create(r *http.Request, owner string) (string, error) {
	ctx := r.Context()
	// API Gateway joins repeated headers with commas, and the adapter splits
	// them again: the key is all its values, joined back.
	key, err := idempotencyKey(r)
	if err != nil {
		return "", err
	}
	body, err := function.ReadJSONBody(r)
	if err != nil {
		return "", err
	}
	members, err := function.DecodeData(body)
	if err != nil {
		return "", err
	}
	if key != nil {
		sum := sha256.Sum256(body)
		key.Fingerprint = hex.EncodeToString(sum[:])
	}
	return h.orders.Create(ctx, owner, stampduty.NewOrderBody(stampjson.Fields(members)), key)
}

// idempotencyKey returns r's Idempotency-Key, checked (nil when r has
// none). API Gateway joins repeated headers with commas, and the adapter
// splits them again: the key is all its values, joined back.
func idempotencyKey(r *http.Request) (*orders.Key, error) {
	vals, hasKey := r.Header["Idempotency-Key"]
	if !hasKey {
		return nil, nil
	}
	key := &orders.Key{Value: strings.Join(vals, ",")}
	if err := orders.CheckKey(key.Value); err != nil {
		return nil, err
	}
	return key, nil
}
