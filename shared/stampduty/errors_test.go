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

func TestRequired(t *testing.T) {
	earlier := []FieldError{{Path: "size", Message: "size must be a whole number of bytes, at least 1"}}
	for _, tc := range []struct {
		name  string
		bad   []FieldError
		given map[string]bool
		want  string // the error's message; "" for none
	}{
		{"AllGivenNothingBad", nil, map[string]bool{"url": true, "events": true}, ""},
		{"MissingInKeyOrder", nil, map[string]bool{}, "Invalid data. url is required; events is required"},
		{"AfterEarlierErrors", earlier, map[string]bool{"size": true}, "Invalid data. size must be a whole number of bytes, at least 1; mime is required"},
		{"EarlierErrorsAlone", earlier, map[string]bool{"mime": true, "size": true}, "Invalid data. size must be a whole number of bytes, at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := []string{"url", "events"}
			if tc.bad != nil {
				keys = []string{"mime", "size"}
			}
			err := Required(tc.bad, tc.given, keys...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Required = %v, want nil", err)
				}
				return
			}
			if got, want := ErrorCode(err), EINVALID; got != want {
				t.Errorf("code = %s, want %s", got, want)
			}
			if got := ErrorMessage(err); got != tc.want {
				t.Errorf("message = %q, want %q", got, tc.want)
			}
		})
	}
}
