package storetest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"stampduty/shared/testkit/samtemplate"
)

// Proxy stands between the code it watches (a test's store or functions,
// the bench's function instances) and a DynamoDB engine: the one place
// DynamoDB calls are observed, so the store carries no hooks. It records
// every call, can answer with a Fault instead of the engine, and measures
// each call's capacity as its Mode says. dynalite does not check
// signatures, so the proxy may change a request body.
type Proxy struct {
	// URL is the proxy's address, to use as DYNAMODB_ENDPOINT.
	URL string

	target, addr string
	tables       map[string]Schema // each table's keys and indexes, by name
	client       *http.Client

	mu    sync.Mutex
	srv   *http.Server // nil while refusing
	mode  Mode
	fault func(ProxyCall) *Fault
	all   []*ProxyCall
	taken int   // how many of all a Take or SetMode has passed
	err   error // the first metering failure
}

// Mode is how much a Proxy measures of the calls it forwards.
type Mode int

const (
	// Record forwards requests as they are and records each call's
	// operation, table and error type.
	Record Mode = iota
	// Meter also asks the engine for each call's consumed capacity
	// (ReturnConsumedCapacity TOTAL), adding no round trip.
	Meter
	// Account also computes each call's units by DynamoDB's rules from item
	// sizes, with extra reads (the full items behind a projection, a
	// written item before and after): wall times mean nothing then.
	Account
)

// ProxyCall is one DynamoDB request seen by a Proxy.
type ProxyCall struct {
	Operation string // e.g. "GetItem"
	Table     string // the table name the request gives
	Index     string // the index a Query or Scan reads, "" for the table
	// ErrType is the DynamoDB error type of a failed call, the engine's or
	// an injected fault's, e.g. "ConditionalCheckFailedException".
	ErrType  string
	Consumed Capacity // what the engine reported (Meter and Account)
	// Billed is the capacity by DynamoDB's rules (Account, when Accounted).
	Billed    Capacity
	Accounted bool
	// ItemBytes is what was billed: the bytes of the items read, or the
	// larger of the item before and after a write (Account).
	ItemBytes int
	PutBytes  int // the size of the item a PutItem writes (Account)
}

// Fault is what a Proxy does with a request instead of forwarding it and
// returning the answer. Without Drop or Delay the request never reaches the
// engine: the proxy answers with an error (Status and Type) or, with Hang,
// not at all until the client gives up. With Drop or Delay the engine
// applies the request and only its answer is lost or late: the case where
// a client cannot know whether its write happened.
type Fault struct {
	Status int    // e.g. 400 or 500
	Type   string // the DynamoDB error type, e.g. "ThrottlingException"
	Hang   bool
	// Drop closes the connection instead of answering.
	Drop bool
	// Delay holds the answer back for Delay, or until the client gives up.
	Delay time.Duration
}

// Schema is what the proxy must know of a table to account its writes:
// its key attribute names, and the key attribute names of its secondary
// indexes, global or local, by what they project.
type Schema struct {
	Keys []string
	// Indexes project every attribute (ALL): an entry is the whole item.
	Indexes [][]string
	// Partial project only some attributes (KEYS_ONLY, INCLUDE): an entry
	// is the item's table and index key attributes and the included ones,
	// so a write rewrites it only when it puts, removes or changes one of
	// them.
	Partial []Partial
}

// Partial is an index that projects the keys (and, for INCLUDE, some more
// attributes) only.
type Partial struct {
	// Keys are the index's key attribute names; Include the other
	// attributes it projects besides the table's keys.
	Keys, Include []string
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
			var keys []string
			for _, k := range ix.KeySchema {
				keys = append(keys, k.Name)
			}
			if ix.ProjectionType == "KEYS_ONLY" || ix.ProjectionType == "INCLUDE" {
				sc.Partial = append(sc.Partial, Partial{Keys: keys, Include: ix.NonKeyAttributes})
			} else {
				sc.Indexes = append(sc.Indexes, keys)
			}
		}
		out[cmp.Or(names[tb.LogicalID], tb.LogicalID)] = sc
	}
	return out
}

