package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// ProxyCall is one DynamoDB request seen by a Proxy.
type ProxyCall struct {
	Operation string // e.g. "GetItem"
	Table     string // this test's table name
}

// Fault is what a Proxy does with a request instead of forwarding it and
// returning the answer. Without Drop or Delay the request never reaches the
// engine: the proxy answers with an error (Status and Type), or, with Hang,
// answers nothing until the client gives up. With Drop or Delay the request
// is forwarded and applied by the engine, and only its answer is lost, as
// when a connection breaks or DynamoDB answers late: the case where a
// client cannot know whether its write happened.
type Fault struct {
	Status int    // e.g. 400 or 500
	Type   string // the DynamoDB error type, e.g. "ThrottlingException"
	Hang   bool
	// Drop forwards the request, then closes the connection without
	// answering.
	Drop bool
	// Delay forwards the request, then holds the answer back for Delay (or
	// until the client gives up, whichever is first) before sending it.
	Delay time.Duration
}

// Proxy stands between code under test and the engine: it records every
// DynamoDB operation (from the X-Amz-Target header and the TableName of the
// body) and can answer with a fault instead of forwarding.
type Proxy struct {
	// URL is the proxy's address, to use as DYNAMODB_ENDPOINT.
	URL string

	mu      sync.Mutex
	calls   []ProxyCall
	all     []ProxyCall
	fault   func(ProxyCall) *Fault
	addr    string
	handler http.Handler
	l       net.Listener
}

// NewProxy starts a proxy in front of e's engine, and makes it e's Endpoint,
// so that Getenv hands it to the functions. It stops with the test. It
// serves each request on a new connection, so that Refuse takes effect at
// once.
func (e *Env) NewProxy() *Proxy {
	target, err := url.Parse(e.Endpoint)
	if err != nil {
		e.t.Fatal(err)
	}
	p := &Proxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in struct{ TableName string }
		_ = json.Unmarshal(body, &in)
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		c := ProxyCall{Operation: op, Table: in.TableName}
		p.mu.Lock()
		p.calls = append(p.calls, c)
		p.all = append(p.all, c)
		fault := p.fault
		p.mu.Unlock()
		if fault != nil {
			if f := fault(c); f != nil {
				if f.Drop || f.Delay > 0 {
					forwardLate(rp, w, r, *f)
					return
				}
				if f.Hang {
					<-r.Context().Done()
					return
				}
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(f.Status)
				json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + f.Type, "message": "injected " + f.Type})
				return
			}
		}
		rp.ServeHTTP(w, r)
	})
	if err := p.listen("127.0.0.1:0"); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { p.Refuse(true) })
	p.URL = "http://" + p.addr
	e.Endpoint = p.URL
	return p
}

// forwardLate forwards r to the engine through rp and then, as f says,
// drops the answer (closing the connection unanswered) or sends it late.
func forwardLate(rp http.Handler, w http.ResponseWriter, r *http.Request, f Fault) {
	rec := httptest.NewRecorder()
	// The engine's work must not depend on the client's patience.
	rp.ServeHTTP(rec, r.WithContext(context.WithoutCancel(r.Context())))
	if f.Drop {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
			return
		}
		panic(http.ErrAbortHandler) // closes the connection unanswered too
	}
	t := time.NewTimer(f.Delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done(): // the client gave up; nobody is left to answer
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

func (p *Proxy) listen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p.handler}
	srv.SetKeepAlivesEnabled(false)
	p.mu.Lock()
	p.l, p.addr = l, l.Addr().String()
	p.mu.Unlock()
	go srv.Serve(l)
	return nil
}

// Refuse closes the proxy's port (connections are refused, as when
// DynamoDB cannot be reached) or, with false, opens it again at the same
// address.
func (p *Proxy) Refuse(refuse bool) error {
	p.mu.Lock()
	l := p.l
	p.mu.Unlock()
	if refuse {
		if l != nil {
			l.Close()
			p.mu.Lock()
			p.l = nil
			p.mu.Unlock()
		}
		return nil
	}
	if l != nil {
		return nil
	}
	return p.listen(p.addr)
}

// SetFault makes the proxy answer with f(call) whenever that is not nil;
// nil restores plain forwarding.
func (p *Proxy) SetFault(f func(ProxyCall) *Fault) {
	p.mu.Lock()
	p.fault = f
	p.mu.Unlock()
}

// Take returns the calls seen so far and forgets them.
func (p *Proxy) Take() []ProxyCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.calls
	p.calls = nil
	return out
}

// All returns every call the proxy has seen, Take or not.
func (p *Proxy) All() []ProxyCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProxyCall(nil), p.all...)
}

// Operations renders calls as a sorted "Operation:LogicalTable=count" list,
// like Env.Summary.
func (e *Env) Operations(calls []ProxyCall) string {
	var cs []callLike
	for _, c := range calls {
		cs = append(cs, callLike{c.Operation, c.Table})
	}
	return e.summary(cs)
}

// Used returns, per logical table, the set of operations seen in calls.
func (e *Env) Used(calls []ProxyCall) map[string]map[string]bool {
	logical := map[string]string{}
	for id, n := range e.Names {
		logical[n] = id
	}
	out := map[string]map[string]bool{}
	for _, c := range calls {
		id := logical[c.Table]
		if out[id] == nil {
			out[id] = map[string]bool{}
		}
		out[id][c.Operation] = true
	}
	return out
}

// T returns the test the Env belongs to.
func (e *Env) T() testing.TB { return e.t }
