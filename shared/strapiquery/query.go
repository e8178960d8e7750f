package strapiquery

import (
	"fmt"
	"net/url"
	"sort"

	"stampduty/shared/stampduty"
)

// Query is a parsed query string.
type Query struct {
	values url.Values
}

// Parse parses a raw (still percent-encoded) query string and refuses
// keys for which known returns false.
func Parse(raw string, known func(key string) bool) (Query, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return Query{}, paramError("query", "The query string is malformed")
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known(k) {
			return Query{}, paramError(k, fmt.Sprintf("Invalid query parameter %s", k))
		}
	}
	return Query{values: v}, nil
}

func paramError(key, msg string) error {
	return &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: key, Message: msg}}}
}

// Value returns the single value of key; ok is false when the key is
// absent, and a key given more than once is EINVALID.
func (q Query) Value(key string) (v string, ok bool, err error) { return q.one(key) }

// one returns the single value of key; ok is false when the key is absent.
func (q Query) one(key string) (string, bool, error) {
	vs, ok := q.values[key]
	if !ok {
		return "", false, nil
	}
	if len(vs) > 1 {
		return "", false, paramError(key, key+" must be given once")
	}
	return vs[0], true, nil
}
