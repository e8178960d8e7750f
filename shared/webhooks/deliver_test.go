package webhooks

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// receiver is a test receiver that counts the connections it accepts and
// the requests it is sent.
type receiver struct {
	*httptest.Server
	conns, closed, requests atomic.Int32
}

// newReceiver starts a receiver serving h, over TLS when tls is set.
func newReceiver(t *testing.T, useTLS bool, h http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		h(w, req)
	}))
	r.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			r.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			r.closed.Add(1)
		}
	}
	if useTLS {
		r.StartTLS()
	} else {
		r.Start()
	}
	t.Cleanup(r.Close)
	return r
}

// port returns the receiver's port.
func (r *receiver) port() string {
	u, _ := url.Parse(r.URL)
	return u.Port()
}

// tlsConfig returns a TLS configuration that trusts the receiver's certificate.
func (r *receiver) tlsConfig() *tls.Config {
	return r.Client().Transport.(*http.Transport).TLSClientConfig
}

// status answers code.
func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

var signedAt = time.Date(2026, 11, 21, 4, 9, 0, 0, time.UTC)

// localDeliverer delivers to the loopback test receivers.
func localDeliverer() Deliverer {
	return Deliverer{Guard: Guard{Local: true}, Now: func() time.Time { return signedAt }}
}

const (
	testSecret  = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA"
	testEventID = "evt_k3v9xq2m7p4r8t1w5y6z0abc"
)

const testBody = `{"id":"evt_k3v9xq2m7p4r8t1w5y6z0abc","type":"order.created"}`

// deliver delivers the test event to u with d.
func deliver(d Deliverer, u string) Result {
	return d.Deliver(context.Background(), Webhook{URL: u, Secret: testSecret}, testEventID, []byte(testBody))
}

// assertFailed fails t unless r is a failure with HTTP status code (0: none)
// that does not disable the webhook.
func assertFailed(t *testing.T, r Result, code int) {
	t.Helper()
	if r.Err == nil {
		t.Fatalf("Deliver succeeded (status %d), want a failure", r.Status)
	}
	if got, want := r.Status, code; got != want {
		t.Errorf("status = %d, want %d (%v)", got, want, r.Err)
	}
	if r.Disabled {
		t.Errorf("Disabled = true, want false (%v)", r.Err)
	}
}

func TestDeliverAnswers(t *testing.T) {
	t.Run("SuccessSignedAndVerifiedByTheReceiver", func(t *testing.T) {
		type seen struct {
			method string
			header http.Header
			body   []byte
		}
		got := make(chan seen, 1)
		rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			got <- seen{r.Method, r.Header.Clone(), b}
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte("thanks"))
		})
		res := deliver(localDeliverer(), rc.URL+"/hooks")
		if res.Err != nil || res.Status != http.StatusAccepted || res.Disabled {
			t.Fatalf("Deliver = %+v, want status 202 and no error", res)
		}
		if got, want := res.Read, int64(len("thanks")); got != want {
			t.Errorf("read %d bytes of a short answer, want all %d", got, want)
		}
		if res.Duration <= 0 {
			t.Errorf("Duration = %s, want it measured", res.Duration)
		}
		s := <-got
		if s.method != http.MethodPost {
			t.Errorf("method = %s, want POST", s.method)
		}
		if string(s.body) != testBody {
			t.Errorf("body = %s, want %s", s.body, testBody)
		}
		for name, want := range map[string]string{
			"Content-Type":       "application/json",
			"Stampduty-Event-Id": testEventID,
			"User-Agent":         UserAgent,
		} {
			if got := s.header.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		if err := Verify(s.header.Get("Stampduty-Signature"), testSecret, s.body, signedAt.Add(time.Minute), 0); err != nil {
			t.Errorf("the receiver cannot verify the signature: %v", err)
		}
		if err := Verify(s.header.Get("Stampduty-Signature"), "whsec_other", s.body, signedAt, 0); err == nil {
			t.Error("the signature verifies under another secret")
		}
	})
	t.Run("OriginalSignedInXSignatureOnly", func(t *testing.T) {
		got := make(chan http.Header, 1)
		rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
			got <- r.Header.Clone()
			w.WriteHeader(http.StatusOK)
		})
		w := Webhook{URL: rc.URL + "/hooks", Secret: testSecret, Format: FormatOriginal}
		if res := localDeliverer().Deliver(context.Background(), w, testEventID, []byte(testBody)); res.Err != nil {
			t.Fatal(res.Err)
		}
		h := <-got
		for name, want := range map[string]string{
			"x-signature":         SignOriginal(testSecret, []byte(testBody)),
			"Content-Type":        "application/json",
			"Stampduty-Event-Id":  testEventID,
			"Stampduty-Signature": "", // the original API's receivers check x-signature alone
		} {
			if got := h.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
	})
	t.Run("AnyTwoHundredIsSuccess", func(t *testing.T) {
		for _, code := range []int{200, 201, 202, 299} {
			if res := deliver(localDeliverer(), newReceiver(t, false, status(code)).URL); res.Err != nil || res.Status != code {
				t.Errorf("answer %d: Deliver = %+v, want success", code, res)
			}
		}
	})
	t.Run("NoConnectionKept", func(t *testing.T) {
		rc := newReceiver(t, false, status(200))
		if res := deliver(localDeliverer(), rc.URL); res.Err != nil {
			t.Fatal(res.Err)
		}
		deadline := time.Now().Add(time.Second)
		for rc.closed.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		if got, want := rc.closed.Load(), int32(1); got != want {
			t.Errorf("receiver saw %d connections closed a second after the delivery, want %d", got, want)
		}
	})
	t.Run("ServerErrorFails", func(t *testing.T) {
		assertFailed(t, deliver(localDeliverer(), newReceiver(t, false, status(500)).URL), 500)
	})
	t.Run("OtherStatusesFail", func(t *testing.T) {
		for _, code := range []int{300, 304, 400, 404, 429, 503} {
			assertFailed(t, deliver(localDeliverer(), newReceiver(t, false, status(code)).URL), code)
		}
	})
	t.Run("GoneDisables", func(t *testing.T) {
		res := deliver(localDeliverer(), newReceiver(t, false, status(http.StatusGone)).URL)
		if !res.Disabled || res.Err == nil || res.Status != http.StatusGone {
			t.Errorf("Deliver = %+v, want 410, an error and Disabled", res)
		}
		if _, o := Record(Event{}, 1, signedAt, signedAt, res); o != Disable {
			t.Errorf("outcome = %s, want disable", o)
		}
	})
	t.Run("OverTLS", func(t *testing.T) {
		rc := newReceiver(t, true, status(200))
		d := localDeliverer()
		d.TLS = rc.tlsConfig()
		if res := deliver(d, rc.URL); res.Err != nil || res.Status != 200 {
			t.Errorf("Deliver = %+v, want success", res)
		}
	})
	t.Run("UntrustedCertificateFails", func(t *testing.T) {
		rc := newReceiver(t, true, status(200))
		res := deliver(localDeliverer(), rc.URL)
		assertFailed(t, res, 0)
		if got, want := rc.requests.Load(), int32(0); got != want {
			t.Errorf("receiver got %d requests, want %d", got, want)
		}
	})
}

