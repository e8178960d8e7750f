package webhooks

import (
	"encoding/json"
	"testing"

	"stampduty/shared/rules"
)

func TestNewPending(t *testing.T) {
	o := rules.Order{ID: 1, DocumentID: "k3v9xq2m7p4r8t1w5y6z0abc", CreatedAt: "2026-11-21T04:09:00.123Z"}
	for _, tc := range []struct {
		name             string
		typ              string
		previous, status *string
		ok               bool
	}{
		{"CreatedWithoutStatuses", EventOrderCreated, nil, nil, true},
		{"DocumentUploadedWithoutStatuses", EventOrderDocumentUploaded, nil, nil, true},
		{"CertificateAttachedWithoutStatuses", EventOrderCertificateAttached, nil, nil, true},
		{"StatusChangedWithBothStatuses", EventOrderStatusChanged, ptr("Pending"), ptr("Created"), true},
		{"ErrStatusChangedWithoutStatuses", EventOrderStatusChanged, nil, nil, false},
		{"ErrStatusChangedWithoutThePrevious", EventOrderStatusChanged, nil, ptr("Created"), false},
		{"ErrCreatedWithStatuses", EventOrderCreated, ptr("Pending"), ptr("Created"), false},
		{"ErrCreatedWithOneStatus", EventOrderCreated, nil, ptr("Pending"), false},
		{"ErrUnknownType", "order.deleted", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPending(tc.typ, "2026-11-21T04:10:00.000Z", o, tc.previous, tc.status)
			if (err == nil) != tc.ok {
				t.Fatalf("NewPending = %+v, %v; want ok %v", p, err, tc.ok)
			}
			if !tc.ok {
				return
			}
			if !ValidEventID(p.ID) || p.Type != tc.typ || p.At != "2026-11-21T04:10:00.000Z" || p.Order.DocumentID != o.DocumentID ||
				p.PreviousStatus != tc.previous || p.Status != tc.status {
				t.Errorf("NewPending = %+v", p)
			}
		})
	}
	t.Run("EachHasItsOwnID", func(t *testing.T) {
		a, _ := NewPending(EventOrderCreated, o.CreatedAt, o, nil, nil)
		b, _ := NewPending(EventOrderCreated, o.CreatedAt, o, nil, nil)
		if a.ID == b.ID {
			t.Errorf("two pending events share the id %s", a.ID)
		}
	})
}

func TestPendingEvent(t *testing.T) {
	p := Pending{ID: "evt_k3v9xq2m7p4r8t1w5y6z0abc", Type: EventOrderStatusChanged, At: "2026-11-21T04:10:00.000Z",
		PreviousStatus: ptr("Created"), Status: ptr("Procured")}
	b, err := json.Marshal(p.Event(json.RawMessage(`{"documentId":"k3v9xq2m7p4r8t1w5y6z0abc"}`)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"evt_k3v9xq2m7p4r8t1w5y6z0abc","type":"order.status_changed","createdAt":"2026-11-21T04:10:00.000Z",` +
		`"data":{"order":{"documentId":"k3v9xq2m7p4r8t1w5y6z0abc"},"previous_status":"Created","order_status":"Procured"}}`
	if string(b) != want {
		t.Errorf("event\n%s\nwant\n%s", b, want)
	}
	t.Run("NonStatusEventsHaveNullStatuses", func(t *testing.T) {
		b, _ := json.Marshal(Pending{ID: p.ID, Type: EventOrderCreated, At: p.At}.Event(json.RawMessage(`{}`)))
		want := `{"id":"evt_k3v9xq2m7p4r8t1w5y6z0abc","type":"order.created","createdAt":"2026-11-21T04:10:00.000Z",` +
			`"data":{"order":{},"previous_status":null,"order_status":null}}`
		if string(b) != want {
			t.Errorf("event\n%s\nwant\n%s", b, want)
		}
	})
}
