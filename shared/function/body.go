package function

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"stampduty/shared/jsonobj"
	"stampduty/shared/stampduty"
)

// MaxBody is the largest request body accepted: 64 KiB.
const MaxBody = 64 << 10

// ReadJSONBody reads a JSON request body of at most MaxBody bytes. A body
// declared with a non-JSON Content-Type is EUNSUPPORTED; a longer one is
// ETOOLARGE, refused before any of it is parsed.
func ReadJSONBody(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
		return nil, stampduty.Errorf(stampduty.EUNSUPPORTED, "Content-Type must be application/json")
	}
	if r.ContentLength > MaxBody {
		return nil, stampduty.Errorf(stampduty.ETOOLARGE, "The request body is larger than 64 KiB")
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return nil, stampduty.Errorf(stampduty.EINVALID, "Invalid data. The body could not be read")
	}
	if len(b) > MaxBody {
		return nil, stampduty.Errorf(stampduty.ETOOLARGE, "The request body is larger than 64 KiB")
	}
	return b, nil
}

// ReadUpload reads a request whose body is a file (a caller's document, a
// certificate): its Content-Type, the name query parameter (nil when
// absent) and at most stampduty.MaxFileSize+1 bytes of it, so that a longer
// body is refused (stampduty.FileKind.Check) without being read whole.
func ReadUpload(r *http.Request) (stampduty.Upload, error) {
	u := stampduty.Upload{ContentType: r.Header.Get("Content-Type")}
	if q := r.URL.Query(); q.Has("name") {
		name := q.Get("name")
		u.Name = &name
	}
	if r.ContentLength > stampduty.MaxFileSize {
		return u, stampduty.FileTooLarge()
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, stampduty.MaxFileSize+1))
	if err != nil {
		return u, stampduty.Errorf(stampduty.EINVALID, "Invalid data. The body could not be read")
	}
	u.Body = b
	return u, nil
}

// MaxDepth is the deepest nesting a request body may have; the body itself
// is at depth 1.
const MaxDepth = 32

// DecodeObject reads a request body that must be one JSON object, with
// encoding/json (package jsonobj), and returns its members in body order,
// each key once. A body that is not valid UTF-8, not JSON, not an object or
// nested deeper than MaxDepth is an EINVALID error with one message for the
// whole body (path ""); a body that gives keys more than once (compared
// after unescaping, case-sensitively) is one with a message per such key,
// in the order of their second occurrence.
func DecodeObject(body []byte) ([]jsonobj.Member, error) {
	members, err := jsonobj.Members(body, MaxDepth)
	if err != nil {
		return nil, InvalidJSON(err, "The body must be a JSON object")
	}
	var repeated []stampduty.FieldError
	for _, m := range members {
		if m.Occurrence == 2 {
			repeated = append(repeated, stampduty.FieldError{Path: m.Key, Message: m.Key + " is given more than once"})
		}
	}
	if repeated != nil {
		return nil, stampduty.Invalid(repeated)
	}
	return members, nil
}

// InvalidJSON is the 400 of a body jsonobj.Members refused with err: not
// UTF-8, not JSON, nested too deeply, or not an object (notObject, the
// message of the shape the route expects).
func InvalidJSON(err error, notObject string) error {
	msg := "The body is not valid JSON"
	switch {
	case errors.Is(err, jsonobj.ErrNotUTF8):
		msg = "The body is not valid UTF-8"
	case errors.Is(err, jsonobj.ErrNotObject):
		msg = notObject
	case errors.Is(err, jsonobj.ErrTooDeep):
		msg = "The body is nested too deeply"
	}
	return stampduty.Invalid([]stampduty.FieldError{{Path: "", Message: msg}})
}

// missingData is Strapi's own message for a create whose "data" is not an
// object.
const missingData = `Missing "data" payload in the request body`

