package stampduty

import (
	"errors"
	"fmt"
	"stampduty/shared/duty"
	"strings"
)

// Code is the kind of a domain error. The HTTP layer maps each code to one
// status and one Strapi error name, in one table (package function, errors.go).
type Code string

// The error kinds of the service.
const (
	EINVALID      Code = "invalid"      // the request breaks a rule: 400
	EUNAUTHORIZED Code = "unauthorized" // a token is present but unknown, revoked or malformed: 401
	EFORBIDDEN    Code = "forbidden"    // no token: 403
	ENOTFOUND     Code = "not_found"    // no such resource: 404
	ENOTALLOWED   Code = "not_allowed"  // the method is not served on this route: 405
	ECONFLICT     Code = "conflict"     // the request conflicts with the stored state: 409
	EPAYMENT      Code = "payment"      // the caller's account cannot cover the order: 402 (accounts.md)
	ETOOLARGE     Code = "too_large"    // the body is over the limit: 413
	EUNSUPPORTED  Code = "unsupported"  // the body is not JSON: 415
	EUNAVAILABLE  Code = "unavailable"  // a dependency is down or throttled; retry later: 503
	EINTERNAL     Code = "internal"     // a fault of ours: 500
)

// FieldError is one failing field of a request: the field's path and what is wrong with it.
// Messages never repeat the field's value, which may be personal data.
type FieldError struct {
	Path    string
	Message string
	// Where is the path as its elements (names and indexes), when it is
	// deeper than one field: ["duty_rules", 1, "components", 2, "rate"].
	// Path then writes it dotted, for logs and tools.
	Where []any
}

// Error is a domain error: a kind, a message safe to show to the caller, and,
// for EINVALID, the failing fields.
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
	// Err is the underlying cause, for logs only; it is never shown to callers.
	Err error
	// DutyRule is the rule version that refused a quote's or a create's
	// inputs (duty-rules.md §10: details.dutyRule), nil otherwise.
	DutyRule *duty.RuleRef
	// Shortfall is what an EPAYMENT refusal names: what the order needs and
	// what the account has available (accounts.md: details.needed,
	// details.available), nil otherwise.
	Shortfall *Shortfall
}

// Shortfall is the money a refused create needed and the account had
// available, each as the API writes money ("120000.00").
type Shortfall struct {
	Needed    string `json:"needed"`
	Available string `json:"available"`
}

// Error returns the message, with the cause when there is one.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of the given kind with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal returns the EINTERNAL error of a fault of ours: callers see only
// "Internal Server Error"; cause is for the logs.
func Internal(cause error) *Error {
	return &Error{Code: EINTERNAL, Message: "Internal Server Error", Err: cause}
}

// Unavailable returns the EUNAVAILABLE error of a dependency that is down or
// throttled, which a retry may find well: callers see only "Service
// Unavailable" (and Retry-After); cause is for the logs.
func Unavailable(cause error) *Error {
	return &Error{Code: EUNAVAILABLE, Message: "Service Unavailable", Err: cause}
}

// Required appends to bad a "K is required" error for each of keys that
// given does not hold, in the order of keys, and returns the EINVALID error
// of them all, or nil when bad stays empty: the last step of reading an
// object whose members were checked one by one.
func Required(bad []FieldError, given map[string]bool, keys ...string) error {
	for _, k := range keys {
		if !given[k] {
			bad = append(bad, FieldError{Path: k, Message: k + " is required"})
		}
	}
	if bad != nil {
		return Invalid(bad)
	}
	return nil
}

// Invalid returns the EINVALID error for the given failing fields. Its message
// starts with "Invalid data." and lists every field's message.
func Invalid(fields []FieldError) *Error {
	var b strings.Builder
	b.WriteString("Invalid data.")
	for i, f := range fields {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.Message)
	}
	return &Error{Code: EINVALID, Message: b.String(), Fields: fields}
}

// asError returns the *Error err is or wraps, nil when none.
func asError(err error) *Error {
	var e *Error
	errors.As(err, &e)
	return e
}

// ErrorCode returns the kind of err: its Code when it is (or wraps) an *Error,
// EINTERNAL otherwise, and "" for nil.
func ErrorCode(err error) Code {
	switch e := asError(err); {
	case e != nil:
		return e.Code
	case err != nil:
		return EINTERNAL
	}
	return ""
}

// ErrorMessage returns the caller-safe message of err: its Message when it is
// (or wraps) an *Error, a generic text otherwise.
func ErrorMessage(err error) string {
	switch e := asError(err); {
	case e != nil:
		return e.Message
	case err != nil:
		return "Internal Server Error"
	}
	return ""
}
