package stampduty

import (
	"fmt"
	"slices"
	"strings"
)

// The event types (webhooks.md, Events; order.cancelled is papers.md's
// fifth, registered and delivered like the other four).
const (
	EventOrderCreated             = "order.created"              // an order is stored
	EventOrderStatusChanged       = "order.status_changed"       // a fulfillment moves to another status
	EventOrderDocumentUploaded    = "order.document_uploaded"    // the caller's document is stored
	EventOrderCertificateAttached = "order.certificate_attached" // a certificate file is attached
	EventOrderCancelled           = "order.cancelled"            // the order is cancelled (papers.md, Cancellation)
)

// eventTypes lists every event type, in the order messages name them.
var eventTypes = [...]string{EventOrderCreated, EventOrderStatusChanged, EventOrderDocumentUploaded, EventOrderCertificateAttached,
	EventOrderCancelled}

// EventTypes returns every event type, in the order messages name them.
func EventTypes() []string {
	return slices.Clone(eventTypes[:])
}

// EventIDPrefix starts every event id.
const EventIDPrefix = "evt_"

// NewEventID returns a new event id: "evt_" and a random documentId (24
// characters of [a-z0-9], the first a letter), safe in a URL path.
func NewEventID() (string, error) {
	d, err := NewDocumentID()
	if err != nil {
		return "", fmt.Errorf("new event id: %w", err)
	}
	return EventIDPrefix + d, nil
}

// ValidEventID reports whether s has the shape NewEventID gives ids.
func ValidEventID(s string) bool {
	d, ok := strings.CutPrefix(s, EventIDPrefix)
	if !ok || len(d) != DocumentIDLength || d[0] < 'a' || d[0] > 'z' {
		return false
	}
	for i := 1; i < len(d); i++ {
		if c := d[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ValidEventType reports whether typ is one of the event types.
func ValidEventType(typ string) bool {
	return slices.Contains(eventTypes[:], typ)
}

// Pending is an event recorded with the change it tells of, in the same
// write (the order's outbox), until the relay hands it to the webhooks
// subscribed to its type. Its id is made before the write, so every retry
// of the write, and every delivery of the event, carries the same one.
// It lives in the domain, not in package webhooks, because the order
// workflows record it and the webhook workflows read orders: package
// webhooks renders it as the body receivers get (webhooks.NewEvent).
type Pending struct {
	ID   string
	Type string
	// At is when the change happened, in TimeLayout.
	At string
	// PreviousStatus and Status are the fulfillment's statuses before and
	// after an order.status_changed; nil for the other types.
	PreviousStatus *string
	Status         *string
	// Fulfillment is the documentId of the fulfillment a status or
	// certificate event is about; empty for other events (and for events
	// stored before it was recorded).
	Fulfillment string
	// Order is the order right after the change, as stored: its file keys
	// are kept, its download addresses are made when the event is sent.
	Order Order
	// Version is the order's version the change was stored at, when the
	// store knows it per event (a paper's change of an order of several
	// papers); 0 otherwise, and the relay orders the event by its outbox.
	Version int64
}

// NewPending returns the pending event of type typ about a change made at
// at (TimeLayout), which left order o, with a new id. previous and status
// are for an order.status_changed: both set there, both nil for the other
// types.
func NewPending(typ, at string, o Order, previous, status *string) (Pending, error) {
	if !ValidEventType(typ) {
		return Pending{}, fmt.Errorf("new pending event: unknown type %q", typ)
	}
	if (typ == EventOrderStatusChanged) != (previous != nil && status != nil) || (previous == nil) != (status == nil) {
		return Pending{}, fmt.Errorf("new pending event: %s with previous status %v and status %v", typ, previous, status)
	}
	id, err := NewEventID()
	if err != nil {
		return Pending{}, err
	}
	return Pending{ID: id, Type: typ, At: at, PreviousStatus: previous, Status: status, Order: o}, nil
}
