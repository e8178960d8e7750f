package functest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// Main runs a function's tests with the local engines New needs
// (storetest.Main): call it from the package's TestMain.
func Main(m *testing.M) { storetest.Main(m) }

// PDF returns a new copy of a minimal PDF (one empty object, which the
// service takes as a document or a certificate), padded with spaces to
// size bytes when size is larger than it.
func PDF(size int) []byte {
	const minimal = "%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n"
	b := bytes.Repeat([]byte{' '}, max(size, len(minimal)))
	copy(b, minimal)
	return b
}

// Versions returns how many versions and delete markers env's files bucket
// (FilesBucket) holds, by key.
func Versions(t testing.TB, env *storetest.Env) map[string]int {
	t.Helper()
	out := map[string]int{}
	p := s3.NewListObjectVersionsPaginator(env.S3(), &s3.ListObjectVersionsInput{Bucket: aws.String(env.Table("FilesBucket"))})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Versions {
			out[aws.ToString(v.Key)]++
		}
		for _, m := range page.DeleteMarkers {
			out[aws.ToString(m.Key)]++
		}
	}
	return out
}

// Delivery is one request a Receiver got.
type Delivery struct {
	Path, ID  string // the URL path, the event id header (webhooks.HeaderEventID)
	Body      []byte
	Signature string // the webhooks.HeaderSignature header
}

// Answer is how a Receiver answers the n-th request (from 1) to a path.
type Answer func(w http.ResponseWriter, req *http.Request, n int)

// Receiver is a loopback webhook receiver that records what each path
// gets: a path given an Answer (On) answers with it, any other 204.
type Receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     map[string][]Delivery
	answers map[string]Answer
}

// NewReceiver starts a Receiver listening on l (nil: a new loopback port),
// closed when the test ends.
func NewReceiver(t testing.TB, l net.Listener) *Receiver {
	r := &Receiver{got: map[string][]Delivery{}, answers: map[string]Answer{}}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		path := req.URL.Path
		r.mu.Lock()
		r.got[path] = append(r.got[path], Delivery{path, req.Header.Get(webhooks.HeaderEventID), b, req.Header.Get(webhooks.HeaderSignature)})
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
func (r *Receiver) On(path string, a Answer) {
	r.mu.Lock()
	r.answers[path] = a
	r.mu.Unlock()
}

// At returns what path got, in order.
func (r *Receiver) At(path string) []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.got[path]...)
}
