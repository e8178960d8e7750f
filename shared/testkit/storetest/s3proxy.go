package storetest

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// S3Proxy stands between code under test and the S3 server, to stall it as
// a SIGSTOPped server is stalled: while stalled, each request is held for
// the stall's length and then forwarded and applied whatever the client
// did meanwhile (a client that gave up has its PUT stored all the same,
// later). Signatures stay valid: the request goes on with its own Host.
type S3Proxy struct {
	// URL is the proxy's address, to use as an S3 endpoint.
	URL    string
	target string
	srv    *http.Server
	client *http.Client

	mu    sync.Mutex
	stall time.Duration
	held  sync.WaitGroup
}

// NewS3Proxy starts a proxy in front of e's S3 server. It stops with the
// test.
func (e *Env) NewS3Proxy() *S3Proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	p := &S3Proxy{URL: "http://" + l.Addr().String(), target: strings.TrimRight(e.S3Endpoint, "/"),
		client: &http.Client{}}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.handle), ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(l)
	e.t.Cleanup(func() { p.Wait(); p.srv.Close() })
	return p
}

// Stall holds every request from now on for d before forwarding it; 0
// forwards at once again.
func (p *S3Proxy) Stall(d time.Duration) {
	p.mu.Lock()
	p.stall = d
	p.mu.Unlock()
}

// Wait returns once every held request has been forwarded and applied.
func (p *S3Proxy) Wait() { p.held.Wait() }

func (p *S3Proxy) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	p.mu.Lock()
	stall := p.stall
	p.held.Add(1)
	p.mu.Unlock()
	type answer struct {
		status int
		header http.Header
		body   []byte
	}
	done := make(chan answer, 1)
	go func() {
		defer p.held.Done()
		time.Sleep(stall)
		// Applied whatever the client does meanwhile.
		req, err := http.NewRequestWithContext(context.Background(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			done <- answer{status: http.StatusBadGateway}
			return
		}
		req.Header = r.Header.Clone()
		req.Host = r.Host
		req.ContentLength = int64(len(body))
		resp, err := p.client.Do(req)
		if err != nil {
			done <- answer{status: http.StatusBadGateway}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- answer{resp.StatusCode, resp.Header, b}
	}()
	select {
	case a := <-done:
		maps.Copy(w.Header(), a.header)
		w.WriteHeader(a.status)
		w.Write(a.body)
	case <-r.Context().Done():
	}
}
