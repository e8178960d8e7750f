package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"stampduty/shared/webhooks"
)

// delivery is one request a receiver got.
type delivery struct {
	Path, ID  string // the URL path, the event id header (webhooks.HeaderEventID)
	Body      []byte
	Signature string // the webhooks.HeaderSignature header
	Header    http.Header
}

// answer is how a receiver answers the n-th request (from 1) to a path.
type answer func(w http.ResponseWriter, req *http.Request, n int)

// receiver is a loopback webhook receiver that records what each path
// gets: a path given an answer (On) answers with it, any other 204.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     map[string][]delivery
	answers map[string]answer
}

// startReceiver starts a receiver listening on l (nil: a new loopback
// port), closed when the test ends.
func startReceiver(t testing.TB, l net.Listener) *receiver {
	r := &receiver{got: map[string][]delivery{}, answers: map[string]answer{}}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		path := req.URL.Path
		r.mu.Lock()
		r.got[path] = append(r.got[path], delivery{path, req.Header.Get(webhooks.HeaderEventID), b, req.Header.Get(webhooks.HeaderSignature), req.Header.Clone()})
		n, a := len(r.got[path]), r.answers[path]
		r.mu.Unlock()
		if a == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		a(w, req, n)
	}))
	if l != nil {
		r.Listener.Close()
		r.Listener = l
	}
	r.Start()
	t.Cleanup(r.Close)
	return r
}

// On makes path answer with a.
func (r *receiver) On(path string, a answer) {
	r.mu.Lock()
	r.answers[path] = a
	r.mu.Unlock()
}

// At returns what path got, in order.
func (r *receiver) At(path string) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got[path]...)
}
