package storetest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"

	"stampduty/shared/testkit/samtemplate"
)

// Account mode: each call's units by DynamoDB's rules (capacity.go), with
// the reads its own answer does not tell.

// Schema is what the proxy must know of a table to account its writes:
// its key attribute names (the partition key first), and its secondary
// indexes.
type Schema struct {
	Keys    []string
	Indexes []Index
}

// Index is a secondary index: its name, its key attribute names (the
// partition key first) and what it projects: every attribute when All
// (ALL), else the keys (the table's and its own) and Include (KEYS_ONLY,
// INCLUDE), so that a write rewrites its entry only when it changes one of
// those.
type Index struct {
	Name    string
	Keys    []string
	All     bool
	Include []string
}

// Schemas returns the schema of each table of tmpl under its name in names
// (its logical id when names has none).
func Schemas(tmpl *samtemplate.Template, names map[string]string) map[string]Schema {
	out := map[string]Schema{}
	for _, tb := range tmpl.Tables {
		var sc Schema
		for _, k := range tb.KeySchema {
			sc.Keys = append(sc.Keys, k.Name)
		}
		for _, ix := range append(slices.Clone(tb.GlobalIndexes), tb.LocalIndexes...) {
			x := Index{Name: ix.Name, All: ix.ProjectionType != "KEYS_ONLY" && ix.ProjectionType != "INCLUDE", Include: ix.NonKeyAttributes}
			for _, k := range ix.KeySchema {
				x.Keys = append(x.Keys, k.Name)
			}
			sc.Indexes = append(sc.Indexes, x)
		}
		out[cmp.Or(names[tb.LogicalID], tb.LogicalID)] = sc
	}
	return out
}

// accounting is what the proxy learnt before forwarding a call: the size
// of the items a read reads, when a shadow read had to find it (-1 when the
// answer will tell), and the item a write replaces (nil, 0 when none).
type accounting struct {
	readBytes, oldBytes int
	old                 map[string]any
}

// Request fields that make a read return less than it reads (and bills).
var narrowing = []string{"ProjectionExpression", "AttributesToGet", "Select", "FilterExpression", "QueryFilter", "ScanFilter", "ConditionalOperator"}

// before does the reads that DynamoDB's units of the call need and that its
// own response will not tell: the full items behind a projection, filter
// or count, and the item a write replaces. It returns nil for the
// operations the proxy does not account.
func (p *Proxy) before(ctx context.Context, h http.Header, c ProxyCall, req map[string]json.RawMessage) (*accounting, error) {
	a := &accounting{readBytes: -1}
	switch c.Operation {
	case "GetItem", "Query", "Scan":
		if !slices.ContainsFunc(narrowing, func(f string) bool { return req[f] != nil }) {
			return a, nil
		}
		shadow := maps.Clone(req)
		for _, f := range append(narrowing, "ReturnConsumedCapacity") {
			delete(shadow, f)
		}
		pruneExpressionNames(shadow)
		body, err := p.dynamo(ctx, h, c.Operation, shadow)
		if err != nil {
			return nil, err
		}
		a.readBytes, err = responseBytes(body)
		return a, err
	case "BatchGetItem": // the answer tells
		return a, nil
	case "PutItem", "UpdateItem", "DeleteItem":
		var err error
		if a.old, err = p.current(ctx, h, c.Table, req); err != nil {
			return nil, err
		}
		a.oldBytes, err = itemSize(a.old)
		return a, err
	}
	return nil, nil
}

// after completes c with DynamoDB's units once the call has been answered
// with body.
func (p *Proxy) after(ctx context.Context, h http.Header, req map[string]json.RawMessage, body []byte, a *accounting, c *ProxyCall) error {
	failed := c.ErrType != ""
	switch c.Operation {
	case "GetItem", "Query", "Scan":
		if failed {
			c.Accounted = true
			return nil
		}
		n := a.readBytes
		if n < 0 {
			var err error
			if n, err = responseBytes(body); err != nil {
				return err
			}
		}
		consistent := string(req["ConsistentRead"]) == "true"
		c.ItemBytes, c.Billed, c.Accounted = n, Capacity{Read: readUnits(n, consistent)}, true
	case "BatchGetItem":
		c.Accounted = true
		if !failed {
			var err error
			c.ItemBytes, c.Billed.Read, err = batchReadUnits(req, body)
			return err
		}
	case "PutItem", "UpdateItem", "DeleteItem":
		var item map[string]any // the item after the write, nil after a delete
		var err error
		switch {
		case c.Operation == "PutItem":
			err = json.Unmarshal(req["Item"], &item)
		case c.Operation == "UpdateItem" && !failed:
			item, err = p.current(ctx, h, c.Table, req)
		}
		newBytes, sizeErr := itemSize(item)
		if err = errors.Join(err, sizeErr); err != nil {
			return fmt.Errorf("the item after the write: %w", err)
		}
		if c.Operation == "PutItem" {
			c.PutBytes = newBytes
		}
		sc := p.tables[c.Table]
		switch {
		case c.ErrType == "ConditionalCheckFailedException": // billed by the item that is there
			c.ItemBytes, c.Billed = a.oldBytes, Capacity{Write: writeUnits(a.oldBytes)}
			there := a.old
			if there == nil {
				there = requestItem(req)
			}
			c.Keys = sc.writes(c.Billed.Write, there, nil)[:1] // no index entry is written
		case failed:
		default:
			c.ItemBytes = max(a.oldBytes, newBytes)
			c.Keys = sc.writes(writeUnits(c.ItemBytes), a.old, item)
			c.Billed = Capacity{Write: writeUnits(c.ItemBytes) + sc.indexUnits(a.old, item)}
		}
		c.Accounted = true
	}
	return nil
}

