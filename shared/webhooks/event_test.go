package webhooks

import (
	"encoding/json"
	"testing"

	"stampduty/shared/stampduty"
)

func TestPendingEvent(t *testing.T) {
	p := stampduty.Pending{ID: "evt_k3v9xq2m7p4r8t1w5y6z0abc", Type: stampduty.EventOrderStatusChanged, At: "2026-11-21T04:10:00.000Z",
		PreviousStatus: ptr("Created"), Status: ptr("Procured"), Fulfillment: "f3v9xq2m7p4r8t1w5y6z0abc"}
	b, err := json.Marshal(NewEvent(p, json.RawMessage(`{"documentId":"k3v9xq2m7p4r8t1w5y6z0abc"}`)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"evt_k3v9xq2m7p4r8t1w5y6z0abc","type":"order.status_changed","createdAt":"2026-11-21T04:10:00.000Z","livemode":false,` +
		`"data":{"order":{"documentId":"k3v9xq2m7p4r8t1w5y6z0abc"},"previous_status":"Created","order_status":"Procured","fulfillment":"f3v9xq2m7p4r8t1w5y6z0abc"}}`
	if string(b) != want {
		t.Errorf("event\n%s\nwant\n%s", b, want)
	}
	t.Run("NonStatusEventsHaveNullStatuses", func(t *testing.T) {
		b, _ := json.Marshal(NewEvent(stampduty.Pending{ID: p.ID, Type: stampduty.EventOrderCreated, At: p.At}, json.RawMessage(`{}`)))
		want := `{"id":"evt_k3v9xq2m7p4r8t1w5y6z0abc","type":"order.created","createdAt":"2026-11-21T04:10:00.000Z","livemode":false,` +
			`"data":{"order":{},"previous_status":null,"order_status":null,"fulfillment":null}}`
		if string(b) != want {
			t.Errorf("event\n%s\nwant\n%s", b, want)
		}
	})
	t.Run("LivemodeIsTheOrders", func(t *testing.T) {
		for _, live := range []bool{true, false} {
			q := p
			q.Order.Livemode = live
			if got := NewEvent(q, json.RawMessage(`{}`)).Livemode; got != live {
				t.Errorf("an event of an order of livemode %v has livemode %v", live, got)
			}
		}
	})
}