func TestDeliverHostileReceivers(t *testing.T) {
	t.Run("HangCutAtTheTimeout", func(t *testing.T) {
		release := make(chan struct{})
		rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) { <-release })
		t.Cleanup(func() { close(release) }) // before the receiver closes
		d := localDeliverer()
		d.Timeout = 50 * time.Millisecond
		start := time.Now()
		res := deliver(d, rc.URL)
		elapsed := time.Since(start)
		assertFailed(t, res, 0)
		if !errors.Is(res.Err, context.DeadlineExceeded) {
			t.Errorf("error = %v, want a deadline exceeded", res.Err)
		}
		if elapsed < d.Timeout || elapsed > d.Timeout+700*time.Millisecond {
			t.Errorf("Deliver took %s with a timeout of %s", elapsed, d.Timeout)
		}
		t.Logf("a hanging receiver cost %s (timeout %s)", elapsed, d.Timeout)
	})
	t.Run("TrickledAnswerCutAtTheTimeout", func(t *testing.T) {
		release := make(chan struct{})
		rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			for {
				select {
				case <-release:
					return
				case <-time.After(5 * time.Millisecond):
				}
				w.Write([]byte("x"))
				w.(http.Flusher).Flush()
			}
		})
		t.Cleanup(func() { close(release) }) // before the receiver closes
		d := localDeliverer()
		d.Timeout = 100 * time.Millisecond
		start := time.Now()
		res := deliver(d, rc.URL)
		if elapsed := time.Since(start); elapsed > d.Timeout+700*time.Millisecond {
			t.Errorf("Deliver took %s with a timeout of %s", elapsed, d.Timeout)
		}
		if res.Err != nil || res.Status != 200 {
			t.Errorf("Deliver = %+v, want success: the 200 came in time", res)
		}
	})
	t.Run("RedirectNotFollowed", func(t *testing.T) {
		other := newReceiver(t, false, status(200))
		for _, code := range []int{301, 302, 303, 307, 308} {
			rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/stolen", code)
			})
			assertFailed(t, deliver(localDeliverer(), rc.URL), code)
		}
		if got, want := other.requests.Load(), int32(0); got != want {
			t.Errorf("the redirect's target got %d requests, want %d", got, want)
		}
	})
	t.Run("TenMegabyteAnswerReadTo64KiB", func(t *testing.T) {
		const size = 10 << 20
		written := make(chan int, 1)
		rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10485760")
			w.WriteHeader(200)
			chunk := make([]byte, 32<<10)
			n := 0
			for n < size {
				k, err := w.Write(chunk)
				n += k
				if err != nil {
					break
				}
				w.(http.Flusher).Flush()
			}
			written <- n
		})
		start := time.Now()
		res := deliver(localDeliverer(), rc.URL)
		elapsed := time.Since(start)
		if res.Err != nil || res.Status != 200 {
			t.Fatalf("Deliver = %+v, want success", res)
		}
		if got, want := res.Read, int64(MaxAnswerBytes); got != want {
			t.Errorf("read %d bytes of the answer, want %d", got, want)
		}
		n := <-written
		if n >= size {
			t.Errorf("the receiver wrote all %d bytes: the connection was not dropped", n)
		}
		t.Logf("a 10 MiB answer: the receiver got %d bytes out (socket buffers included) before the drop; %s", n, elapsed)
	})
	t.Run("EndlessAnswerReturnsAtOnce", func(t *testing.T) {
		rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			chunk := make([]byte, 32<<10)
			for {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		})
		d := localDeliverer()
		start := time.Now()
		res := deliver(d, rc.URL)
		if res.Err != nil || res.Read != MaxAnswerBytes {
			t.Fatalf("Deliver = %+v, want success and %d bytes read", res, MaxAnswerBytes)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("Deliver took %s on an endless answer, want it to stop reading at 64 KiB", elapsed)
		}
	})
	t.Run("HugeHeadersRefused", func(t *testing.T) {
		rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Big", strings.Repeat("a", 100<<10))
			w.WriteHeader(200)
		})
		assertFailed(t, deliver(localDeliverer(), rc.URL), 0)
	})
	t.Run("ConnectionClosedWithoutAnswer", func(t *testing.T) {
		rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		})
		assertFailed(t, deliver(localDeliverer(), rc.URL), 0)
		if got, want := rc.requests.Load(), int32(1); got != want {
			t.Errorf("receiver got %d requests, want %d (no silent resend)", got, want)
		}
	})
	t.Run("ConnectionRefused", func(t *testing.T) {
		rc := newReceiver(t, false, status(200))
		rc.Close() // its port now refuses connections
		res := deliver(localDeliverer(), rc.URL+"/hooks")
		assertFailed(t, res, 0)
		if !errors.Is(res.Err, syscall.ECONNREFUSED) {
			t.Errorf("error = %v, want connection refused", res.Err)
		}
	})
}