// batchReadUnits returns the size of the items a BatchGetItem answered
// with body read, and its read units: each key processed is a GetItem of
// its own (its item's size rounded up to 4 KB, at least one unit, halved
// unless consistent); the unprocessed keys cost nothing.
func batchReadUnits(req map[string]json.RawMessage, body []byte) (int, float64, error) {
	var ask map[string]struct {
		Keys           []json.RawMessage
		ConsistentRead bool
	}
	var resp struct {
		Responses       map[string][]map[string]any
		UnprocessedKeys map[string]struct{ Keys []json.RawMessage }
	}
	if err := errors.Join(json.Unmarshal(req["RequestItems"], &ask), json.Unmarshal(body, &resp)); err != nil {
		return 0, 0, fmt.Errorf("BatchGetItem: %w", err)
	}
	bytes, units := 0, 0.0
	for table, r := range ask {
		found := resp.Responses[table]
		for _, it := range found {
			n, err := itemSize(it)
			if err != nil {
				return 0, 0, err
			}
			bytes, units = bytes+n, units+readUnits(n, r.ConsistentRead)
		}
		missing := len(r.Keys) - len(resp.UnprocessedKeys[table].Keys) - len(found)
		units += float64(max(0, missing)) * readUnits(0, r.ConsistentRead)
	}
	return bytes, units, nil
}

// current returns the item a write request names (its Key, or the key
// attributes of its Item), nil when none, with a strongly consistent GetItem.
func (p *Proxy) current(ctx context.Context, h http.Header, table string, req map[string]json.RawMessage) (map[string]any, error) {
	key := req["Key"]
	if key == nil {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(req["Item"], &item); err != nil {
			return nil, fmt.Errorf("the request item: %w", err)
		}
		names := p.tables[table].Keys
		if names == nil {
			return nil, fmt.Errorf("no key schema for table %s", table)
		}
		k := map[string]json.RawMessage{}
		for _, n := range names {
			k[n] = item[n]
		}
		key, _ = json.Marshal(k)
	}
	body, err := p.dynamo(ctx, h, "GetItem", map[string]json.RawMessage{
		"TableName": req["TableName"], "Key": key, "ConsistentRead": json.RawMessage("true")})
	if err != nil {
		return nil, err
	}
	var resp struct{ Item map[string]any }
	return resp.Item, json.Unmarshal(body, &resp)
}

// KeyWrite is the write units a write (or a failed conditional write)
// gave one partition key value: of its table when Index is "", else of
// that index. Key is the value (a string, a number's digits, a binary's
// base64) and Item the table partition key value of the item written, so
// that a reader can tell whose writes meet on a key.
type KeyWrite struct {
	Index, Key, Item string
	Units            float64
}

// requestItem returns the Key a write request names, or its Item.
func requestItem(req map[string]json.RawMessage) map[string]any {
	raw := req["Key"]
	if raw == nil {
		raw = req["Item"]
	}
	var item map[string]any
	json.Unmarshal(raw, &item)
	return item
}

// keyValue returns the scalar value of attribute name of item ("" when it
// has none).
func keyValue(item map[string]any, name string) string {
	v, _ := item[name].(map[string]any)
	for _, t := range []string{"S", "N", "B"} {
		if s, ok := v[t].(string); ok {
			return s
		}
	}
	return ""
}

// writes returns the write units, by partition key value, of a write that
// billed table units to the item and changed it from old to new (nil:
// none): the table's, then each index entry's (indexWrites).
func (sc Schema) writes(table float64, old, new map[string]any) []KeyWrite {
	item := new
	if item == nil {
		item = old
	}
	var pk string
	if len(sc.Keys) > 0 {
		pk = keyValue(item, sc.Keys[0])
	}
	return append([]KeyWrite{{Key: pk, Item: pk, Units: table}}, sc.indexWrites(old, new)...)
}

