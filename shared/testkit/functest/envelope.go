package functest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/function"
	"stampduty/shared/strapiquery"
)

// ErrorNames is the contract's error name of each status the service
// answers with (the test's own copy of the contract, not strapi's table).
var ErrorNames = map[int]string{
	400: "ValidationError",
	401: "UnauthorizedError",
	402: "PaymentRequiredError",
	403: "ForbiddenError",
	404: "NotFoundError",
	405: "MethodNotAllowedError",
	409: "ConflictError",
	413: "PayloadTooLargeError",
	415: "UnsupportedMediaTypeError",
	500: "InternalServerError",
	503: "ServiceUnavailableError",
}

// Envelope is a Strapi error envelope, as a client decodes it.
type Envelope struct{ function.ErrorBody }

// Paths returns the path of each entry of details.errors, joined by ".".
func (e Envelope) Paths() []string {
	var paths []string
	for _, d := range e.Error.Details.Errors {
		var parts []string
		for _, e := range d.Path {
			parts = append(parts, fmt.Sprint(e))
		}
		paths = append(paths, strings.Join(parts, "."))
	}
	return paths
}

// CheckEnvelope fails unless body is exactly a Strapi error envelope for
// status: {"data": null, "error": {status, name, message, details}}, with
// the status's name, a message, and details an object whose errors, if
// any, carry a path, a message and the same name.
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
	var out Envelope
	if err := json.Unmarshal(body, &out); err != nil {
		tb.Fatalf("status %d: error object: %v: %s", status, err, body)
	}
	e := out.Error
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
	for _, d := range e.Details.Errors {
		if d.Path == nil || d.Message == "" || d.Name != e.Name {
			tb.Fatalf("status %d: bad details entry %+v: %s", status, d, body)
		}
	}
	return out
}

// CheckQueryRefused fails unless body is a Strapi ValidationError envelope
// for status with at least one failing query parameter in its details.
func CheckQueryRefused(tb testing.TB, status int, body []byte) {
	tb.Helper()
	e := CheckEnvelope(tb, status, body)
	if e.Error.Name != "ValidationError" || len(e.Paths()) == 0 {
		tb.Fatalf("status %d: want a ValidationError naming a parameter: %s", status, body)
	}
}

// CheckPage fails unless body, a list route's 200 answer to the query raw,
// is exactly {data: [...], outer}, whose pagination block (outer, or
// outer.pagination when outer is "meta") is {page, pageSize, pageCount,
// total} or {start, limit, total} in range for total items (without total
// and pageCount when the query does not count). It returns the ids of data
// and the window the block names: its first item (from 0) and its size.
func CheckPage(tb testing.TB, raw string, body []byte, outer string, total int) (ids []int64, start, limit int) {
	tb.Helper()
	var top map[string]json.RawMessage
	var data []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		tb.Fatalf("query %q: 200 body: %v", raw, err)
	}
	if got, want := JSONKeys(top), "data,"+outer; got != want {
		tb.Fatalf("query %q: keys = %s, want %s", raw, got, want)
	}
	if err := json.Unmarshal(top["data"], &data); err != nil || !strings.HasPrefix(string(top["data"]), "[") {
		tb.Fatalf("query %q: data = %s, want an array", raw, top["data"])
	}
	block := top[outer]
	if outer == "meta" {
		var meta map[string]json.RawMessage
		json.Unmarshal(block, &meta)
		block = meta["pagination"]
	}
	var p map[string]int
	if err := json.Unmarshal(block, &p); err != nil {
		tb.Fatalf("query %q: pagination %s: %v", raw, block, err)
	}
	switch keys := fmt.Sprint(slices.Sorted(maps.Keys(p))); keys {
	case "[page pageCount pageSize total]", "[page pageSize]":
		page, size := p["page"], p["pageSize"]
		if page < 1 || page > math.MaxInt32 || size < 1 || size > strapiquery.MaxPageSize {
			tb.Fatalf("query %q: pagination %v out of range", raw, p)
		}
		if _, counted := p["total"]; counted {
			if got, want := p["pageCount"], (total+size-1)/size; got != want {
				tb.Fatalf("query %q: pageCount = %d, want %d", raw, got, want)
			}
		}
		start, limit = (page-1)*size, size
	case "[limit start total]", "[limit start]":
		start, limit = p["start"], p["limit"]
		if start < 0 || start > math.MaxInt32 || limit < 1 || limit > strapiquery.MaxPageSize {
			tb.Fatalf("query %q: pagination %v out of range", raw, p)
		}
	default:
		tb.Fatalf("query %q: pagination keys = %s, want a page or an offset block", raw, keys)
	}
	if got, counted := p["total"]; counted && got != total {
		tb.Fatalf("query %q: total = %d, want %d", raw, got, total)
	}
	for _, d := range data {
		ids = append(ids, d.ID)
	}
	return ids, start, limit
}

// JSONKeys returns the keys of m, sorted and joined by commas.
func JSONKeys(m map[string]json.RawMessage) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}
