package stampduty

import (
	"crypto/rand"
	"fmt"
	"slices"
	"time"

	"stampduty/shared/duty"
)

// OrderIDs are the numeric ids a new order takes: one for the order, one
// per paper (fulfillment), one for its stamp duty.
type OrderIDs struct {
	Order        int64
	Fulfillments []int64
	StampDuty    int64
}

// IDsPerOrder is how many ids an order of papers papers takes.
func IDsPerOrder(papers int64) int64 { return papers + 2 }

// NewOrderIDs returns the ids of an order of papers papers from
// IDsPerOrder(papers) consecutive ids starting at first: the order first,
// its fulfillments next, oldest first, then its stamp duty (for one paper:
// first, first+1, first+2, as orders were always numbered).
func NewOrderIDs(first, papers int64) OrderIDs {
	ids := OrderIDs{Order: first, StampDuty: first + papers + 1}
	for k := range papers {
		ids.Fulfillments = append(ids.Fulfillments, first+1+k)
	}
	return ids
}

// TimeLayout is the layout of createdAt: UTC RFC 3339 with milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in UTC as 2026-11-21T04:09:00.123Z.
func FormatTime(t time.Time) string {
	return t.UTC().Format(TimeLayout)
}

// DocumentIDLength is the length of a documentId.
const DocumentIDLength = 24

// The alphabets of a documentId: a letter first, then letters and digits.
const (
	docIDFirst = "abcdefghijklmnopqrstuvwxyz"
	docIDRest  = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// NewDocumentID returns a random documentId: 24 characters matching
// ^[a-z][0-9a-z]{23}$, each drawn uniformly from crypto/rand (bytes that
// would bias the draw are rejected).
func NewDocumentID() (string, error) {
	var (
		out [DocumentIDLength]byte
		buf [48]byte
	)
	n, pos := 0, len(buf)
	for n < DocumentIDLength {
		if pos == len(buf) {
			if _, err := rand.Read(buf[:]); err != nil {
				return "", fmt.Errorf("new document id: %w", err)
			}
			pos = 0
		}
		b := buf[pos]
		pos++
		alphabet := docIDRest
		if n == 0 {
			alphabet = docIDFirst
		}
		// Accept only bytes below the largest multiple of the alphabet size,
		// so that b % size is uniform.
		if limit := 256 - 256%len(alphabet); int(b) >= limit {
			continue
		}
		out[n] = alphabet[int(b)%len(alphabet)]
		n++
	}
	return string(out[:]), nil
}

// NewOrder builds a new order from a validated request, the article it was
// made under, its final amount (from Article.Amount, the duty of one paper)
// and its numeric ids, created at now: one Pending fulfillment per paper
// (req.Quantity, one id of ids.Fulfillments each, oldest first), fresh
// documentIds.
func NewOrder(req OrderRequest, art Article, amount int64, ids OrderIDs, now time.Time) (Order, error) {
	return NewPricedOrder(req, art, &duty.Duty{Amount: amount}, ids, now)
}

// NewPricedOrder is NewOrder of an order priced by its article's rules
// (Article.Price): it keeps d, the explained duty of one paper. A d with
// no lines (NewOrder's) stores no duty.
func NewPricedOrder(req OrderRequest, art Article, d *duty.Duty, ids OrderIDs, now time.Time) (Order, error) {
	amount := d.Amount
	if d.Lines == nil {
		d = nil
	}
	quantity := max(req.Quantity, 1) // a request built in code may leave it 0: one paper
	if ids.Order <= 0 || ids.StampDuty <= 0 || int64(len(ids.Fulfillments)) != quantity || slices.ContainsFunc(ids.Fulfillments, func(id int64) bool { return id <= 0 }) {
		return Order{}, Internal(fmt.Errorf("new order: want positive ids, one per paper of %d, got %+v", quantity, ids))
	}
	orderDocID, err := NewDocumentID()
	if err != nil {
		return Order{}, fmt.Errorf("new order: %w", err)
	}
	at := FormatTime(now)
	papers := make([]Fulfillment, quantity)
	for k := range papers {
		doc, err := NewDocumentID()
		if err != nil {
			return Order{}, fmt.Errorf("new order: fulfillment: %w", err)
		}
		papers[k] = Fulfillment{ID: ids.Fulfillments[k], DocumentID: doc, Status: StatusPending,
			History: []StatusEntry{{Status: StatusPending, At: at}}}
	}
	return Order{
		ID:           ids.Order,
		DocumentID:   orderDocID,
		CreatedAt:    at,
		UpdatedAt:    at,
		Fulfillments: papers,
		StampDuty: StampDuty{
			ID:                 ids.StampDuty,
			Amount:             amount,
			Description:        req.Description,
			FirstPartyName:     req.FirstPartyName,
			FirstPartyAddress:  req.FirstPartyAddress,
			FirstPartyPAN:      req.FirstPartyPan,
			SecondPartyName:    req.SecondPartyName,
			SecondPartyAddress: req.SecondPartyAddress,
			SecondPartyPAN:     req.SecondPartyPan,
			PaidBy:             req.PaidBy,
			PurchasedBy:        req.PurchasedBy,
			Quantity:           quantity,
			TotalAmount:        amount * quantity,
			State:              req.State,
			ConsiderationPrice: req.ConsiderationPrice,
			MobileNumber:       req.FirstPartyMobileNumber,
			UploadedDocument:   nil,
			StatePurpose: StatePurpose{
				ID:          art.ID,
				DocumentID:  art.DocumentID,
				PurposeName: art.PurposeName,
			},
			Duty: d,
		},
	}, nil
}