// indexUnits returns the write units of the index entries a write from old
// to new (nil: none) makes (indexWrites).
func (sc Schema) indexUnits(old, new map[string]any) float64 {
	units := 0.0
	for _, w := range sc.indexWrites(old, new) {
		units += w.Units
	}
	return units
}

// indexWrites returns the index entries a write from old to new (nil:
// none) makes, by DynamoDB's rules: an index holds the items that have all
// its key attributes; a changed entry is written again, one whose index
// key changes is deleted and put (both billed, each to its own key value),
// one that leaves or joins is deleted or put; an unchanged entry writes
// nothing.
func (sc Schema) indexWrites(old, new map[string]any) []KeyWrite {
	if reflect.DeepEqual(old, new) {
		return nil
	}
	item := new
	if item == nil {
		item = old
	}
	var pk string // the item's, in the table
	if len(sc.Keys) > 0 {
		pk = keyValue(item, sc.Keys[0])
	}
	var out []KeyWrite
	for _, ix := range sc.Indexes {
		var projected []string // every attribute when nil
		if !ix.All {
			projected = slices.Concat(sc.Keys, ix.Keys, ix.Include)
		}
		for _, w := range entryWrites(ix.Keys, projected, old, new) {
			w.Index = ix.Name
			w.Item = pk
			out = append(out, w)
		}
	}
	return out
}

// entryWrites returns the writes of one index's entry for a write from
// old to new: its key attribute names are keys (the partition key first),
// and it projects projected (every attribute when nil).
func entryWrites(keys, projected []string, old, new map[string]any) []KeyWrite {
	in := func(item map[string]any) bool {
		return item != nil && !slices.ContainsFunc(keys, func(k string) bool { _, ok := item[k]; return !ok })
	}
	entry := func(item map[string]any) map[string]any {
		if projected == nil || item == nil {
			return item
		}
		e := maps.Clone(item)
		maps.DeleteFunc(e, func(k string, _ any) bool { return !slices.Contains(projected, k) })
		return e
	}
	oldEntry, newEntry := entry(old), entry(new)
	oldBytes, _ := itemSize(oldEntry)
	newBytes, _ := itemSize(newEntry)
	sameKey := !slices.ContainsFunc(keys, func(k string) bool { return !reflect.DeepEqual(old[k], new[k]) })
	if in(old) && in(new) && sameKey {
		if reflect.DeepEqual(oldEntry, newEntry) {
			return nil
		}
		return []KeyWrite{{Key: keyValue(new, keys[0]), Units: writeUnits(max(oldBytes, newBytes))}}
	}
	var out []KeyWrite
	if in(old) {
		out = append(out, KeyWrite{Key: keyValue(old, keys[0]), Units: writeUnits(oldBytes)})
	}
	if in(new) {
		out = append(out, KeyWrite{Key: keyValue(new, keys[0]), Units: writeUnits(newBytes)})
	}
	return out
}

// dynamo makes a shadow DynamoDB call (not recorded), with the headers of
// the request it serves, and returns the body of its answer.
func (p *Proxy) dynamo(ctx context.Context, h http.Header, op string, req map[string]json.RawMessage) ([]byte, error) {
	body, _ := json.Marshal(req)
	out := h.Clone()
	out.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	status, _, b, err := p.forward(ctx, http.MethodPost, "/", out, body)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("shadow %s: status %d: %s", op, status, b)
	}
	return b, err
}

// responseBytes returns the size of the Item or Items of an answer.
func responseBytes(body []byte) (int, error) {
	var resp struct {
		Item  map[string]any
		Items []map[string]any
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return 0, err
	}
	n := 0
	for _, it := range append(resp.Items, resp.Item) {
		s, err := itemSize(it)
		if err != nil {
			return 0, err
		}
		n += s
	}
	return n, nil
}

// placeholder matches #name and :value placeholders of an expression.
var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// pruneExpressionNames drops the ExpressionAttributeNames and
// ExpressionAttributeValues that no remaining expression uses (DynamoDB
// refuses unused ones), and the maps themselves when empty.
func pruneExpressionNames(req map[string]json.RawMessage) {
	used := map[string]bool{}
	for _, f := range []string{"KeyConditionExpression", "FilterExpression", "ProjectionExpression", "ConditionExpression", "UpdateExpression"} {
		for _, p := range placeholder.FindAllString(string(req[f]), -1) { // no placeholder needs unquoting
			used[p] = true
		}
	}
	for _, f := range []string{"ExpressionAttributeNames", "ExpressionAttributeValues"} {
		var m map[string]json.RawMessage
		if json.Unmarshal(req[f], &m) != nil || m == nil {
			continue
		}
		for k := range m {
			if !used[k] {
				delete(m, k)
			}
		}
		if len(m) == 0 {
			delete(req, f)
		} else {
			req[f], _ = json.Marshal(m)
		}
	}
}
