package strapiquery

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// fields reads fields=a,b or fields[0]=a&fields[1]=b: nil when absent or *.
func (q Query) fields(allowed []string) ([]string, error) {
	root, found, err := q.tree("fields")
	if err != nil || !found {
		return nil, err
	}
	items, ok := root.list()
	if !ok {
		return nil, paramError("fields", "fields must be a list of field names, such as fields[0]=name")
	}
	out := []string{}
	for _, it := range items {
		if it.kids != nil {
			return nil, paramError("fields", "fields must be a list of field names, such as fields[0]=name")
		}
		for _, v := range it.values {
			for _, f := range strings.Split(v, ",") {
				f = strings.TrimSpace(f)
				switch {
				case f == "*":
					return nil, nil
				case f == "id" || f == "documentId":
				case !slices.Contains(allowed, f):
					return nil, paramError("fields", "Invalid key "+f)
				default:
					out = append(out, f)
				}
			}
		}
	}
	return out, nil
}

// Select returns items as JSON objects that keep only id, documentId, the
// given fields and always; fields nil returns items as they are.
func Select[T any](items []T, fields []string, always ...string) (any, error) {
	if fields == nil {
		return items, nil
	}
	out := make([]map[string]json.RawMessage, len(items))
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, fmt.Errorf("select fields: %w", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("select fields: %w", err)
		}
		for k := range m {
			if k != "id" && k != "documentId" && !slices.Contains(fields, k) && !slices.Contains(always, k) {
				delete(m, k)
			}
		}
		out[i] = m
	}
	return out, nil
}
