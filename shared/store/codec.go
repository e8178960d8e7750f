package store

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The items the functions read and write on every request are encoded by
// hand: no reflection per request, fewer allocations, and the functions do
// not link the reflection-based attributevalue package at all (about 64 KiB
// of binary, which keeps create-order within 1.3× a hello-world Lambda).
// Operator paths (catalogue import, token management) use attributevalue.

func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func avN(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// reader decodes one item (a map attribute), remembering the first error.
type reader struct {
	m    map[string]types.AttributeValue
	path string
	err  *error
}

func newReader(m map[string]types.AttributeValue, err *error) reader {
	return reader{m: m, err: err}
}

func (r reader) fail(name, want string) {
	if *r.err == nil {
		*r.err = fmt.Errorf("attribute %s%s is not %s", r.path, name, want)
	}
}

// str returns a string attribute, "" when absent.
func (r reader) str(name string) string {
	v, ok := r.m[name]
	if !ok {
		return ""
	}
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		r.fail(name, "a string")
		return ""
	}
	return s.Value
}

// num returns a number attribute, 0 when absent.
func (r reader) num(name string) int64 {
	v, ok := r.m[name]
	if !ok {
		return 0
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		r.fail(name, "a number")
		return 0
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		r.fail(name, "an integer")
	}
	return i
}

// numStr returns a number attribute's decimal text and whether it is there.
func (r reader) numStr(name string) (string, bool) {
	v, ok := r.m[name]
	if !ok {
		return "", false
	}
	if _, null := v.(*types.AttributeValueMemberNULL); null {
		return "", false
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		r.fail(name, "a number")
		return "", false
	}
	return n.Value, true
}

// boolean returns a boolean attribute, false when absent.
func (r reader) boolean(name string) bool {
	v, ok := r.m[name]
	if !ok {
		return false
	}
	b, ok := v.(*types.AttributeValueMemberBOOL)
	if !ok {
		r.fail(name, "a boolean")
		return false
	}
	return b.Value
}

// sub returns a reader of a map attribute; ok is false when absent or NULL.
func (r reader) sub(name string) (reader, bool) {
	v, ok := r.m[name]
	if !ok {
		return reader{}, false
	}
	if _, null := v.(*types.AttributeValueMemberNULL); null {
		return reader{}, false
	}
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		r.fail(name, "a map")
		return reader{}, false
	}
	return reader{m: m.Value, path: r.path + name + ".", err: r.err}, true
}

// list returns readers of the map elements of a list attribute.
func (r reader) list(name string) []reader {
	v, ok := r.m[name]
	if !ok {
		return nil
	}
	l, ok := v.(*types.AttributeValueMemberL)
	if !ok {
		r.fail(name, "a list")
		return nil
	}
	out := make([]reader, 0, len(l.Value))
	for i, e := range l.Value {
		m, ok := e.(*types.AttributeValueMemberM)
		if !ok {
			r.fail(fmt.Sprintf("%s[%d]", name, i), "a map")
			return nil
		}
		out = append(out, reader{m: m.Value, path: fmt.Sprintf("%s%s[%d].", r.path, name, i), err: r.err})
	}
	return out
}
