package function_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"stampduty/shared/function"
)

// TestLoggedNamesTheIDs: a request line names the order, webhook or event
// its path is about, by the route's template, and the order a create made
// (SetOrder), so that one Logs Insights query finds every request about
// one order; never a download link's token, an id of another kind, or a
// path segment that is no id.
func TestLoggedNamesTheIDs(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/live-orders" {
			function.SetOrder(r.Context(), "NewOrder0123456789abcdef")
		}
		w.WriteHeader(http.StatusOK)
	})
	for _, c := range []struct {
		route, path string
		want        map[string]string // order, webhook, event; absent: not logged
		never       string
	}{
		{"GET /api/live-orders/{documentId}", "/api/live-orders/Order0123456789abcdefgh", map[string]string{"order": "Order0123456789abcdefgh"}, ""},
		{"POST /api/live-orders", "/api/live-orders", map[string]string{"order": "NewOrder0123456789abcdef"}, ""},
		{"PATCH /api/ops/live-orders/{documentId}/fulfillments/{fulfillmentDocumentId}", "/api/ops/live-orders/OpsOrder01/fulfillments/Paper01",
			map[string]string{"order": "OpsOrder01"}, "Paper01"},
		{"POST /api/console/orders/{documentId}/cancel", "/api/console/orders/ConsoleOrder01/cancel", map[string]string{"order": "ConsoleOrder01"}, ""},
		{"GET /api/webhooks/{documentId}/deliveries", "/api/webhooks/Hook01/deliveries", map[string]string{"webhook": "Hook01"}, ""},
		{"POST /api/webhook-events/{eventId}/redeliver", "/api/webhook-events/evt_01/redeliver", map[string]string{"event": "evt_01"}, ""},
		{"GET /api/files/{token}", "/api/files/v1.SecretLinkToken", nil, "SecretLinkToken"},
		{"GET /api/console/catalogue/articles/{documentId}", "/api/console/catalogue/articles/Article01", nil, "Article01"},
		{"GET /api/live-orders/{documentId}", "/api/live-orders/Zebulon Quixote", nil, "Zebulon"},
		{"GET /api/live-orders/{documentId}", "/api/live-orders/" + strings.Repeat("x", 64), map[string]string{"order": strings.Repeat("x", 64)}, ""},
		{"GET /api/live-orders/{documentId}", "/api/live-orders/" + strings.Repeat("y", 65), nil, strings.Repeat("y", 65)},
		{"GET /api/live-orders/{documentId}", "/api/live-orders/Zoë-Order_01", nil, "Zo"},
		{"$default", "/api/live-orders/x/y", nil, ""},
	} {
		t.Run(c.route, func(t *testing.T) {
			var logs bytes.Buffer
			handler := function.Lambda(logged(h, &logs), slog.New(slog.NewJSONHandler(&logs, nil)))
			ev := event(strings.Fields(c.route + " GET")[0], c.path, "")
			ev.RouteKey, ev.RequestContext.RouteKey = c.route, c.route
			if c.route == "$default" {
				ev.RequestContext.HTTP.Method = "GET"
			}
			if _, err := handler(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			var line map[string]any
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("log %q: %v", logs.String(), err)
			}
			for _, k := range []string{"order", "webhook", "event"} {
				got, _ := line[k].(string)
				if want := c.want[k]; got != want {
					t.Errorf("%s = %q, want %q: %s", k, got, want, logs.String())
				}
			}
			if c.never != "" && strings.Contains(logs.String(), c.never) {
				t.Errorf("the line logs %q: %s", c.never, logs.String())
			}
		})
	}
}
