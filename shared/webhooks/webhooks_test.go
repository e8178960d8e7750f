package webhooks

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

func ptr[T any](v T) *T { return &v }

func TestWebhookJSON(t *testing.T) {
	w := Webhook{ID: 7, DocumentID: "k3v9xq2m7p4r8t1w5y6z0abc", URL: "https://example.com/hooks",
		Events: []string{stampduty.EventOrderCreated}, Format: FormatStampduty, Enabled: true, CreatedAt: "2026-11-21T04:09:00.123Z",
		Secret: "whsec_SECRET", Owner: "acme"}
	t.Run("NeverShowsSecretOrOwner", func(t *testing.T) {
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":7,"documentId":"k3v9xq2m7p4r8t1w5y6z0abc","url":"https://example.com/hooks","events":["order.created"],"format":"stampduty","enabled":true,"createdAt":"2026-11-21T04:09:00.123Z"}`
		if got := string(b); got != want {
			t.Errorf("json = %s, want %s", got, want)
		}
	})
	t.Run("RegisteredShowsSecretOnce", func(t *testing.T) {
		b, err := json.Marshal(w.Registered())
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":7,"documentId":"k3v9xq2m7p4r8t1w5y6z0abc","url":"https://example.com/hooks","events":["order.created"],"format":"stampduty","enabled":true,"createdAt":"2026-11-21T04:09:00.123Z","secret":"whsec_SECRET"}`
		if got := string(b); got != want {
			t.Errorf("json = %s, want %s", got, want)
		}
	})
	t.Run("Subscribed", func(t *testing.T) {
		if !w.Subscribed(stampduty.EventOrderCreated) {
			t.Error("an enabled webhook is not subscribed to its own event type")
		}
		if w.Subscribed(stampduty.EventOrderStatusChanged) {
			t.Error("a webhook is subscribed to a type it does not list")
		}
		off := w
		off.Enabled = false
		if off.Subscribed(stampduty.EventOrderCreated) {
			t.Error("a disabled webhook is subscribed")
		}
	})
}

// TestEventJSON: an event as receivers get it, made as the workflows make
// it (a pending event of the outbox, then its Event).
func TestEventJSON(t *testing.T) {
	at := stampduty.FormatTime(time.Date(2026, 11, 21, 4, 9, 0, 123e6, time.UTC))
	t.Run("StatusChanged", func(t *testing.T) {
		p, err := stampduty.NewPending(stampduty.EventOrderStatusChanged, at, stampduty.Order{}, ptr("Pending"), ptr("Created"))
		if err != nil {
			t.Fatal(err)
		}
		ev := NewEvent(p, json.RawMessage(`{"documentId":"k3"}`))
		if !stampduty.ValidEventID(ev.ID) {
			t.Errorf("NewPending id %q is not a valid event id", ev.ID)
		}
		ev.ID = "evt_x"
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":"evt_x","type":"order.status_changed","createdAt":"2026-11-21T04:09:00.123Z","livemode":false,"data":{"order":{"documentId":"k3"},"previous_status":"Pending","order_status":"Created","fulfillment":null}}`
		if got := string(b); got != want {
			t.Errorf("json = %s, want %s", got, want)
		}
	})
	t.Run("NullStatuses", func(t *testing.T) {
		p, err := stampduty.NewPending(stampduty.EventOrderCreated, at, stampduty.Order{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(NewEvent(p, json.RawMessage(`{}`)).Data)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), `{"order":{},"previous_status":null,"order_status":null,"fulfillment":null}`; got != want {
			t.Errorf("json = %s, want %s", got, want)
		}
	})
	// An unknown type is refused by stampduty.NewPending (TestNewPending/ErrUnknownType).
}

func TestAttemptJSON(t *testing.T) {
	a := Attempt{EventID: "evt_x", Type: stampduty.EventOrderCreated, Attempt: 2, Status: 0, At: "2026-11-21T04:09:30.000Z", DurationMS: 10000}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event_id":"evt_x","type":"order.created","attempt":2,"status":0,"at":"2026-11-21T04:09:30.000Z","duration_ms":10000,"next_attempt_at":null}`
	if got := string(b); got != want {
		t.Errorf("json = %s, want %s", got, want)
	}
}

func TestCheckEvents(t *testing.T) {
	t.Run("KnownTypes", func(t *testing.T) {
		for _, typ := range []string{"order.created", "order.status_changed", "order.document_uploaded", "order.certificate_attached", "order.cancelled"} {
			if !stampduty.ValidEventType(typ) {
				t.Errorf("ValidEventType(%q) = false", typ)
			}
		}
		for _, typ := range []string{"", "order.*", "Order.Created", "order.created "} {
			if stampduty.ValidEventType(typ) {
				t.Errorf("ValidEventType(%q) = true", typ)
			}
		}
	})
	t.Run("AccountEventsAcceptedForWebhooksOnly", func(t *testing.T) {
		if err := CheckEvents([]string{accounts.EventCredited, accounts.EventLowBalance, stampduty.EventOrderCreated}); err != nil {
			t.Errorf("CheckEvents(account events) = %v", err)
		}
		if stampduty.ValidEventType(accounts.EventCredited) {
			t.Error("account.credited is an order event type: an order's outbox could hold it")
		}
		if err := CheckFormat(FormatOriginal, []string{accounts.EventCredited}); err == nil {
			t.Error("an original-format webhook takes account.credited")
		}
	})
	t.Run("AllFiveAccepted", func(t *testing.T) {
		if err := CheckEvents([]string{stampduty.EventOrderCertificateAttached, stampduty.EventOrderCreated, stampduty.EventOrderDocumentUploaded,
			stampduty.EventOrderStatusChanged, stampduty.EventOrderCancelled}); err != nil {
			t.Errorf("CheckEvents(all five) = %v", err)
		}
	})
	bad := []struct {
		name   string
		events []string
		msg    string
	}{
		{"None", nil, "events must list at least one event type"},
		{"Empty", []string{}, "events must list at least one event type"},
		{"Unknown", []string{stampduty.EventOrderCreated, "order.deleted"}, "events[1] must be one of order.created, order.status_changed, order.document_uploaded, order.certificate_attached, order.cancelled, account.credited, account.low_balance"},
		{"Repeated", []string{stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged, stampduty.EventOrderCreated}, "events[2] repeats an event type"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			assertInvalid(t, CheckEvents(tc.events), "events", tc.msg)
		})
	}
}

// assertInvalid fails t unless err is an EINVALID *stampduty.Error of one field
// at path with message msg.
func assertInvalid(t *testing.T, err error, path, msg string) {
	t.Helper()
	var e *stampduty.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want a *stampduty.Error", err)
	}
	if got, want := e.Code, stampduty.EINVALID; got != want {
		t.Errorf("code = %s, want %s", got, want)
	}
	if len(e.Fields) != 1 {
		t.Fatalf("fields = %+v, want one", e.Fields)
	}
	if got, want := e.Fields[0].Path, path; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if got, want := e.Fields[0].Message, msg; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if !strings.HasPrefix(e.Message, "Invalid data. ") {
		t.Errorf("message %q does not start with Invalid data.", e.Message)
	}
}