// StartProxy starts a proxy forwarding to the DynamoDB engine at target.
// tables gives each table's schema, with which Account finds the item a
// write replaces and the index entries it writes.
func StartProxy(target string, tables map[string]Schema) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &Proxy{
		URL:    "http://" + l.Addr().String(),
		target: strings.TrimRight(target, "/"),
		addr:   l.Addr().String(),
		tables: tables,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}},
	}
	p.serve(l)
	return p, nil
}

// NewProxy starts a proxy in front of e's engine (StartProxy), and makes it
// e's Endpoint, so that Getenv hands it to the functions. It stops with the
// test.
func (e *Env) NewProxy() *Proxy {
	p, err := StartProxy(e.Endpoint, Schemas(e.Template, e.Names))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(p.Close)
	e.Endpoint = p.URL
	return p
}

// serve serves on l; p.mu is held or p not yet shared.
func (p *Proxy) serve(l net.Listener) {
	p.srv = &http.Server{Handler: http.HandlerFunc(p.handle), ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(l)
}

// Close stops the proxy.
func (p *Proxy) Close() {
	p.Refuse(true)
	p.client.CloseIdleConnections()
}

// Refuse closes the proxy's port and every connection to it (connections
// are refused, as when DynamoDB cannot be reached) or, with false, opens it
// again at the same address.
func (p *Proxy) Refuse(refuse bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case refuse && p.srv != nil:
		p.srv.Close()
		p.srv = nil
	case !refuse && p.srv == nil:
		l, err := net.Listen("tcp", p.addr)
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		p.serve(l)
	}
	return nil
}

// SetFault makes the proxy answer with f(call) whenever that is not nil;
// nil restores plain forwarding.
func (p *Proxy) SetFault(f func(ProxyCall) *Fault) {
	p.mu.Lock()
	p.fault = f
	p.mu.Unlock()
}

// SetMode sets what the proxy measures from the next request on, and
// forgets the calls recorded since the last Take and any metering failure.
func (p *Proxy) SetMode(m Mode) {
	p.mu.Lock()
	p.mode, p.taken, p.err = m, len(p.all), nil
	p.mu.Unlock()
}

// Take returns the calls seen since the last Take (or SetMode) and forgets
// them. A call is recorded as it arrives and completed before it is
// answered.
func (p *Proxy) Take() []ProxyCall { return p.since(true) }

// All returns every call the proxy has seen, Take or not.
func (p *Proxy) All() []ProxyCall { return p.since(false) }

// since returns a copy of the calls not taken yet (all of them, unless
// taken), and with take, takes them.
func (p *Proxy) since(take bool) []ProxyCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := 0
	if take {
		from, p.taken = p.taken, len(p.all)
	}
	out := make([]ProxyCall, 0, len(p.all)-from)
	for _, c := range p.all[from:] {
		out = append(out, *c)
	}
	return out
}

// Err returns the first call the proxy failed to measure since the last
// Err or SetMode, and forgets it. Such a call was forwarded and answered
// all the same.
func (p *Proxy) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.err
	p.err = nil
	return err
}

