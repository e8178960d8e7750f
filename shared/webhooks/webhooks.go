// Package webhooks holds the rules of the service's webhooks (webhooks.md):
// what a webhook, an event and a delivery attempt are, which URLs and event
// types a caller may register, the signing secret and signature, the retry
// schedule, and the client that delivers an event to a receiver that may be
// slow or hostile. It uses the standard library only (no AWS imports): the
// store, the functions and the dispatch build on it.
package webhooks

import (
	"encoding/json"
	"fmt"
	"strings"

	"stampduty/shared/rules"
)

// MaxPerCaller is how many webhooks one caller may have (webhooks.md: 409 beyond).
const MaxPerCaller = 10

// The event types (webhooks.md, Events).
const (
	EventOrderCreated             = "order.created"              // an order is stored
	EventOrderStatusChanged       = "order.status_changed"       // a fulfillment moves to another status
	EventOrderDocumentUploaded    = "order.document_uploaded"    // the caller's document is stored
	EventOrderCertificateAttached = "order.certificate_attached" // a certificate file is attached
)

// eventTypes lists every event type, in the order messages name them.
var eventTypes = [...]string{EventOrderCreated, EventOrderStatusChanged, EventOrderDocumentUploaded, EventOrderCertificateAttached}

// EventIDPrefix starts every event id.
const EventIDPrefix = "evt_"

// Webhook is a caller's registered endpoint, as the caller sees it. Its
// secret and owner are never part of its JSON; the answer to a registration
// shows the secret once, through Registered.
type Webhook struct {
	ID         int64    `json:"id"`
	DocumentID string   `json:"documentId"`
	URL        string   `json:"url"`
	Events     []string `json:"events"`
	// Enabled turns false when a receiver answers 410 Gone.
	Enabled bool `json:"enabled"`
	// CreatedAt is in rules.TimeLayout (UTC, milliseconds).
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
	// CreatedAt is in rules.TimeLayout: when the change happened.
	CreatedAt string    `json:"createdAt"`
	Data      EventData `json:"data"`
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
}

// NewEventID returns a new event id: "evt_" and a random documentId (24
// characters of [a-z0-9], the first a letter), safe in a URL path.
func NewEventID() (string, error) {
	d, err := rules.NewDocumentID()
	if err != nil {
		return "", fmt.Errorf("new event id: %w", err)
	}
	return EventIDPrefix + d, nil
}

// ValidEventID reports whether s has the shape NewEventID gives ids.
func ValidEventID(s string) bool {
	d, ok := strings.CutPrefix(s, EventIDPrefix)
	if !ok || len(d) != rules.DocumentIDLength || d[0] < 'a' || d[0] > 'z' {
		return false
	}
	for i := 1; i < len(d); i++ {
		if c := d[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ValidEventType reports whether typ is one of the four event types.
func ValidEventType(typ string) bool {
	for _, t := range eventTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// CheckEvents checks the events of a registration: one or more, each a known
// type, none twice. It returns an EINVALID *rules.Error on the path "events".
func CheckEvents(events []string) error {
	if len(events) == 0 {
		return invalid("events", "events must list at least one event type")
	}
	for i, e := range events {
		if !ValidEventType(e) {
			return invalid("events", fmt.Sprintf("events[%d] must be one of %s", i, strings.Join(eventTypes[:], ", ")))
		}
		for _, prev := range events[:i] {
			if prev == e {
				return invalid("events", fmt.Sprintf("events[%d] repeats an event type", i))
			}
		}
	}
	return nil
}

// invalid returns the EINVALID error of one failing field.
func invalid(path, msg string) *rules.Error {
	return rules.Invalid([]rules.FieldError{{Path: path, Message: msg}})
}
