package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Timeout is the longest a delivery may take, from connecting to reading
// the answer.
const Timeout = 10 * time.Second

// MaxAnswerBytes is how much of a receiver's answer body is read at most;
// the connection is then dropped. Its headers are bounded likewise.
const MaxAnswerBytes = 64 << 10

// UserAgent is the User-Agent of deliveries.
const UserAgent = "stampduty-webhooks/1"

// The delivery's own headers.
const (
	HeaderEventID   = "Stampduty-Event-Id"
	HeaderSignature = "Stampduty-Signature"
	// HeaderOriginalSignature signs a delivery of FormatOriginal (SignOriginal)
	// instead of HeaderSignature: the original API's x-signature (names
	// are case-insensitive; Go sends them in this canonical form).
	HeaderOriginalSignature = "X-Signature"
)

// Deliverer delivers events to receivers that may be slow or hostile: one
// POST of at most Timeout, no redirect followed, no proxy, no connection
// kept, at most MaxAnswerBytes of the answer read, and every address checked
// by Guard after resolution, at connect time. The zero Deliverer delivers on
// AWS's terms. A Deliverer is safe for concurrent use.
type Deliverer struct {
	Guard
	// Timeout bounds each delivery; zero means Timeout.
	Timeout time.Duration
	// Now gives the signature's time; nil means time.Now.
	Now func() time.Time
	// TLS is the TLS configuration (for tests: a test server's roots); nil
	// means Go's defaults with the system's roots.
	TLS *tls.Config
}

// Deliver POSTs body (the JSON of event eventID, in w's format) to w's URL,
// signed with w's secret as its format signs (HeaderSignature for
// FormatStampduty or "", HeaderOriginalSignature for FormatOriginal), and
// says how the attempt went. It returns within the timeout (or ctx's
// deadline, when sooner) whatever the receiver does, and reads at most
// MaxAnswerBytes of the answer. The answer's status decides: a 2xx received
// in time is a success even when the rest of its body is cut.
func (d Deliverer) Deliver(ctx context.Context, w Webhook, eventID string, body []byte) Result {
	start := time.Now()
	r := d.deliver(ctx, w, eventID, body)
	r.Duration = time.Since(start)
	return r
}

// deliver is Deliver without the timing.
func (d Deliverer) deliver(ctx context.Context, w Webhook, eventID string, body []byte) Result {
	u, err := d.parse(w.URL)
	if err != nil {
		return Result{Err: fmt.Errorf("deliver event %s: %w", eventID, err)}
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return Result{Err: fmt.Errorf("deliver event %s: %w", eventID, err)}
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderEventID, eventID)
	if w.Format == FormatOriginal {
		req.Header.Set(HeaderOriginalSignature, SignOriginal(w.Secret, body))
	} else {
		req.Header.Set(HeaderSignature, Sign(w.Secret, now(), body))
	}

	resp, err := d.client(u.Scheme).Do(req)
	if err != nil {
		return Result{Err: fmt.Errorf("deliver event %s: %w", eventID, err)}
	}
	// Read what a well-behaved receiver sends, up to the bound, then drop
	// the connection (keep-alives are off, so Close does).
	read, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, MaxAnswerBytes))
	resp.Body.Close()
	r := Result{Status: resp.StatusCode, Read: read}
	switch {
	case resp.StatusCode == http.StatusGone:
		r.Disabled = true
		r.Err = fmt.Errorf("deliver event %s: receiver answered 410 Gone: webhook disabled", eventID)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		r.Err = fmt.Errorf("deliver event %s: receiver answered %d", eventID, resp.StatusCode)
	}
	return r
}

// client returns the HTTP client of one delivery to a URL of scheme scheme.
// Each delivery has its own transport: no connection outlives it.
func (d Deliverer) client(scheme string) *http.Client {
	t := &http.Transport{
		Proxy:                  nil, // never a proxy from the environment
		DialContext:            d.dialer(scheme),
		TLSClientConfig:        d.TLS,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: MaxAnswerBytes,
		DisableCompression:     true, // the bound counts the bytes sent, not what they inflate to
	}
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dialer returns the DialContext of a delivery: it resolves the host through
// the Guard's resolver, refuses it when any of its addresses is one the
// Guard does not allow, and connects only to the addresses it checked, each
// checked once more by the socket's Control hook right before connecting,
// so that a name which resolves elsewhere on a second lookup (DNS
// rebinding) cannot lead to a private address.
func (d Deliverer) dialer(scheme string) func(ctx context.Context, network, address string) (net.Conn, error) {
	dialer := d.netDialer(scheme)
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", address, err)
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("dial %s: port: %w", address, err)
		}
		addrs, err := d.resolve(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", address, err)
		}
		for _, a := range addrs {
			if err := d.allowed(netip.AddrPortFrom(a, uint16(p)), scheme); err != nil {
				return nil, fmt.Errorf("dial %s: %w", address, err)
			}
		}
		var errs []error
		for _, a := range addrs {
			c, err := dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		return nil, fmt.Errorf("dial %s: %w", address, errors.Join(errs...))
	}
}

// netDialer returns the dialer of a delivery's connections: its Control
// hook refuses to connect to an address the Guard does not allow.
func (d Deliverer) netDialer(scheme string) *net.Dialer {
	return &net.Dialer{
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			return d.checkDialed(address, scheme)
		},
	}
}

// checkDialed checks the address a socket is about to connect to.
func (d Deliverer) checkDialed(address, scheme string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connect to %s: not an IP address: %w", address, err)
	}
	if err := d.allowed(ap, scheme); err != nil {
		return fmt.Errorf("connect to %s: %w", address, err)
	}
	return nil
}
