package storetest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// S3Proxy stands between code under test and the S3 server, to stall it as
// a SIGSTOPped server is stalled: while stalled, each request is held for
// the stall's length and then forwarded and applied whatever the client
// did meanwhile (a client that gave up has its PUT stored all the same,
// later). Signatures stay valid: the request goes on with its own Host.
type S3Proxy struct {
	URL   string       // the proxy's address, to use as an S3 endpoint
	stall atomic.Int64 // how long a request is held, in nanoseconds
	held  sync.WaitGroup
}

// NewS3Proxy starts a proxy in front of e's S3 server. It stops with the
// test.
func (e *Env) NewS3Proxy() *S3Proxy {
	target, err := url.Parse(e.S3Endpoint)
	if err != nil {
		e.t.Fatal(err)
	}
	p := &S3Proxy{}
	srv := httptest.NewServer(&httputil.ReverseProxy{Transport: p, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
	}})
	e.t.Cleanup(func() { p.Wait(); srv.Close() })
	p.URL = srv.URL
	return p
}

// Stall holds every request from now on for d before forwarding it; 0
// forwards at once again.
func (p *S3Proxy) Stall(d time.Duration) { p.stall.Store(int64(d)) }

// Wait returns once every held request has been forwarded and applied.
func (p *S3Proxy) Wait() { p.held.Wait() }

// RoundTrip holds r for the stall, then forwards it whatever its client
// does meanwhile.
func (p *S3Proxy) RoundTrip(r *http.Request) (*http.Response, error) {
	p.held.Add(1)
	defer p.held.Done()
	stall := time.Duration(p.stall.Load())
	r = r.WithContext(context.WithoutCancel(r.Context()))
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	time.Sleep(stall)
	return http.DefaultTransport.RoundTrip(r)
}
