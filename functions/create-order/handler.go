package main

import (
	"context"
	"net/http"
	"time"

	"stampduty/shared/rules"
	"stampduty/shared/strapi"
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
	}
	now func() time.Time
}

// createResponse is the body of a created order.
type createResponse struct {
	Message string `json:"message"`
	OrderID string `json:"orderId"`
}

func (h *handler) routes() http.Handler {
	return strapi.Method(http.MethodPost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := h.create(r)
		if err != nil {
			strapi.WriteError(w, r, err)
			return
		}
		strapi.WriteJSON(w, http.StatusOK, createResponse{Message: "Successfully created the order!", OrderID: id})
	}))
}

// create runs the checks in the contract's order — token, body, article,
// fields, amount — then stores the order and returns its documentId.
func (h *handler) create(r *http.Request) (string, error) {
	ctx := r.Context()
	owner, err := h.auth.Owner(ctx, r.Header.Get("Authorization"))
	if err != nil {
		return "", err
	}
	strapi.SetCaller(ctx, owner)
	body, err := strapi.ReadJSONBody(r)
	if err != nil {
		return "", err
	}
	raw, err := rules.DecodeOrderRequest(body)
	if err != nil {
		return "", err
	}
	var art rules.Article
	if purpose, state, ok := raw.PurposeState(); ok {
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
	if _, err := h.orders.Create(ctx, owner, order); err != nil {
		return "", err
	}
	return order.DocumentID, nil
}
