package function

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
)

func TestStatusTable(t *testing.T) {
	for _, tc := range []struct {
		code       stampduty.Code
		status     int
		name       string
		retryAfter string
	}{
		{stampduty.EINVALID, 400, "ValidationError", ""},
		{stampduty.EUNAUTHORIZED, 401, "UnauthorizedError", ""},
		{stampduty.EFORBIDDEN, 403, "ForbiddenError", ""},
		{stampduty.ENOTFOUND, 404, "NotFoundError", ""},
		{stampduty.ENOTALLOWED, 405, "MethodNotAllowedError", ""},
		{stampduty.ECONFLICT, 409, "ConflictError", "1"},
		{stampduty.ETOOLARGE, 413, "PayloadTooLargeError", ""},
		{stampduty.EUNSUPPORTED, 415, "UnsupportedMediaTypeError", ""},
		{stampduty.EUNAVAILABLE, 503, "ServiceUnavailableError", "1"},
		{stampduty.EINTERNAL, 500, "InternalServerError", ""},
	} {
		b := NewErrorBody(stampduty.Errorf(tc.code, "m"))
		if b.Error.Status != tc.status || b.Error.Name != tc.name {
			t.Errorf("%s: %d %s, want %d %s", tc.code, b.Error.Status, b.Error.Name, tc.status, tc.name)
		}
		w := httptest.NewRecorder()
		WriteError(w, httptest.NewRequest("GET", "/", nil), stampduty.Errorf(tc.code, "m"))
		if got, want := w.Header().Get("Retry-After"), tc.retryAfter; got != want {
			t.Errorf("%s: Retry-After %q, want %q", tc.code, got, want)
		}
		if got, want := w.Code, tc.status; got != want {
			t.Errorf("%s: written with status %d, want %d", tc.code, got, want)
		}
	}
}

func TestEnvelope(t *testing.T) {
	t.Run("ValidationDetails", func(t *testing.T) {
		err := stampduty.Invalid([]stampduty.FieldError{{Path: "firstPartyName", Message: "firstPartyName must be at most 40 characters"}, {Path: "", Message: "x"}})
		got, _ := json.Marshal(NewErrorBody(err))
		want := `{"data":null,"error":{"status":400,"name":"ValidationError","message":"Invalid data. firstPartyName must be at most 40 characters; x","details":{"errors":[{"path":["firstPartyName"],"message":"firstPartyName must be at most 40 characters","name":"ValidationError"},{"path":[],"message":"x","name":"ValidationError"}]}}}`
		if string(got) != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("EmptyDetailsObject", func(t *testing.T) {
		got, _ := json.Marshal(NewErrorBody(stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden")))
		if want := `{"data":null,"error":{"status":403,"name":"ForbiddenError","message":"Forbidden","details":{}}}`; string(got) != want {
			t.Errorf("got %s", got)
		}
	})
	t.Run("FaultsHideTheirCause", func(t *testing.T) {
		for _, err := range []error{
			&stampduty.Error{Code: stampduty.EUNAVAILABLE, Message: "table Orders-123 throttled", Err: errors.New("dynamodb PutItem: https://dynamodb.us-east-1.amazonaws.com")},
			&stampduty.Error{Code: stampduty.EINTERNAL, Message: "boom at store.go:12"},
			errors.New("plain error with secrets"),
		} {
			got, _ := json.Marshal(NewErrorBody(err))
			for _, leak := range []string{"Orders", "dynamodb", "store.go", "secrets", "throttled"} {
				if strings.Contains(string(got), leak) {
					t.Errorf("%s leaks %q", got, leak)
				}
			}
		}
	})
	t.Run("RetryAfterOn503", func(t *testing.T) {
		w := httptest.NewRecorder()
		WriteError(w, httptest.NewRequest("GET", "/", nil), stampduty.Errorf(stampduty.EUNAVAILABLE, "x"))
		if w.Code != 503 || w.Header().Get("Retry-After") == "" || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%d %v", w.Code, w.Header())
		}
	})
}
