package function

import (
	"errors"
	"net/http"
	"stampduty/shared/duty"

	"stampduty/shared/stampduty"
)

// kind is the HTTP face of an error code.
type kind struct {
	status int
	name   string
	// retryAfter, when set, is the Retry-After header of the answer: the
	// same request may succeed that many seconds later.
	retryAfter string
}

// kinds maps each error code to its status, Strapi error name and
// Retry-After. It is the only place where these are chosen for errors.
var kinds = map[stampduty.Code]kind{
	stampduty.EINVALID:      {http.StatusBadRequest, "ValidationError", ""},
	stampduty.EUNAUTHORIZED: {http.StatusUnauthorized, "UnauthorizedError", ""},
	stampduty.EFORBIDDEN:    {http.StatusForbidden, "ForbiddenError", ""},
	stampduty.ENOTFOUND:     {http.StatusNotFound, "NotFoundError", ""},
	stampduty.ENOTALLOWED:   {http.StatusMethodNotAllowed, "MethodNotAllowedError", ""},
	stampduty.ECONFLICT:     {http.StatusConflict, "ConflictError", "1"},
	stampduty.EPAYMENT:      {http.StatusPaymentRequired, "PaymentRequiredError", ""},
	stampduty.ETOOLARGE:     {http.StatusRequestEntityTooLarge, "PayloadTooLargeError", ""},
	stampduty.EUNSUPPORTED:  {http.StatusUnsupportedMediaType, "UnsupportedMediaTypeError", ""},
	stampduty.EUNAVAILABLE:  {http.StatusServiceUnavailable, "ServiceUnavailableError", "1"},
	stampduty.EINTERNAL:     {http.StatusInternalServerError, "InternalServerError", ""},
}

func kindOf(err error) kind {
	if k, ok := kinds[stampduty.ErrorCode(err)]; ok {
		return k
	}
	return kinds[stampduty.EINTERNAL]
}

// ErrorBody is the Strapi error envelope: {"data": null, "error": {...}}.
type ErrorBody struct {
	Data  *struct{} `json:"data"`
	Error ErrorInfo `json:"error"`
}

// ErrorInfo is the error object of the envelope.
type ErrorInfo struct {
	Status  int     `json:"status"`
	Name    string  `json:"name"`
	Message string  `json:"message"`
	Details Details `json:"details"`
}

// Details holds the per-field errors of a ValidationError; it is {} otherwise.
type Details struct {
	Errors []DetailError `json:"errors,omitempty"`
	// DutyRule is the rule version that refused a quote's or a create's
	// inputs (duty-rules.md §10), absent otherwise.
	DutyRule *duty.RuleRef `json:"dutyRule,omitempty"`
	// Needed and Available are a 402's (accounts.md): what the order needs
	// and what the account has, as money strings; absent otherwise.
	Needed    string `json:"needed,omitempty"`
	Available string `json:"available,omitempty"`
}

// DetailError is one failing field: its path, message and error name.
type DetailError struct {
	// Path holds names (strings) and, below a field, indexes (numbers):
	// ["duty_rules", 1, "components", 2, "rate"].
	Path    []any  `json:"path"`
	Message string `json:"message"`
	Name    string `json:"name"`
}

// NewErrorBody returns the envelope of err. Internal and unavailable errors
// carry only a generic message: no cause, table name or address.
func NewErrorBody(err error) ErrorBody {
	k := kindOf(err)
	info := ErrorInfo{Status: k.status, Name: k.name, Message: stampduty.ErrorMessage(err)}
	var e *stampduty.Error
	switch {
	case k.status >= 500:
		// Whatever the error says, the caller gets the status's text (an
		// error that is no *stampduty.Error is a 500).
		info.Message = http.StatusText(k.status)
	case errors.As(err, &e):
		info.Details.DutyRule = e.DutyRule
		if e.Shortfall != nil {
			info.Details.Needed, info.Details.Available = e.Shortfall.Needed, e.Shortfall.Available
		}
		for _, f := range e.Fields {
			path := []any{}
			switch {
			case f.Where != nil:
				path = f.Where
			case f.Path != "":
				path = []any{f.Path}
			}
			info.Details.Errors = append(info.Details.Errors, DetailError{Path: path, Message: f.Message, Name: k.name})
		}
	}
	return ErrorBody{Error: info}
}

// WriteError writes err in the envelope with its status, and hands it to
// the request's log line (see Logged). An error a retry may cure (409, 503)
// tells the client when to retry.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	body := NewErrorBody(err)
	setError(r.Context(), err)
	if after := kindOf(err).retryAfter; after != "" {
		w.Header().Set("Retry-After", after)
	}
	if r.Method == http.MethodHead {
		// A HEAD answer has no body (RFC 9110); its headers are a GET's.
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(body.Error.Status)
		return
	}
	WriteJSON(w, body.Error.Status, body)
}
