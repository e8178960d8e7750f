package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// meterMode is what the meter does with the requests it forwards.
type meterMode int

const (
	// modeOff forwards requests untouched and records nothing.
	modeOff meterMode = iota
	// modeCount asks for ReturnConsumedCapacity TOTAL, records each call
	// with the capacity dynalite reports, and adds no DynamoDB round trip:
	// the functions' wall times stay what they are behind a plain proxy.
	modeCount
	// modeAccount also computes DynamoDB's units from item sizes, which
	// takes extra reads (of the full items behind a projection, of a
	// written item before and after): wall times are not meaningful then.
	modeAccount
)

// call is one DynamoDB request seen by the meter.
type call struct {
	Op, Table string
	// Dynalite is the capacity dynalite reported.
	Dynalite capacity
	// DDB is the capacity by DynamoDB's rules (modeAccount only, and only
	// when Accounted).
	DDB       capacity
	Accounted bool
	// ItemBytes is what was billed: the bytes of the items read, or the
	// larger of the item before and after a write.
	ItemBytes int
	// PutBytes is the size of the item a PutItem writes.
	PutBytes int
	// ErrType is the DynamoDB error type of a failed call, e.g.
	// ConditionalCheckFailedException.
	ErrType string
}

// meter is a reverse proxy in front of the local DynamoDB that measures
// every call at the wire. dynalite does not check signatures, so the
// request body can be changed (to ask for the consumed capacity).
type meter struct {
	// URL is the meter's address, to use as DYNAMODB_ENDPOINT.
	URL    string
	target string
	// keys maps each table to its key attribute names.
	keys   map[string][]string
	client *http.Client
	srv    *http.Server

	mu    sync.Mutex
	mode  meterMode
	calls []call
	err   error // the first accounting failure
}

// startMeter starts a meter in front of the DynamoDB at endpoint. keys
// gives each table's key attributes, to read an item before it is written.
func startMeter(endpoint string, keys map[string][]string) (*meter, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("meter: %w", err)
	}
	m := &meter{
		URL:    "http://" + l.Addr().String(),
		target: strings.TrimRight(endpoint, "/"),
		keys:   keys,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}},
	}
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(l)
	return m, nil
}

// close stops the meter.
func (m *meter) close() {
	m.srv.Close()
	m.client.CloseIdleConnections()
}

// setMode changes what the meter does from the next request on, and
// forgets the calls recorded so far.
func (m *meter) setMode(md meterMode) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mode, m.calls = md, nil
}

// take returns the calls recorded since the last take (or setMode) and the
// first accounting error, and forgets both.
func (m *meter) take() ([]call, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	calls, err := m.calls, m.err
	m.calls, m.err = nil, nil
	return calls, err
}

