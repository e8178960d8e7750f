package function

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"stampduty/shared/stampduty"
)

func TestLogged(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	secretBody := `{"firstPartyPan":"ABCDE1234F","firstPartyMobileNumber":"9876543210"}`
	h := Logged(logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetCaller(r.Context(), "acme")
		if r.URL.Query().Get("fail") != "" {
			WriteError(w, r, &stampduty.Error{Code: stampduty.EUNAVAILABLE, Message: "Service Unavailable", Err: context.DeadlineExceeded})
			return
		}
		WriteError(w, r, stampduty.Invalid([]stampduty.FieldError{{Path: "firstPartyPan", Message: "firstPartyPan must be empty or a PAN"}}))
	}))
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-123"})
	for _, q := range []string{"", "?fail=1"} {
		r := httptest.NewRequest("POST", "/api/live-orders"+q, strings.NewReader(secretBody)).WithContext(ctx)
		r.Header.Set("Authorization", "Bearer sdt_secret")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2: %s", len(lines), buf.String())
	}
	var first, second map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[1]), &second)
	for k, want := range map[string]any{"msg": "request", "route": "POST /api/live-orders", "status": 400.0, "request_id": "req-123", "caller": "acme", "error": "invalid", "level": "INFO"} {
		if first[k] != want {
			t.Errorf("first line %s = %v, want %v", k, first[k], want)
		}
	}
	if _, ok := first["latency_ms"].(float64); !ok {
		t.Errorf("no latency_ms: %s", lines[0])
	}
	if second["status"] != 503.0 || second["level"] != "ERROR" || second["cause"] != "Service Unavailable: context deadline exceeded" {
		t.Errorf("second line = %s", lines[1])
	}
	for _, leak := range []string{"ABCDE1234F", "9876543210", "sdt_secret", "fail=1"} {
		if strings.Contains(buf.String(), leak) {
			t.Errorf("log contains %q: %s", leak, buf.String())
		}
	}
}