// handle serves one DynamoDB request.
func (p *Proxy) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	var req map[string]json.RawMessage
	var head struct{ TableName, IndexName, ReturnConsumedCapacity string }
	jsonErr := json.Unmarshal(body, &req)
	json.Unmarshal(body, &head)
	rec := &ProxyCall{Operation: op, Table: head.TableName, Index: head.IndexName}
	c := *rec
	p.mu.Lock()
	mode, fault := p.mode, p.fault
	p.all = append(p.all, rec)
	p.mu.Unlock()

	var f *Fault
	if fault != nil {
		f = fault(c)
	}
	if f != nil && !f.Drop && f.Delay == 0 {
		if f.Hang {
			<-r.Context().Done()
			return
		}
		c.ErrType = f.Type
		p.complete(rec, c, nil)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(f.Status)
		json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + f.Type, "message": "injected " + f.Type})
		return
	}

	if jsonErr != nil {
		mode = Record
	}
	if rc := head.ReturnConsumedCapacity; mode >= Meter && (rc == "" || rc == "NONE") {
		req["ReturnConsumedCapacity"] = json.RawMessage(`"TOTAL"`)
		body, _ = json.Marshal(req)
	}
	var acct *accounting
	var measureErr error
	if mode == Account {
		acct, measureErr = p.before(r.Context(), r.Header, c, req)
	}
	ctx := r.Context()
	if f != nil {
		// The engine's work must not depend on the client's patience.
		ctx = context.WithoutCancel(ctx)
	}
	status, header, answer, err := p.forward(ctx, r.Method, r.URL.RequestURI(), r.Header.Clone(), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if err := p.measure(r.Context(), r.Header, mode, req, status, answer, acct, &c); err != nil {
		measureErr = errors.Join(measureErr, err)
	}
	// Completed before it is answered: once the caller has its answer, the
	// next request (or a Take) may come.
	p.complete(rec, c, measureErr)
	if f != nil && !p.late(r, *f) {
		return
	}
	maps.Copy(w.Header(), header)
	w.WriteHeader(status)
	w.Write(answer)
}

// complete records c as the call rec, and err as a metering failure.
func (p *Proxy) complete(rec *ProxyCall, c ProxyCall, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*rec = c
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("proxy: %s %s: %w", c.Operation, c.Table, err)
	}
}

// late carries out a Drop or Delay fault on an answer the engine gave:
// with Drop it closes the connection unanswered; with Delay it waits, and
// reports whether the client is still there to be answered.
func (p *Proxy) late(r *http.Request, f Fault) bool {
	if f.Drop {
		panic(http.ErrAbortHandler) // net/http closes the connection unanswered
	}
	t := time.NewTimer(f.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done(): // the client gave up; nobody is left to answer
		return false
	}
}

