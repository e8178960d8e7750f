package storetest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Capacity is read and write units.
type Capacity struct{ Read, Write float64 }

// Add returns c + d.
func (c Capacity) Add(d Capacity) Capacity { return Capacity{c.Read + d.Read, c.Write + d.Write} }

// isWriteOp reports the operations whose units are write units.
func isWriteOp(op string) bool {
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		return true
	}
	return false
}

// consumed is one ConsumedCapacity element of a DynamoDB response.
type consumed struct {
	TableName          string
	CapacityUnits      *float64
	ReadCapacityUnits  *float64
	WriteCapacityUnits *float64
}

// parseConsumed reads the ConsumedCapacity of a response of operation op:
// one object (single-item operations, Query, Scan) or an array (batch and
// transaction operations), absent when not asked for. ReadCapacityUnits and
// WriteCapacityUnits are used when given (DynamoDB gives them); otherwise
// CapacityUnits counts as reads or writes by the operation (dynalite gives
// only CapacityUnits).
func parseConsumed(op string, raw json.RawMessage) (Capacity, error) {
	var list []consumed
	switch s := strings.TrimSpace(string(raw)); {
	case s == "" || s == "null":
		return Capacity{}, nil
	case strings.HasPrefix(s, "["):
		if err := json.Unmarshal(raw, &list); err != nil {
			return Capacity{}, fmt.Errorf("ConsumedCapacity: %w", err)
		}
	default:
		var one consumed
		if err := json.Unmarshal(raw, &one); err != nil {
			return Capacity{}, fmt.Errorf("ConsumedCapacity: %w", err)
		}
		list = []consumed{one}
	}
	var c Capacity
	for _, x := range list {
		if x.ReadCapacityUnits != nil || x.WriteCapacityUnits != nil {
			c = c.Add(Capacity{deref(x.ReadCapacityUnits), deref(x.WriteCapacityUnits)})
			continue
		}
		if isWriteOp(op) {
			c.Write += deref(x.CapacityUnits)
		} else {
			c.Read += deref(x.CapacityUnits)
		}
	}
	return c, nil
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// itemSize returns the size of an item in DynamoDB's wire format
// ({"name": {"S": "..."}, ...}) by DynamoDB's documented rules: the sum over
// its attributes of the attribute name's UTF-8 bytes plus the value's size.
func itemSize(item map[string]json.RawMessage) (int, error) {
	n := 0
	for name, v := range item {
		s, err := valueSize(v)
		if err != nil {
			return 0, fmt.Errorf("attribute %s: %w", name, err)
		}
		n += len(name) + s
	}
	return n, nil
}

// valueSize returns the size of one attribute value by DynamoDB's rules:
// strings and binaries their bytes (UTF-8 for strings), numbers 1 byte per
// two significant digits plus 1, null and booleans 1, sets the sum of their
// elements, lists and maps 3 bytes plus 1 byte and the size of each element
// (a map element's size includes its name).
func valueSize(raw json.RawMessage) (int, error) {
	var av map[string]json.RawMessage
	if err := json.Unmarshal(raw, &av); err != nil || len(av) != 1 {
		return 0, fmt.Errorf("not an attribute value: %.80s", raw)
	}
	for typ, v := range av {
		switch typ {
		case "S":
			var s string
			err := json.Unmarshal(v, &s)
			return len(s), err
		case "N":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return 0, err
			}
			return numberSize(s), nil
		case "B":
			b, err := decodeBinary(v)
			return len(b), err
		case "BOOL", "NULL":
			return 1, nil
		case "SS", "NS", "BS":
			var elems []string
			if err := json.Unmarshal(v, &elems); err != nil {
				return 0, err
			}
			n := 0
			for _, e := range elems {
				switch typ {
				case "SS":
					n += len(e)
				case "NS":
					n += numberSize(e)
				case "BS":
					b, err := base64.StdEncoding.DecodeString(e)
					if err != nil {
						return 0, err
					}
					n += len(b)
				}
			}
			return n, nil
		case "L":
			var elems []json.RawMessage
			if err := json.Unmarshal(v, &elems); err != nil {
				return 0, err
			}
			n := 3
			for _, e := range elems {
				s, err := valueSize(e)
				if err != nil {
					return 0, err
				}
				n += 1 + s
			}
			return n, nil
		case "M":
			var m map[string]json.RawMessage
			if err := json.Unmarshal(v, &m); err != nil {
				return 0, err
			}
			s, err := itemSize(m)
			return 3 + len(m) + s, err
		}
		return 0, fmt.Errorf("unknown attribute type %s", typ)
	}
	panic("unreachable")
}

func decodeBinary(v json.RawMessage) ([]byte, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(s)
}

// numberSize is DynamoDB's documented size of a number: 1 byte per two
// significant digits (leading and trailing zeros trimmed), plus 1 byte.
func numberSize(s string) int {
	mant, _, _ := strings.Cut(strings.ToLower(s), "e")
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, mant)
	digits = strings.Trim(digits, "0")
	if digits == "" {
		return 1
	}
	return (utf8.RuneCountInString(digits)+1)/2 + 1
}

// readUnits is DynamoDB's read units for one read call that reads bytes
// in all (every item read, whatever the projection or filter): one unit per
// 4 KB started, at least one even when nothing is found, halved when
// eventually consistent.
func readUnits(bytes int, consistent bool) float64 {
	u := max(1, math.Ceil(float64(bytes)/4096))
	if !consistent {
		u /= 2
	}
	return u
}

// writeUnits is DynamoDB's write units for one item write: one per 1 KB
// started of the larger of the item before and after, at least one (also
// when its condition fails).
func writeUnits(bytes int) float64 {
	return max(1, math.Ceil(float64(bytes)/1024))
}
