package webhooks

import (
	"encoding/json"
	"fmt"

	"stampduty/shared/rules"
)

// Pending is an event recorded with the change it tells of, in the same
// write (the order's outbox), until the relay hands it to the webhooks
// subscribed to its type. Its id is made before the write, so every retry
// of the write, and every delivery of the event, carries the same one.
type Pending struct {
	ID   string
	Type string
	// At is when the change happened, in rules.TimeLayout.
	At string
	// PreviousStatus and Status are the fulfillment's statuses before and
	// after an order.status_changed; nil for the other types.
	PreviousStatus *string
	Status         *string
	// Order is the order right after the change, as stored: its file keys
	// are kept, its download addresses are made when the event is sent.
	Order rules.Order
}

// NewPending returns the pending event of type typ about a change made at
// at (rules.TimeLayout), which left order o, with a new id. previous and
// status are for an order.status_changed: both set there, both nil for the
// other types.
func NewPending(typ, at string, o rules.Order, previous, status *string) (Pending, error) {
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

// Event returns p as the event receivers get, with order as the JSON of
// p.Order as its caller sees it (rendered and signed by the sender).
func (p Pending) Event(order json.RawMessage) Event {
	return Event{ID: p.ID, Type: p.Type, CreatedAt: p.At,
		Data: EventData{Order: order, PreviousStatus: p.PreviousStatus, OrderStatus: p.Status}}
}
