package stampduty

import "testing"

func TestNewPending(t *testing.T) {
	o := Order{ID: 1, DocumentID: "k3v9xq2m7p4r8t1w5y6z0abc", CreatedAt: "2026-11-21T04:09:00.123Z"}
	for _, tc := range []struct {
		name             string
		typ              string
		previous, status *string
		ok               bool
	}{
		{"CreatedWithoutStatuses", EventOrderCreated, nil, nil, true},
		{"DocumentUploadedWithoutStatuses", EventOrderDocumentUploaded, nil, nil, true},
		{"CertificateAttachedWithoutStatuses", EventOrderCertificateAttached, nil, nil, true},
		{"CancelledWithoutStatuses", EventOrderCancelled, nil, nil, true},
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

func TestEventIDs(t *testing.T) {
	t.Run("NewAreValidAndDistinct", func(t *testing.T) {
		seen := map[string]bool{}
		for range 100 {
			id, err := NewEventID()
			if err != nil {
				t.Fatal(err)
			}
			if !ValidEventID(id) {
				t.Fatalf("NewEventID() = %q, not valid", id)
			}
			if seen[id] {
				t.Fatalf("NewEventID() repeated %q", id)
			}
			seen[id] = true
		}
	})
	for _, bad := range []string{"", "evt_", "k3v9xq2m7p4r8t1w5y6z0abc", "evt_k3v9xq2m7p4r8t1w5y6z0ab", "evt_k3v9xq2m7p4r8t1w5y6z0abcd",
		"evt_3k3v9xq2m7p4r8t1w5y6z0ab", "evt_K3v9xq2m7p4r8t1w5y6z0abc", "evt_k3v9xq2m7p4r8t1w5y6z0ab/", "EVT_k3v9xq2m7p4r8t1w5y6z0abc"} {
		if ValidEventID(bad) {
			t.Errorf("ValidEventID(%q) = true, want false", bad)
		}
	}
	if !ValidEventID("evt_k3v9xq2m7p4r8t1w5y6z0abc") {
		t.Error("ValidEventID refuses a well-formed id")
	}
}
