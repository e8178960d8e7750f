package duty

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The kinds of a JSON value as a rule is read (node.kind).
const (
	jNull = iota
	jBool
	jNumber
	jString
	jObject
	jArray
)

// kindNames name the kinds in problems: "must be a string, not a number".
var kindNames = [...]string{"null", "a boolean", "a JSON number", "a string", "an object", "an array"}

// node is a JSON value as a rule is read: objects keep their members'
// order (bases are evaluated in the order given, §2) and numbers keep
// their text, so that a number is refused where it stands rather than lost
// to a float on the way.
type node struct {
	kind    int
	str     string // a string's value, a number's text
	boolean bool
	members []member // an object's, in order
	items   []*node  // an array's
}

// member is one name and value of an object.
type member struct {
	name  string
	value *node
}

// get returns the value of an object's member, nil when it has none.
func (n *node) get(name string) *node {
	for _, m := range n.members {
		if m.name == name {
			return m.value
		}
	}
	return nil
}

// maxNesting bounds how deeply a rule's JSON may nest: far above any valid
// rule (expressions nest at most 6 deep, §4), so that a hostile document
// is refused before it costs stack.
const maxNesting = 64

// errDuplicateName is a name given twice in one object: JSON leaves it
// undefined and RFC 8785 refuses it, so a rule may not have one.
var errDuplicateName = errors.New("a name is given more than once in one object")

// decodeNode reads one JSON value, all of data.
func decodeNode(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return n, nil
}

// readNode reads the next value of dec.
func readNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("nested more than %d levels", maxNesting)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: jNull}, nil
	case bool:
		return &node{kind: jBool, boolean: t}, nil
	case json.Number:
		return &node{kind: jNumber, str: string(t)}, nil
	case string:
		return &node{kind: jString, str: t}, nil
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: jObject}
			seen := map[string]bool{}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("not JSON: %w", err)
				}
				name := tok.(string) // the decoder gives only names here
				if seen[name] {
					return nil, fmt.Errorf("%w: %q", errDuplicateName, name)
				}
				seen[name] = true
				v, err := readNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{name, v})
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &node{kind: jArray}
			for dec.More() {
				v, err := readNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
	}
	return nil, fmt.Errorf("not JSON: unexpected %v", tok)
}

// appendJSON writes n as compact JSON, members in their order.
func (n *node) appendJSON(b []byte) []byte {
	switch n.kind {
	case jNull:
		return append(b, "null"...)
	case jBool:
		if n.boolean {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case jNumber:
		return append(b, n.str...)
	case jString:
		s, _ := json.Marshal(n.str) // a string always marshals
		return append(b, s...)
	case jObject:
		b = append(b, '{')
		for i, m := range n.members {
			if i > 0 {
				b = append(b, ',')
			}
			s, _ := json.Marshal(m.name)
			b = append(b, s...)
			b = append(b, ':')
			b = m.value.appendJSON(b)
		}
		return append(b, '}')
	default:
		b = append(b, '[')
		for i, it := range n.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.appendJSON(b)
		}
		return append(b, ']')
	}
}