// DecodeData reads a create body with DecodeObject and unwraps Strapi's
// create shape: a body whose only member is "data" holding an object is
// read as that object, so its fields, messages and detail paths are those
// of a body sent bare. "data" that is not an object is Strapi's 400
// Missing "data" payload; "data" beside other members is 400 on "data".
// Any other object is returned as it is.
func DecodeData(body []byte) ([]jsonobj.Member, error) {
	members, err := DecodeObject(body)
	if err != nil {
		return nil, err
	}
	at := slices.IndexFunc(members, func(m jsonobj.Member) bool { return m.Key == "data" })
	switch {
	case at < 0:
		return members, nil
	case len(members) > 1:
		return nil, stampduty.Invalid([]stampduty.FieldError{{Path: "data", Message: "data must be the only member of the body when it is sent"}})
	case members[0].Value.Kind != jsonobj.Object:
		return nil, &stampduty.Error{Code: stampduty.EINVALID, Message: missingData, Fields: []stampduty.FieldError{{Path: "data", Message: missingData}}}
	}
	var wrapped map[string]json.RawMessage
	if err := json.Unmarshal(body, &wrapped); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("decode data: %w", err))
	}
	return DecodeObject(wrapped["data"])
}

// isJSON reports whether a Content-Type value names JSON: application/json
// or a +json type, with any parameters.
func isJSON(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// IsJSON reports whether r's body is declared JSON (Content-Type
// application/json, parameters aside): how a file's PUT tells an attach by
// upload id ({"upload": "<id>"}) from a file sent as the body, which is
// never JSON.
func IsJSON(r *http.Request) bool { return isJSON(r.Header.Get("Content-Type")) }

// ReadDeclared reads the body of a request for a pre-signed upload:
// {"name": "lease.pdf", "mime": "application/pdf", "size": 10485760}, name
// optional; any other member, or a member of the wrong type, is EINVALID.
// What the values must be is stampduty.FileKind.CheckDeclared's.
func ReadDeclared(r *http.Request) (stampduty.Declared, error) {
	var d stampduty.Declared
	members, err := ReadObject(r)
	if err != nil {
		return d, err
	}
	var bad []stampduty.FieldError
	seen := map[string]bool{}
	for _, m := range members {
		seen[m.Key] = true
		switch {
		case m.Key == "name" && m.Value.Kind == jsonobj.String:
			name := m.Value.Text
			d.Name = &name
		case m.Key == "mime" && m.Value.Kind == jsonobj.String:
			d.Mime = m.Value.Text
		case m.Key == "size" && m.Value.Kind == jsonobj.Number:
			n, err := strconv.ParseInt(string(m.Value.Number), 10, 64)
			if err != nil || n < 1 {
				bad = append(bad, stampduty.FieldError{Path: "size", Message: "size must be a whole number of bytes, at least 1"})
			}
			d.Size = n
		case m.Key == "name" || m.Key == "mime":
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " must be a string"})
		case m.Key == "size":
			bad = append(bad, stampduty.FieldError{Path: "size", Message: "size must be a whole number of bytes, at least 1"})
		default:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of an upload"})
		}
	}
	if err := stampduty.Required(bad, seen, "mime", "size"); err != nil {
		return d, err
	}
	return d, nil
}

// ReadAttach reads the body of an attach by upload id: {"upload": "<id>"}
// and nothing else (EINVALID otherwise).
func ReadAttach(r *http.Request) (string, error) {
	members, err := ReadObject(r)
	if err != nil {
		return "", err
	}
	id, found, bad := OneField(members, "upload", func(v jsonobj.Value) bool { return v.Kind == jsonobj.String && v.Text != "" },
		"upload must be the id of an upload", "an attach")
	if !found && bad == nil {
		bad = append(bad, stampduty.FieldError{Path: "upload", Message: "upload is required"})
	}
	if bad != nil {
		return "", stampduty.Invalid(bad)
	}
	return id.Text, nil
}

// OneField reads members as an object whose only field is key: the last
// value of key that valid takes, found false when there is none, and the
// members in error, in order: key with a value valid refuses (message),
// any other key as not a field of what ("an attach").
func OneField(members []jsonobj.Member, key string, valid func(jsonobj.Value) bool, message, what string) (v jsonobj.Value, found bool, bad []stampduty.FieldError) {
	for _, m := range members {
		switch {
		case m.Key == key && valid(m.Value):
			v, found = m.Value, true
		case m.Key == key:
			bad = append(bad, stampduty.FieldError{Path: key, Message: message})
		default:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of " + what})
		}
	}
	return v, found, bad
}

// ReadObject reads r's JSON body (ReadJSONBody) as one object's members
// (DecodeObject).
func ReadObject(r *http.Request) ([]jsonobj.Member, error) {
	body, err := ReadJSONBody(r)
	if err != nil {
		return nil, err
	}
	return DecodeObject(body)
}
