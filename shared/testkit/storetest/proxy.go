package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy stands between the code it watches and a DynamoDB engine, at URL:
// the one place DynamoDB calls are observed, so the store carries no
// hooks. It records every call, can answer with a Fault instead of the
// engine, and measures each call's capacity as its Mode says. dynalite
// does not check signatures, so the proxy may change a request body.
type Proxy struct {
	URL string

	target string
	tables map[string]Schema // each table's keys and indexes, by name
	client *http.Client

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
	// Record records each call's operation, table and error type.
	Record Mode = iota
	// Meter also asks the engine for each call's consumed capacity.
	Meter
	// Account also computes each call's units by DynamoDB's rules, with
	// extra reads (the full items behind a projection, a written item
	// before and after): wall times mean nothing then.
	Account
)

// ProxyCall is one DynamoDB request seen by a Proxy: its operation, table
// and index (of a Query or Scan), the error type of a failed call (the
// engine's or a fault's), the capacity the engine reported (Meter,
// Account) and, when Accounted, the capacity by DynamoDB's rules (Billed)
// for ItemBytes (the items read, or the larger of the item before and
// after a write), and the size of the item a PutItem writes.
//
// Keys breaks an accounted write's units down by partition key value: the
// table's, then each index entry's (a failed conditional write bills the
// table's key only).
//
// Attempt is the SDK's attempt number for the request (its amz-sdk-request
// header: 1 for the first, 2 and 3 for its retries; 0 when a client sends
// none). A retry is the SDK sending the same request again after an error
// or an attempt that ran past its timeout, as a loaded machine makes happen
// now and then: a call all the same, billed as one, but not one more
// request of the code's.
type ProxyCall struct {
	Operation, Table, Index, ErrType string
	Attempt                          int
	Consumed, Billed                 Capacity
	Accounted                        bool
	ItemBytes, PutBytes              int
	Keys                             []KeyWrite
}

// Fault is what a Proxy does with a request instead of forwarding it and
// returning the answer. Without Drop or Delay the request never reaches the
// engine: the proxy answers with an error (Status and Type) or, with Hang,
// not at all until the client gives up. With Drop (close the connection)
// or Delay (answer late, or when the client gives up) the engine applies
// the request and only its answer is lost or late: the case where a
// client cannot know whether its write happened.
type Fault struct {
	Status int    // e.g. 400 or 500
	Type   string // the DynamoDB error type, e.g. "ThrottlingException"
	Hang   bool
	Drop   bool
	Delay  time.Duration
}

// StartProxy starts a proxy forwarding to the DynamoDB engine at target;
// tables gives the schemas Account needs (Schemas).
func StartProxy(target string, tables map[string]Schema) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &Proxy{URL: "http://" + l.Addr().String(), target: strings.TrimRight(target, "/"), tables: tables,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}}
	p.serve(l)
	return p, nil
}

// NewProxy starts a proxy in front of e's engine and makes it e's
// Endpoint, so that Getenv hands it to the functions. It stops with the
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

// serve serves on l; p.mu is held, or p not yet shared.
func (p *Proxy) serve(l net.Listener) {
	p.srv = &http.Server{Handler: http.HandlerFunc(p.handle), ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(l)
}

// Close stops the proxy.
func (p *Proxy) Close() {
	p.Refuse(true)
	p.client.CloseIdleConnections()
}

// Refuse closes the proxy's port and every connection to it (as when
// DynamoDB cannot be reached) or, with false, opens it again at the same
// address.
func (p *Proxy) Refuse(refuse bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case refuse && p.srv != nil:
		p.srv.Close()
		p.srv = nil
	case !refuse && p.srv == nil:
		l, err := net.Listen("tcp", strings.TrimPrefix(p.URL, "http://"))
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
// take), and with take, takes them.
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

// Err returns and forgets the first failure to measure a call since the
// last Err or SetMode (the call was answered all the same).
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
	var head struct {
		TableName, IndexName, ReturnConsumedCapacity string
		RequestItems                                 map[string]json.RawMessage // of a batch
	}
	jsonErr := json.Unmarshal(body, &req)
	json.Unmarshal(body, &head)
	rec := &ProxyCall{Operation: op, Table: head.TableName, Index: head.IndexName, Attempt: attempt(r.Header)}
	for t := range head.RequestItems { // a batch of one table is that table's
		if len(head.RequestItems) == 1 {
			rec.Table = t
		}
	}
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
	if f != nil && !late(r, *f) {
		return
	}
	maps.Copy(w.Header(), header)
	w.WriteHeader(status)
	w.Write(answer)
}

// attempt returns the attempt number the AWS SDK writes into a request's
// amz-sdk-request header ("attempt=2; max=3"), or 0 without one.
func attempt(h http.Header) int {
	for part := range strings.SplitSeq(h.Get("amz-sdk-request"), ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "attempt="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
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

// late carries out a Drop or Delay fault on the engine's answer, and
// reports whether the client is still there to be answered.
func late(r *http.Request, f Fault) bool {
	if f.Drop {
		panic(http.ErrAbortHandler) // net/http closes the connection unanswered
	}
	t := time.NewTimer(f.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
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
