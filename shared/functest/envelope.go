package functest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// ErrorNames is the contract's error name for each status this service
// answers with.
var ErrorNames = map[int]string{
	400: "ValidationError",
	401: "UnauthorizedError",
	403: "ForbiddenError",
	404: "NotFoundError",
	405: "MethodNotAllowedError",
	409: "ConflictError",
	413: "PayloadTooLargeError",
	415: "UnsupportedMediaTypeError",
	500: "InternalServerError",
	503: "ServiceUnavailableError",
}

// Envelope is the error object of a Strapi error envelope, with the path of
// each entry of details.errors joined by ".".
type Envelope struct {
	Status  int
	Name    string
	Message string
	Paths   []string
}

// CheckEnvelope fails unless body is exactly a Strapi error envelope for
// status: {"data": null, "error": {status, name, message, details}}, with the
// status's error name, a message, and details an object whose errors, if any,
// carry a path, a message and the same name.
func CheckEnvelope(tb testing.TB, status int, body []byte) Envelope {
	tb.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		tb.Fatalf("status %d: body is not a JSON object: %v: %q", status, err, body)
	}
	if got, want := JSONKeys(top), "data,error"; got != want {
		tb.Fatalf("status %d: envelope keys = %s, want %s: %s", status, got, want, body)
	}
	if got, want := string(top["data"]), "null"; got != want {
		tb.Fatalf("status %d: data = %s, want %s", status, got, want)
	}
	var inner map[string]json.RawMessage
	if err := json.Unmarshal(top["error"], &inner); err != nil {
		tb.Fatalf("status %d: error is not an object: %s", status, body)
	}
	if got, want := JSONKeys(inner), "details,message,name,status"; got != want {
		tb.Fatalf("status %d: error keys = %s, want %s: %s", status, got, want, body)
	}
	var eb ErrorBody
	if err := json.Unmarshal(body, &eb); err != nil {
		tb.Fatalf("status %d: error object: %v: %s", status, err, body)
	}
	e := eb.Error
	if got, want := e.Status, status; got != want {
		tb.Fatalf("error.status = %d, want the HTTP status %d: %s", got, want, body)
	}
	if got, want := e.Name, ErrorNames[status]; got != want {
		tb.Fatalf("status %d: error.name = %q, want %q", status, got, want)
	}
	if e.Message == "" {
		tb.Fatalf("status %d: empty error.message: %s", status, body)
	}
	if len(inner["details"]) == 0 || inner["details"][0] != '{' {
		tb.Fatalf("status %d: details is not an object: %s", status, body)
	}
	out := Envelope{Status: e.Status, Name: e.Name, Message: e.Message}
	for _, d := range e.Details.Errors {
		if d.Path == nil || d.Message == "" || d.Name != e.Name {
			tb.Fatalf("status %d: bad details entry %+v: %s", status, d, body)
		}
		out.Paths = append(out.Paths, strings.Join(d.Path, "."))
	}
	return out
}

// JSONKeys returns the keys of m, sorted and joined by commas.
func JSONKeys(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}
