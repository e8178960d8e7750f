package orders_test

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
	"testing"
	"time"
)

// s3Proxy stands between code under test and the S3 server, to stall it as
// a SIGSTOPped server is stalled: while stalled, each request is held for
// the stall's length and then forwarded and applied whatever the client
// did meanwhile (a client that gave up has its PUT stored all the same,
// later). Signatures stay valid: the request goes on with its own Host.
// TestNoOrphanedFiles is its one user.
type s3Proxy struct {
	URL   string       // the proxy's address, to use as an S3 endpoint
	stall atomic.Int64 // how long a request is held, in nanoseconds
	held  sync.WaitGroup
}

// newS3Proxy starts a proxy in front of the S3 server at endpoint. It stops
// with the test.
func newS3Proxy(t *testing.T, endpoint string) *s3Proxy {
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &s3Proxy{}
	srv := httptest.NewServer(&httputil.ReverseProxy{Transport: p, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(func() { p.Wait(); srv.Close() })
	p.URL = srv.URL
	return p
}

// Stall holds every request from now on for d before forwarding it; 0
// forwards at once again.
func (p *s3Proxy) Stall(d time.Duration) { p.stall.Store(int64(d)) }

// Wait returns once every held request has been forwarded and applied.
func (p *s3Proxy) Wait() { p.held.Wait() }

// RoundTrip holds r for the stall, then forwards it whatever its client
// does meanwhile.
func (p *s3Proxy) RoundTrip(r *http.Request) (*http.Response, error) {
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
