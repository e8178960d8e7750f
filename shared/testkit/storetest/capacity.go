package storetest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Capacity is read and write units.
type Capacity struct{ Read, Write float64 }

// Add returns c + d.
func (c Capacity) Add(d Capacity) Capacity { return Capacity{c.Read + d.Read, c.Write + d.Write} }

// writeOps are the operations whose units are write units.
var writeOps = []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}

// parseConsumed reads the ConsumedCapacity of a response of operation op:
// one object (single-item operations, Query, Scan) or an array (batch and
// transaction operations), absent when not asked for. ReadCapacityUnits and
// WriteCapacityUnits are used when given (DynamoDB gives them); otherwise
// CapacityUnits counts as reads or writes by the operation (dynalite gives
// only CapacityUnits).
func parseConsumed(op string, raw json.RawMessage) (Capacity, error) {
	s := strings.TrimSpace(string(raw))
	if !strings.HasPrefix(s, "[") {
		s = "[" + s + "]" // [] when absent, [null] when null: nothing consumed
	}
	var list []struct{ CapacityUnits, ReadCapacityUnits, WriteCapacityUnits float64 }
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return Capacity{}, fmt.Errorf("ConsumedCapacity: %w", err)
	}
	var c Capacity
	for _, x := range list {
		switch {
		case x.ReadCapacityUnits != 0 || x.WriteCapacityUnits != 0:
			c = c.Add(Capacity{x.ReadCapacityUnits, x.WriteCapacityUnits})
		case slices.Contains(writeOps, op):
			c.Write += x.CapacityUnits
		default:
			c.Read += x.CapacityUnits
		}
	}
	return c, nil
}

// itemSize returns the size of an item in DynamoDB's wire format, decoded
// from JSON ({"name": {"S": "..."}, ...}), by DynamoDB's documented rules:
// the sum over its attributes of the attribute name's UTF-8 bytes plus the
// value's size.
func itemSize(item map[string]any) (int, error) {
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
func valueSize(v any) (int, error) {
	av, ok := v.(map[string]any)
	if !ok || len(av) != 1 {
		return 0, fmt.Errorf("not an attribute value: %.80v", v)
	}
	for typ, x := range av {
		s, _ := x.(string)
		switch typ {
		case "S":
			return len(s), nil
		case "N":
			return numberSize(s), nil
		case "B":
			b, err := base64.StdEncoding.DecodeString(s)
			return len(b), err
		case "BOOL", "NULL":
			return 1, nil
		case "M":
			m, _ := x.(map[string]any)
			n, err := itemSize(m)
			return 3 + len(m) + n, err
		case "SS", "NS", "BS", "L":
			elems, _ := x.([]any)
			n, each := 3, 1 // a list's overhead
			if typ != "L" {
				n, each = 0, 0 // a set's elements are bare S, N or B values
			}
			for _, e := range elems {
				if typ != "L" {
					e = map[string]any{typ[:1]: e}
				}
				s, err := valueSize(e)
				if err != nil {
					return 0, err
				}
				n += each + s
			}
			return n, nil
		}
		return 0, fmt.Errorf("unknown attribute type %s", typ)
	}
	panic("unreachable")
}

// numberSize is DynamoDB's documented size of a number: 1 byte per two
// significant digits (leading and trailing zeros trimmed), plus 1 byte.
func numberSize(s string) int {
	mant, _, _ := strings.Cut(strings.ToLower(s), "e")
	digits := strings.Trim(strings.NewReplacer("-", "", "+", "", ".", "").Replace(mant), "0")
	return (len(digits)+1)/2 + 1
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
