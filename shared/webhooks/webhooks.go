// Package webhooks is the service's webhooks feature (webhooks.md), whole:
// what a webhook, an event and a delivery attempt are, which URLs and event
// types a caller may register, the signing secret and signature, the retry
// schedule, and the client that delivers an event to a receiver that may be
// slow or hostile; and the workflows over them. A caller's side (Registry):
// registering a webhook, listing and deleting its webhooks, listing a
// webhook's delivery attempts and asking for an event to be delivered
// again. The sending side (Dispatcher): the relay copies each event an
// order item's outbox holds (stampduty.Pending) into one delivery job per
// subscribed webhook, and the delivery attempts the due jobs, signed,
// retried on the schedule, one at a time per webhook and in order per
// order; Failures lists, for operators, the webhooks that keep failing.
// The workflows are pure Go over small interfaces (Outbox, Hooks, Jobs,
// orders.IDs and orders.Files) that the store and files adapters satisfy:
// the package uses the standard library only (no AWS imports) and knows
// nothing of the HTTP edge. The scheduled dispatch function runs
// Dispatcher.Run.
package webhooks

import (
	"encoding/json"
	"fmt"
	"strings"

	"stampduty/shared/stampduty"
)

// MaxPerCaller is how many webhooks one caller may have (webhooks.md: 409 beyond).
const MaxPerCaller = 10

// The formats of a webhook's deliveries (webhooks.md, "Receivers written
// for the original API").
const (
	// FormatStampduty, the default: the event as Event renders it, signed
	// in Stampduty-Signature (Sign).
	FormatStampduty = "stampduty"
	// FormatOriginal: the original API's certificate callback, {"url",
	// "name", "orderId", "orderFulfillmentId"}, signed in
	// x-signature (SignOriginal); only for order.certificate_attached.
	FormatOriginal = "original"
)

// FormatRule is the message of a format that is not one of the formats.
const FormatRule = "format must be one of stampduty, original"

// Webhook is a caller's registered endpoint, as the caller sees it. Its
// secret and owner are never part of its JSON; the answer to a registration
// shows the secret once, through Registered.
type Webhook struct {
	ID         int64    `json:"id"`
	DocumentID string   `json:"documentId"`
	URL        string   `json:"url"`
	Events     []string `json:"events"`
	// Format is FormatStampduty or FormatOriginal: the body and signature
	// of its deliveries. It never changes once registered.
	Format string `json:"format"`
	// Enabled turns false when a receiver answers 410 Gone.
	Enabled bool `json:"enabled"`
	// CreatedAt is in stampduty.TimeLayout (UTC, milliseconds).
	CreatedAt string `json:"createdAt"`
	// Secret is the signing key (NewSecret); never rendered.
	Secret string `json:"-"`
	// Owner is the caller the webhook belongs to; never rendered.
	Owner string `json:"-"`
}

// Registered is the answer to a registration: the webhook with its secret,
// which is shown only then.
type Registered struct {
	Webhook
	Secret string `json:"secret"`
}

// Registered returns w as the answer to its registration, secret included.
func (w Webhook) Registered() Registered {
	return Registered{Webhook: w, Secret: w.Secret}
}

// Subscribed reports whether w is enabled and listens to events of type typ.
func (w Webhook) Subscribed(typ string) bool {
	if !w.Enabled {
		return false
	}
	for _, e := range w.Events {
		if e == typ {
			return true
		}
	}
	return false
}

// Event is one change told to receivers; its JSON is the body of a delivery.
// Every delivery of an event, retries and redeliveries included, carries the
// same ID.
type Event struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	// CreatedAt is in stampduty.TimeLayout: when the change happened.
	CreatedAt string `json:"createdAt"`
	// Livemode is false for an event of a test order, true for a live one
	// (test-mode.md, as Stripe marks its events): the order's own Livemode,
	// which its owner key decides.
	Livemode bool      `json:"livemode"`
	Data     EventData `json:"data"`
}

// NewEvent returns p as the event receivers get, with order as the JSON of
// p.Order as its caller sees it (rendered and signed by the sender).
func NewEvent(p stampduty.Pending, order json.RawMessage) Event {
	e := Event{ID: p.ID, Type: p.Type, CreatedAt: p.At, Livemode: p.Order.Livemode,
		Data: EventData{Order: order, PreviousStatus: p.PreviousStatus, OrderStatus: p.Status}}
	if p.Fulfillment != "" {
		e.Data.Fulfillment = &p.Fulfillment
	}
	return e
}

// EventData is an event's data: the order as the caller sees it right after
// the change, already rendered (this package does not know how orders are
// rendered), and the statuses the change moved between.
type EventData struct {
	Order json.RawMessage `json:"order"`
	// PreviousStatus is the status before an order.status_changed, else nil.
	PreviousStatus *string `json:"previous_status"`
	// OrderStatus is the status after the change, nil when the event has none.
	OrderStatus *string `json:"order_status"`
	// Fulfillment is the documentId of the paper an order.status_changed or
	// order.certificate_attached is about (papers.md), nil for the other
	// types (and for events stored before it was kept).
	Fulfillment *string `json:"fulfillment"`
}

// CheckEvents checks the events of a registration: one or more, each a known
// type, none twice. It returns an EINVALID *stampduty.Error on the path "events".
func CheckEvents(events []string) error {
	if len(events) == 0 {
		return invalid("events", "events must list at least one event type")
	}
	for i, e := range events {
		if !ValidEventType(e) {
			return invalid("events", fmt.Sprintf("events[%d] must be one of %s", i, strings.Join(EventTypes(), ", ")))
		}
		for _, prev := range events[:i] {
			if prev == e {
				return invalid("events", fmt.Sprintf("events[%d] repeats an event type", i))
			}
		}
	}
	return nil
}

// CheckFormat checks the format of a registration and the events it goes
// with: "" (FormatStampduty) and FormatStampduty take any events;
// FormatOriginal takes exactly [order.certificate_attached], the one event
// the original API called back for. It returns an EINVALID
// *stampduty.Error on the path "format" or "events".
func CheckFormat(format string, events []string) error {
	switch format {
	case "", FormatStampduty:
		return nil
	case FormatOriginal:
		if len(events) != 1 || events[0] != stampduty.EventOrderCertificateAttached {
			return invalid("events", "events must list exactly "+stampduty.EventOrderCertificateAttached+" when format is original")
		}
		return nil
	}
	return invalid("format", FormatRule)
}

// invalid returns the EINVALID error of one failing field.
func invalid(path, msg string) *stampduty.Error {
	return stampduty.Invalid([]stampduty.FieldError{{Path: path, Message: msg}})
}
