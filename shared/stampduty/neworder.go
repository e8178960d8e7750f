package stampduty

import (
	"crypto/rand"
	"fmt"
	"time"
)

// OrderIDs are the numeric ids a new order takes.
type OrderIDs struct{ Order, Fulfillment, StampDuty int64 }

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
// made under, its final amount (from Article.Amount) and its numeric ids,
// created at now: one Pending fulfillment, quantity 1, fresh documentIds.
func NewOrder(req OrderRequest, art Article, amount int64, ids OrderIDs, now time.Time) (Order, error) {
	if ids.Order <= 0 || ids.Fulfillment <= 0 || ids.StampDuty <= 0 {
		return Order{}, Internal(fmt.Errorf("new order: ids must be positive, got %+v", ids))
	}
	orderDocID, err := NewDocumentID()
	if err != nil {
		return Order{}, fmt.Errorf("new order: %w", err)
	}
	fulfillmentDocID, err := NewDocumentID()
	if err != nil {
		return Order{}, fmt.Errorf("new order: fulfillment: %w", err)
	}
	at := FormatTime(now)
	return Order{
		ID:         ids.Order,
		DocumentID: orderDocID,
		CreatedAt:  at,
		UpdatedAt:  at,
		Fulfillments: []Fulfillment{{
			ID:                ids.Fulfillment,
			DocumentID:        fulfillmentDocID,
			Status:            StatusPending,
			UniqueDocRef:      "",
			CertificateNumber: "",
			CertificateFile:   nil,
			History:           []StatusEntry{{Status: StatusPending, At: at}},
		}},
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
			Quantity:           1,
			State:              req.State,
			ConsiderationPrice: req.ConsiderationPrice,
			MobileNumber:       req.FirstPartyMobileNumber,
			UploadedDocument:   nil,
			StatePurpose: StatePurpose{
				ID:          art.ID,
				DocumentID:  art.DocumentID,
				PurposeName: art.PurposeName,
			},
		},
	}, nil
}
