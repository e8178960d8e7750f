// Package stampduty is the domain of the stamp-duty service: its types (articles,
// orders, fulfillments), the validation of order requests, the amount rules and
// the states of India. It validates requests as the edge decoded them (Field,
// Value) and reads no JSON token kinds. It links only the standard library
// and imports no AWS code; the DynamoDB and HTTP adapters depend on it, never
// the other way round. Fulfillment,
// StatusEntry and File, which an order item keeps as they are, carry the
// short attribute names the store writes them under as dynamodbav tags
// (strings only: no import); the store's own item types map the rest.
package stampduty

import "stampduty/shared/duty"

// Article is the rule set for one purpose in one state: it decides the
// stamp-duty amount of an order. Its JSON form is the Strapi article.
type Article struct {
	ID          int64  `json:"id"`
	DocumentID  string `json:"documentId"`
	PurposeName string `json:"purpose_name"`
	State       string `json:"state"`
	Min         int64  `json:"min"`
	Max         int64  `json:"max"`
	// Fixed is the fixed amount, nil when there is none.
	Fixed *int64 `json:"fixed"`
	// FollowsConsideration says the amount is Factor × consideration price.
	FollowsConsideration bool `json:"toFollowConsiderationPrice"`
	// Factor is applied to the consideration price, nil when there is none.
	Factor *Decimal `json:"amountPercentConsideration"`
	// Rules is the article's duty_rules (duty-rules.md): its dated rule
	// versions. An article read from the store or a catalogue file always
	// has them: a legacy article has the one version §9 migrates it to
	// (RulesDerived when it is stored without them). For an article whose
	// rules are not legacy, the five fields above are a projection of
	// them (Projected).
	Rules duty.Rules `json:"duty_rules"`
	// RulesDerived says Rules were migrated when the article was read,
	// not stored: `stampctl articles migrate-rules` stores them.
	RulesDerived bool `json:"-"`
	// CatalogueVersion is the article's version in the catalogue
	// (CatalogueEntry.Version), which a quote names beside its rule.
	CatalogueVersion int64 `json:"-"`
}

// The fulfillment statuses.
const (
	StatusPending  = "Pending"
	StatusCreated  = "Created"
	StatusProcured = "Procured"
	StatusPrinted  = "Printed"
)

// The two payers an order may name.
const (
	FirstParty  = "First Party"
	SecondParty = "Second Party"
)

// Order is a stamp-duty order as the order list returns it.
type Order struct {
	ID         int64  `json:"id"`
	DocumentID string `json:"documentId"`
	// CreatedAt is UTC RFC 3339 with milliseconds, e.g. 2026-11-21T04:09:00.123Z.
	CreatedAt string `json:"createdAt"`
	// UpdatedAt is the time of the order's last change (its fulfillments,
	// its document), in CreatedAt's format; CreatedAt until then.
	UpdatedAt    string        `json:"updatedAt"`
	Fulfillments []Fulfillment `json:"live_order_fulfillments"`
	StampDuty    StampDuty     `json:"stamp_duty"`
	// CancelledAt is when the order was cancelled, in CreatedAt's format;
	// nil (null) while it is not (papers.md, Cancellation).
	CancelledAt *string `json:"cancelledAt"`
	// Cancellation is who cancelled the order and why; nil (null) while it
	// is not cancelled.
	Cancellation *Cancellation `json:"cancellation"`
	// Livemode is false for an order of a caller's test principal, true for
	// a live one (test-mode.md). It is derived from the owner key the
	// order is stored under, never stored itself: the store sets it on every
	// order it reads, so orders stored before it existed (all live) read true.
	Livemode bool `json:"livemode"`
	// Held says the order's total_amount was held on its caller's account
	// when it was created (accounts.md); false for an order made before
	// accounts existed. Its JSON form is "payment" (see PaymentNow).
	Held bool `json:"-"`
}

// OpsOrder is an order as operators see it: the Order, with the operators'
// identities in its status histories, and the caller who created it.
type OpsOrder struct {
	Order
	// Owner is the owner key the order is stored under: the caller's name,
	// or its test principal (stampduty.TestOwnerOf). Never shown: operators see
	// Caller, and Livemode tells the mode.
	Owner string `json:"-"`
	// Caller is the name of the caller who created the order, the same for
	// its test and live orders (stampduty.CallerOf of Owner); the store sets it.
	Caller string `json:"owner"`
}

