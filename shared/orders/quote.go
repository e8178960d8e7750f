package orders

import (
	"context"
	"time"

	"stampduty/shared/duty"
	"stampduty/shared/metrics"
	"stampduty/shared/stampduty"
)

// Quoter answers duty quotes: the create's article lookup and amount rules
// (the same code: lookUp and stampduty.Article.Amount), creating nothing.
type Quoter struct {
	Articles Articles
	// Now is the clock of a quote that names no instrument date (today
	// in India); time.Now when nil.
	Now func() time.Time
}

// Quote runs the create's checks on a quote query, in its order — article,
// fields, amount — and returns what an order with these values would store.
// Each quote answered (not a refused query) adds one to metrics.Quotes:
// quotes are asked without a token, so there is no test mode to leave out.
func (q *Quoter) Quote(ctx context.Context, query stampduty.QuoteQuery) (stampduty.Quote, error) {
	art, err := lookUp(ctx, q.Articles, query)
	if err != nil {
		return stampduty.Quote{}, err
	}
	req, err := query.Validate()
	if err != nil {
		return stampduty.Quote{}, err
	}
	now := time.Now
	if q.Now != nil {
		now = q.Now
	}
	quote, err := art.Quote(req, duty.TodayInIndia(now()))
	if err != nil {
		return stampduty.Quote{}, err
	}
	metrics.Add(ctx, metrics.Quotes, 1)
	return quote, nil
}

// keyed is a request that names an article: a create body, a quote query.
type keyed interface {
	PurposeState() (purpose, state string, ok bool, err error)
}

// lookUp is the article lookup of a create and a quote, before their
// fields are validated: the article the request names, the ENOTFOUND error
// when there is none or none can have its key (decided without a lookup),
// and the zero Article when it does not name one (its validation then
// says why).
func lookUp(ctx context.Context, arts Articles, r keyed) (stampduty.Article, error) {
	purpose, state, ok, err := r.PurposeState()
	if err != nil || !ok {
		return stampduty.Article{}, err
	}
	return arts.Get(ctx, purpose, state)
}
