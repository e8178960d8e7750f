package main

import (
	"context"
	"net/http"
	"net/url"

	"stampduty/shared/duty"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// quoter is the quote workflow (orders.Quoter), as the handler calls it.
type quoter interface {
	Quote(ctx context.Context, q stampduty.QuoteQuery) (stampduty.Quote, error)
}

// handler translates GET /api/stamp-duty-quotes to the quote workflow and
// its answer back to HTTP.
type handler struct {
	quotes quoter
}

// quoteResponse is the body of a quote: {"data": <Quote>, "meta": {}}.
type quoteResponse struct {
	Data stampduty.Quote `json:"data"`
	Meta struct{}        `json:"meta"`
}

// routes answers a quote from the query's purpose, state, amount,
// considerationPrice, quantity, instrumentDate and the other inputs of
// duty rules (duty-rules.md §3, §8); other parameters are ignored, as
// Strapi ignores them.
func (h *handler) routes() http.Handler {
	return function.Route(http.MethodGet, func(r *http.Request) (quoteResponse, error) {
		vals, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return quoteResponse{}, stampduty.Invalid([]stampduty.FieldError{{Message: "The query string is not valid"}})
		}
		inputs := map[string][]string{}
		for _, name := range duty.InputNames() {
			if v, ok := vals[name]; ok {
				inputs[name] = v
			}
		}
		q, err := h.quotes.Quote(r.Context(), stampduty.QuoteQuery{
			Purpose:            vals["purpose"],
			State:              vals["state"],
			Amount:             vals["amount"],
			ConsiderationPrice: vals["considerationPrice"],
			Quantity:           vals["quantity"],
			InstrumentDate:     vals["instrumentDate"],
			Inputs:             inputs,
		})
		return quoteResponse{Data: q}, err
	})
}
