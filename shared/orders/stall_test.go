package orders_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// s3Proxy stands between code under test and the S3 server, to stall it as
// a SIGSTOPped server is stalled: while stalled, each request is held for
// the stall's length and then forwarded and applied whatever the client
// did meanwhile (a client that gave up has its PUT stored all the same,
// later). Signatures stay valid: the request goes on with its own Host.
// TestNoOrphanedFiles is its one user.
//
// Not httputil.ReverseProxy: its ServeHTTP stays with the client's
// connection until the forwarded request is answered, where a stalled
// server's client gives up and goes; under -race that version was reported
// racing with the uploads it held (TestNoOrphanedFiles/S3StalledDuringAPut).
type s3Proxy struct {
	URL    string // the proxy's address, to use as an S3 endpoint
	target string

	mu    sync.Mutex
	stall time.Duration
	held  sync.WaitGroup
}

// newS3Proxy starts a proxy in front of the S3 server at endpoint. It stops
// with the test.
func newS3Proxy(t *testing.T, endpoint string) *s3Proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &s3Proxy{URL: "http://" + l.Addr().String(), target: strings.TrimRight(endpoint, "/")}
	srv := &http.Server{Handler: http.HandlerFunc(p.handle), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { p.Wait(); srv.Close() })
	return p
}

// Stall holds every request from now on for d before forwarding it; 0
// forwards at once again.
func (p *s3Proxy) Stall(d time.Duration) {
	p.mu.Lock()
	p.stall = d
	p.mu.Unlock()
}

// Wait returns once every held request has been forwarded and applied.
func (p *s3Proxy) Wait() { p.held.Wait() }

// handle holds r for the stall, then forwards it in the background, and
// answers the client if it is still there.
func (p *s3Proxy) handle(w http.ResponseWriter, r *http.Request) {
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
		req, err := http.NewRequestWithContext(context.Background(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			done <- answer{status: http.StatusBadGateway}
			return
		}
		req.Header, req.Host, req.ContentLength = r.Header.Clone(), r.Host, int64(len(body))
		resp, err := http.DefaultClient.Do(req)
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