// forward sends a request to the engine and returns its answer.
func (p *Proxy) forward(ctx context.Context, method, uri string, h http.Header, body []byte) (int, http.Header, []byte, error) {
	out, err := http.NewRequestWithContext(ctx, method, p.target+uri, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	out.Header = h
	resp, err := p.client.Do(out)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// measure completes c from the engine's answer: its error type and, as
// mode says, its capacity.
func (p *Proxy) measure(ctx context.Context, h http.Header, mode Mode, req map[string]json.RawMessage, status int, body []byte, acct *accounting, c *ProxyCall) error {
	if mode == Record && status == http.StatusOK {
		return nil
	}
	var resp struct {
		Type             string `json:"__type"`
		ConsumedCapacity json.RawMessage
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		if mode == Record {
			return nil
		}
		return fmt.Errorf("%s answer: %w", c.Operation, err)
	}
	if resp.Type != "" {
		c.ErrType = resp.Type[strings.LastIndex(resp.Type, "#")+1:]
	}
	if mode == Record {
		return nil
	}
	var err error
	if c.Consumed, err = parseConsumed(c.Operation, resp.ConsumedCapacity); err != nil || acct == nil {
		return err
	}
	return p.after(ctx, h, req, body, acct, c)
}

// accounting is what the proxy learnt before forwarding a call: the size
// of the items a read reads, when a shadow read had to find it (-1 when the
// answer will tell), and of the item a write replaces (0 when none).
type accounting struct {
	readBytes, oldBytes int
	old                 map[string]any // the item a write replaces, nil when none
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
	case "PutItem", "UpdateItem", "DeleteItem":
		var item map[string]any // the item after the write
		switch {
		case c.Operation == "PutItem":
			if err := json.Unmarshal(req["Item"], &item); err != nil {
				return fmt.Errorf("PutItem Item: %w", err)
			}
		case c.Operation == "UpdateItem" && !failed:
			var err error
			if item, err = p.current(ctx, h, c.Table, req); err != nil {
				return err
			}
		}
		newBytes, err := itemSize(item)
		if err != nil {
			return err
		}
		if c.Operation == "PutItem" {
			c.PutBytes = newBytes
		}
		switch {
		case c.ErrType == "ConditionalCheckFailedException": // billed by the item that is there
			c.ItemBytes, c.Billed = a.oldBytes, Capacity{Write: writeUnits(a.oldBytes)}
		case failed:
		default:
			if c.Operation == "DeleteItem" {
				item = nil
			}
			c.ItemBytes = max(a.oldBytes, newBytes)
			c.Billed = Capacity{Write: writeUnits(c.ItemBytes) + p.tables[c.Table].indexUnits(a.old, item)}
		}
		c.Accounted = true
	}
	return nil
}

// current returns the size of the item a write request names (its Key, or
// the key attributes of its Item), 0 when there is none, with a strongly
// consistent GetItem.
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

// indexUnits returns the write units of the index entries a write makes,
// from the item before and after it (nil when there is none), by DynamoDB's
// rules: an index holds the items that have all its key attributes; an
// entry that changes is written there again (ceil(size / 1 KB), at least
// 1); one whose index key changes is deleted there and put again (both
// billed); one that leaves or joins the index is deleted or put. An
// unchanged entry (an unchanged item; for a KEYS_ONLY or INCLUDE index,
// unchanged keys and included attributes) writes nothing.
func (sc Schema) indexUnits(old, new map[string]any) float64 {
	if reflect.DeepEqual(old, new) {
		return 0
	}
	units := 0.0
	for _, keys := range sc.Indexes {
		units += entryUnits(keys, nil, old, new)
	}
	for _, p := range sc.Partial {
		units += entryUnits(p.Keys, slices.Concat(sc.Keys, p.Keys, p.Include), old, new)
	}
	return units
}

// entryUnits returns the write units of one index's entry, whose key
// attributes are keys and which projects the attributes projected (every
// attribute when nil), for a write from old to new.
func entryUnits(keys, projected []string, old, new map[string]any) float64 {
	in := func(item map[string]any) bool {
		for _, k := range keys {
			if _, ok := item[k]; !ok {
				return false
			}
		}
		return item != nil
	}
	entry := func(item map[string]any) map[string]any {
		if projected == nil || item == nil {
			return item
		}
		e := map[string]any{}
		for _, k := range projected {
			if v, ok := item[k]; ok {
				e[k] = v
			}
		}
		return e
	}
	oldEntry, newEntry := entry(old), entry(new)
	oldBytes, _ := itemSize(oldEntry)
	newBytes, _ := itemSize(newEntry)
	sameKey := true
	for _, k := range keys {
		sameKey = sameKey && reflect.DeepEqual(old[k], new[k])
	}
	units := 0.0
	switch {
	case in(old) && in(new) && sameKey:
		if !reflect.DeepEqual(oldEntry, newEntry) {
			units += writeUnits(max(oldBytes, newBytes))
		}
	default:
		if in(old) {
			units += writeUnits(oldBytes)
		}
		if in(new) {
			units += writeUnits(newBytes)
		}
	}
	return units
}

// dynamo makes one DynamoDB call of its own (a shadow call, not recorded),
// with the credentials headers of the request it serves, and returns the
// body of its answer.
func (p *Proxy) dynamo(ctx context.Context, h http.Header, op string, req map[string]json.RawMessage) ([]byte, error) {
	body, _ := json.Marshal(req)
	out := http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amz-Target": {"DynamoDB_20120810." + op}}
	for _, k := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
		if v := h.Get(k); v != "" {
			out.Set(k, v)
		}
	}
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