// Fulfillment is one fulfillment record of an order.
type Fulfillment struct {
	ID                int64  `json:"id" dynamodbav:"id"`
	DocumentID        string `json:"documentId" dynamodbav:"doc"`
	Status            string `json:"order_status" dynamodbav:"st"`
	UniqueDocRef      string `json:"unique_doc_ref" dynamodbav:"ref"`
	CertificateNumber string `json:"certificate_number" dynamodbav:"cn"`
	// CertificateFile is nil until a certificate is attached.
	CertificateFile *File `json:"certificate_file" dynamodbav:"cf,omitempty"`
	// History lists the statuses the fulfillment entered, oldest first,
	// starting with Pending at the order's createdAt.
	History []StatusEntry `json:"status_history" dynamodbav:"h,omitempty"`
}

// File is a stored file (a caller's document, a certificate), as orders
// show it. URL is a pre-signed download address made afresh at each read,
// never stored; Key, where the bytes are stored, is never shown.
type File struct {
	ID         int64  `json:"id" dynamodbav:"id"`
	DocumentID string `json:"documentId" dynamodbav:"doc"`
	Name       string `json:"name" dynamodbav:"name"`
	Mime       string `json:"mime" dynamodbav:"mime"`
	Size       int64  `json:"size" dynamodbav:"size"`
	SHA256     string `json:"sha256" dynamodbav:"sha"`
	URL        string `json:"url" dynamodbav:"-"`
	CreatedAt  string `json:"createdAt" dynamodbav:"at"`
	Key        string `json:"-" dynamodbav:"key"`
}

// StampDuty is the stamp-duty detail of an order.
type StampDuty struct {
	ID                 int64  `json:"id"`
	Amount             int64  `json:"amount"`
	Description        string `json:"description"`
	FirstPartyName     string `json:"first_party_name"`
	FirstPartyAddress  string `json:"first_party_address"`
	FirstPartyPAN      string `json:"first_party_PAN"`
	SecondPartyName    string `json:"second_party_name"`
	SecondPartyAddress string `json:"second_party_address"`
	SecondPartyPAN     string `json:"second_party_PAN"`
	PaidBy             string `json:"paid_by"`
	PurchasedBy        string `json:"purchased_by"`
	// Quantity is the number of papers: the order has one fulfillment each.
	Quantity int64 `json:"quantity"`
	// TotalAmount is Amount × Quantity: the duty of every paper.
	TotalAmount        int64  `json:"total_amount"`
	State              string `json:"state"`
	ConsiderationPrice int64  `json:"consideration_price"`
	MobileNumber       string `json:"mobile_number"`
	// UploadedDocument is the caller's document, nil until one is uploaded.
	UploadedDocument *File        `json:"uploaded_document"`
	StatePurpose     StatePurpose `json:"state_purpose"`
	// Duty is the explained duty of one paper as the order was priced
	// (duty-rules.md §8), never rewritten; nil (null) for an order made
	// before duty rules.
	Duty *duty.Duty `json:"duty"`
	// RuleSnapshot is the rule version Duty names, as it was: the one-order
	// read fills it in (duty_rule_snapshot); lists leave it out.
	RuleSnapshot *RuleSnapshot `json:"duty_rule_snapshot,omitempty"`
}

// RuleSnapshot is the rule version an order was priced with, as JSON (its
// canonical form hashes to the order's duty.rule.hash); Null for an order
// made before duty rules.
type RuleSnapshot struct{ JSON []byte }

// MarshalJSON writes the version, or null.
func (s RuleSnapshot) MarshalJSON() ([]byte, error) {
	if s.JSON == nil {
		return []byte("null"), nil
	}
	return s.JSON, nil
}

// UnmarshalJSON keeps the version as it is written (a client's read).
func (s *RuleSnapshot) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		s.JSON = nil
		return nil
	}
	s.JSON = append([]byte(nil), b...)
	return nil
}

// StatePurpose is the article an order was made under, as the order keeps it.
type StatePurpose struct {
	ID          int64  `json:"id"`
	DocumentID  string `json:"documentId"`
	PurposeName string `json:"purpose_name"`
}