func TestDeliverAddresses(t *testing.T) {
	t.Run("ResolvedToLoopbackOnAWSRefusedWithoutConnecting", func(t *testing.T) {
		rc := newReceiver(t, true, status(200))
		d := Deliverer{Guard: Guard{Resolver: &fakeResolver{hosts: map[string][]string{"hooks.example.com": {"127.0.0.1"}}}}, TLS: rc.tlsConfig()}
		res := deliver(d, "https://hooks.example.com:"+rc.port()+"/")
		assertFailed(t, res, 0)
		var b *BlockedError
		if !errors.As(res.Err, &b) || b.Kind != "loopback" {
			t.Errorf("error = %v, want a refused loopback address", res.Err)
		}
		if got, want := rc.conns.Load(), int32(0); got != want {
			t.Errorf("receiver accepted %d connections, want %d", got, want)
		}
	})
	t.Run("RebindingAfterRegistrationRefused", func(t *testing.T) {
		rc := newReceiver(t, false, status(200))
		res := &fakeResolver{hosts: map[string][]string{"receiver.test": {"93.184.215.14"}}}
		d := Deliverer{Guard: Guard{Local: true, Resolver: res}}
		if err := d.CheckURL(context.Background(), "https://receiver.test:"+rc.port()+"/"); err != nil {
			t.Fatalf("registration refused: %v", err)
		}
		res.mu.Lock()
		res.hosts["receiver.test"] = []string{"10.0.0.1"}
		res.mu.Unlock()
		r := deliver(d, "https://receiver.test:"+rc.port()+"/")
		var b *BlockedError
		if !errors.As(r.Err, &b) || b.Kind != "private" {
			t.Errorf("error = %v, want a refused private address", r.Err)
		}
	})
	t.Run("MetadataLiteralRefused", func(t *testing.T) {
		for _, u := range []string{"https://169.254.169.254/latest/meta-data/", "https://[fd00:ec2::254]/", "https://[::ffff:169.254.169.254]/"} {
			r := deliver(Deliverer{}, u)
			var b *BlockedError
			if !errors.As(r.Err, &b) {
				t.Errorf("Deliver(%s) = %v, want a refused address", u, r.Err)
			}
		}
	})
	t.Run("PlainHTTPOnAWSRefused", func(t *testing.T) {
		rc := newReceiver(t, false, status(200))
		res := deliver(Deliverer{}, rc.URL)
		assertFailed(t, res, 0)
		if got, want := rc.conns.Load(), int32(0); got != want {
			t.Errorf("receiver accepted %d connections, want %d", got, want)
		}
	})
	t.Run("LocalPlainHTTPOnlyToLoopback", func(t *testing.T) {
		d := localDeliverer()
		d.Resolver = &fakeResolver{hosts: map[string][]string{"hooks.example.com": {"93.184.215.14"}}}
		r := deliver(d, "http://hooks.example.com:9/")
		var b *BlockedError
		if !errors.As(r.Err, &b) || b.Kind != "public" {
			t.Errorf("error = %v, want plain http to a public address refused", r.Err)
		}
	})
	t.Run("NoProxyInTheTransport", func(t *testing.T) {
		// ProxyFromEnvironment reads the environment once per process, so
		// the test below can miss it; the transport must have no Proxy.
		if p := localDeliverer().client("https").Transport.(*http.Transport).Proxy; p != nil {
			t.Error("the delivery transport has a Proxy function, want none")
		}
	})
	t.Run("NoProxyFromTheEnvironment", func(t *testing.T) {
		proxy := newReceiver(t, false, status(200))
		rc := newReceiver(t, false, status(204))
		t.Setenv("HTTP_PROXY", proxy.URL)
		t.Setenv("HTTPS_PROXY", proxy.URL)
		t.Setenv("NO_PROXY", "")
		d := localDeliverer()
		d.Resolver = &fakeResolver{hosts: map[string][]string{"receiver.test": {"127.0.0.1"}}}
		if res := deliver(d, "http://receiver.test:"+rc.port()+"/"); res.Err != nil || res.Status != 204 {
			t.Errorf("Deliver = %+v, want the receiver's 204", res)
		}
		if got, want := proxy.conns.Load(), int32(0); got != want {
			t.Errorf("the environment's proxy got %d connections, want %d", got, want)
		}
	})
	t.Run("ConnectHookRefusesAtConnectTime", func(t *testing.T) {
		rc := newReceiver(t, false, status(200))
		_, err := Deliverer{}.netDialer("https").DialContext(context.Background(), "tcp", "127.0.0.1:"+rc.port())
		var b *BlockedError
		if !errors.As(err, &b) {
			t.Errorf("dial = %v, want a refused address", err)
		}
		if got, want := rc.conns.Load(), int32(0); got != want {
			t.Errorf("receiver accepted %d connections, want %d", got, want)
		}
		c, err := localDeliverer().netDialer("http").DialContext(context.Background(), "tcp", "127.0.0.1:"+rc.port())
		if err != nil {
			t.Fatalf("local dial to loopback = %v, want a connection", err)
		}
		c.Close()
	})
	t.Run("ConnectHookChecks", func(t *testing.T) {
		// Per guard and scheme, the addresses the connect hook lets through
		// and those it refuses.
		cases := map[string]struct {
			local            bool
			scheme           string
			allowed, refused []string
		}{
			"AWSHTTPSPublicOnly": {scheme: "https",
				allowed: []string{"93.184.215.14:443", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443"},
				refused: []string{"10.0.0.1:443", "127.0.0.1:443", "[::ffff:127.0.0.1]:443", "169.254.169.254:80", "[fd00:ec2::254]:80", "hooks.example.com:443"}},
			"LocalHTTPLoopbackOnly": {local: true, scheme: "http",
				allowed: []string{"127.0.0.1:8080", "[::1]:8080"},
				refused: []string{"93.184.215.14:80"}},
			"LocalHTTPSStillRefusesPrivate": {local: true, scheme: "https",
				refused: []string{"10.0.0.1:443"}},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				d := Deliverer{Guard: Guard{Local: tc.local}}
				for _, address := range tc.allowed {
					if err := d.checkDialed(address, tc.scheme); err != nil {
						t.Errorf("local=%v %s to %s: %v, want allowed", tc.local, tc.scheme, address, err)
					}
				}
				for _, address := range tc.refused {
					if err := d.checkDialed(address, tc.scheme); err == nil {
						t.Errorf("local=%v %s to %s: allowed, want refused", tc.local, tc.scheme, address)
					}
				}
			})
		}
	})
	t.Run("NoSuchHostFails", func(t *testing.T) {
		d := Deliverer{Guard: Guard{Resolver: &fakeResolver{}}}
		assertFailed(t, deliver(d, "https://gone.example.com/"), 0)
	})
	t.Run("BadURLFails", func(t *testing.T) {
		assertFailed(t, deliver(Deliverer{}, "not a url"), 0)
	})
}

// Ensure the test resolver satisfies the interface as net.Resolver does.
var _, _ Resolver = (*fakeResolver)(nil), net.DefaultResolver
