package stampduty

import (
	"errors"
	"testing"
)

func TestErrorConstructors(t *testing.T) {
	cause := errors.New("dynamodb PutItem: ThrottlingException")
	for _, tc := range []struct {
		name    string
		err     *Error
		code    Code
		message string
	}{
		{"Internal", Internal(cause), EINTERNAL, "Internal Server Error"},
		{"Unavailable", Unavailable(cause), EUNAVAILABLE, "Service Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := ErrorCode(tc.err), tc.code; got != want {
				t.Errorf("code = %s, want %s", got, want)
			}
			if got, want := ErrorMessage(tc.err), tc.message; got != want {
				t.Errorf("message = %q, want %q (callers never see the cause)", got, want)
			}
			if !errors.Is(tc.err, cause) {
				t.Error("the cause is not reachable with errors.Is, so the logs lose it")
			}
		})
	}
}
