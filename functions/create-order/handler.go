package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

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

// handler translates POST /api/live-orders to the create-order workflow
// and its answer back to HTTP.
type handler struct {
	auth   *auth.Authenticator
	orders creator
}

// createResponse is the body of a created order.
type createResponse struct {
	Message string `json:"message"`
	OrderID string `json:"orderId"`
}

// routes answers a create with the new order's documentId.
func (h *handler) routes() http.Handler {
	return function.Route(http.MethodPost, function.AsCaller(h.auth, func(r *http.Request, owner string) (createResponse, error) {
		id, err := h.create(r, owner)
		return createResponse{Message: "Successfully created the order!", OrderID: id}, err
	}))
}

// create reads the rest of the request — Idempotency-Key, then body, in
// the contract's order after the token — and hands it to the workflow,
// which returns the documentId.
func (h *handler) create(r *http.Request, owner string) (string, error) {
	ctx := r.Context()
	// API Gateway joins repeated headers with commas, and the adapter splits
	// them again: the key is all its values, joined back.
	vals, hasKey := r.Header["Idempotency-Key"]
	var key *orders.Key
	if hasKey {
		key = &orders.Key{Value: strings.Join(vals, ",")}
		if err := orders.CheckKey(key.Value); err != nil {
			return "", err
		}
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