// ServeHTTP forwards one DynamoDB request and, unless the meter is off,
// records it.
func (m *meter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	md := m.mode
	m.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	var req map[string]json.RawMessage
	if md != modeOff && json.Unmarshal(body, &req) == nil {
		if rc := jsonString(req["ReturnConsumedCapacity"]); rc == "" || rc == "NONE" {
			req["ReturnConsumedCapacity"] = json.RawMessage(`"TOTAL"`)
			body, _ = json.Marshal(req)
		}
	} else {
		md = modeOff
	}

	c := call{Op: op, Table: jsonString(req["TableName"])}
	var acct *accounting
	var acctErr error
	if md == modeAccount {
		acct, acctErr = m.before(r.Context(), r.Header, op, req)
	}

	status, header, respBody, err := m.forward(r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	// The call is recorded before it is answered: once the function has its
	// answer, its invocation may end and the next one begin.
	if md != modeOff {
		m.record(r, op, req, respBody, c, acct, acctErr)
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	w.Write(respBody)
}

// record completes the call c from the response and records it.
func (m *meter) record(r *http.Request, op string, req map[string]json.RawMessage, respBody []byte, c call, acct *accounting, acctErr error) {
	var err error
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(respBody, &resp); err != nil {
		acctErr = errors.Join(acctErr, fmt.Errorf("%s response: %w", op, err))
	}
	if t := jsonString(resp["__type"]); t != "" {
		c.ErrType = t[strings.LastIndex(t, "#")+1:]
	}
	if c.Dynalite, err = parseConsumed(op, resp["ConsumedCapacity"]); err != nil {
		acctErr = errors.Join(acctErr, err)
	}
	if acct != nil && acctErr == nil {
		acctErr = m.after(r.Context(), r.Header, op, req, resp, acct, &c)
	}
	m.mu.Lock()
	m.calls = append(m.calls, c)
	if acctErr != nil && m.err == nil {
		m.err = fmt.Errorf("meter: %s %s: %w", op, c.Table, acctErr)
	}
	m.mu.Unlock()
}

// forward sends the request with body to the engine and returns its answer.
func (m *meter) forward(r *http.Request, body []byte) (int, http.Header, []byte, error) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, m.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	out.Header = r.Header.Clone()
	resp, err := m.client.Do(out)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

// accounting is what the meter learnt before forwarding a call.
type accounting struct {
	// readBytes is the size of the items a read call reads, when a shadow
	// read had to find it (-1 when the response will tell).
	readBytes int
	// oldBytes is the size of the item a write replaces (0 when none).
	oldBytes int
	// supported is false for the operations the meter does not account.
	supported bool
}

// Request fields that make a read return less than it reads (and bills).
var narrowing = []string{"ProjectionExpression", "AttributesToGet", "Select", "FilterExpression", "QueryFilter", "ScanFilter", "ConditionalOperator"}

// before does the reads that DynamoDB's units of the call need and that its
// own response will not tell: the full items behind a projection, filter
// or count, and the item a write replaces.
func (m *meter) before(ctx context.Context, h http.Header, op string, req map[string]json.RawMessage) (*accounting, error) {
	a := &accounting{readBytes: -1, supported: true}
	switch op {
	case "GetItem", "Query", "Scan":
		narrowed := false
		for _, f := range narrowing {
			_, ok := req[f]
			narrowed = narrowed || ok
		}
		if !narrowed {
			return a, nil
		}
		shadow := clone(req)
		for _, f := range append(narrowing, "ReturnConsumedCapacity") {
			delete(shadow, f)
		}
		pruneExpressionNames(shadow)
		resp, err := m.dynamo(ctx, h, op, shadow)
		if err != nil {
			return nil, err
		}
		a.readBytes, err = responseBytes(resp)
		return a, err
	case "PutItem", "UpdateItem", "DeleteItem":
		old, err := m.current(ctx, h, req)
		if err != nil {
			return nil, err
		}
		a.oldBytes = old
		return a, nil
	}
	a.supported = false
	return a, nil
}

// after completes c with DynamoDB's units once the call has been answered.
func (m *meter) after(ctx context.Context, h http.Header, op string, req, resp map[string]json.RawMessage, a *accounting, c *call) error {
	if !a.supported {
		return nil
	}
	failed := c.ErrType != ""
	condFailed := c.ErrType == "ConditionalCheckFailedException"
	switch op {
	case "GetItem", "Query", "Scan":
		if failed {
			c.Accounted = true
			return nil
		}
		n := a.readBytes
		if n < 0 {
			var err error
			if n, err = responseBytes(resp); err != nil {
				return err
			}
		}
		consistent := string(req["ConsistentRead"]) == "true"
		c.ItemBytes, c.DDB, c.Accounted = n, capacity{Read: readUnits(n, consistent)}, true
	case "PutItem", "UpdateItem", "DeleteItem":
		newBytes := 0
		if op == "PutItem" {
			var item map[string]json.RawMessage
			if err := json.Unmarshal(req["Item"], &item); err != nil {
				return fmt.Errorf("PutItem Item: %w", err)
			}
			n, err := itemSize(item)
			if err != nil {
				return err
			}
			c.PutBytes, newBytes = n, n
		}
		if op == "UpdateItem" && !failed {
			n, err := m.current(ctx, h, req)
			if err != nil {
				return err
			}
			newBytes = n
		}
		switch {
		case condFailed: // billed by the item that is there
			c.ItemBytes, c.DDB = a.oldBytes, capacity{Write: writeUnits(a.oldBytes)}
		case failed:
		default:
			c.ItemBytes = max(a.oldBytes, newBytes)
			c.DDB = capacity{Write: writeUnits(c.ItemBytes)}
		}
		c.Accounted = true
	}
	return nil
}

// current returns the size of the item a write request names (its Key, or
// the key attributes of its Item), 0 when there is none, with a strongly
// consistent GetItem.
func (m *meter) current(ctx context.Context, h http.Header, req map[string]json.RawMessage) (int, error) {
	table := jsonString(req["TableName"])
	key := req["Key"]
	if key == nil {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(req["Item"], &item); err != nil {
			return 0, fmt.Errorf("the request item: %w", err)
		}
		names, ok := m.keys[table]
		if !ok {
			return 0, fmt.Errorf("no key schema for table %s", table)
		}
		k := map[string]json.RawMessage{}
		for _, n := range names {
			k[n] = item[n]
		}
		key, _ = json.Marshal(k)
	}
	resp, err := m.dynamo(ctx, h, "GetItem", map[string]json.RawMessage{
		"TableName": req["TableName"], "Key": key, "ConsistentRead": json.RawMessage("true")})
	if err != nil {
		return 0, err
	}
	return responseBytes(resp)
}

// dynamo makes one DynamoDB call of its own (a shadow call, not recorded),
// with the credentials headers of the request it serves.
func (m *meter) dynamo(ctx context.Context, h http.Header, op string, req map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	body, _ := json.Marshal(req)
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, m.target+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
		if v := h.Get(k); v != "" {
			r.Header.Set(k, v)
		}
	}
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	resp, err := m.client.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("shadow %s: status %d: %s", op, resp.StatusCode, b)
	}
	var out map[string]json.RawMessage
	return out, json.Unmarshal(b, &out)
}

// responseBytes returns the size of the Item or Items of a response.
func responseBytes(resp map[string]json.RawMessage) (int, error) {
	var items []map[string]json.RawMessage
	if raw, ok := resp["Item"]; ok {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(raw, &item); err != nil {
			return 0, err
		}
		items = append(items, item)
	}
	if raw, ok := resp["Items"]; ok {
		var more []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &more); err != nil {
			return 0, err
		}
		items = append(items, more...)
	}
	n := 0
	for _, it := range items {
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
		for _, p := range placeholder.FindAllString(jsonString(req[f]), -1) {
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

// jsonString returns raw as a string, "" when it is not one.
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func clone(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
