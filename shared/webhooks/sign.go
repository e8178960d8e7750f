package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// SecretBytes is how many random bytes a secret carries.
const SecretBytes = 32

// Tolerance is how old (or how far ahead) a signature's timestamp may be
// before Verify refuses it, when the caller gives no tolerance.
const Tolerance = 5 * time.Minute

// NewSecret returns a new signing secret: "whsec_" and the base64url (no
// padding) of 32 bytes from crypto/rand.
func NewSecret() string {
	var b [SecretBytes]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Sign returns the Stampduty-Signature header of body sent at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">". The key is the
// whole secret string, "whsec_" included, as Stripe does, so Stripe's
// verification code fits unchanged.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

// SignOriginal returns the x-signature header of body for a webhook of
// FormatOriginal, as the original API signed its callbacks: the lowercase
// hex HMAC-SHA256 of the raw body, keyed with the whole secret string as
// shown at registration ("whsec_" included). It carries no timestamp, so
// a receiver cannot tell a replayed delivery by its age.
func SignOriginal(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// mac returns the HMAC-SHA256, under secret, of "<ts>.<body>".
func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a Stampduty-Signature header as a receiver does: a single
// t, at most tolerance (Tolerance when tolerance <= 0) away from now either
// way, and at least one v1 that is the signature of body under secret,
// compared in constant time. Several v1 values are allowed (a receiver may
// be sent one per secret while a secret is being replaced); other schemes
// are ignored.
func Verify(header, secret string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = Tolerance
	}
	var (
		ts   string
		sigs [][]byte
	)
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("verify signature: malformed item %q", part)
		}
		switch k {
		case "t":
			if ts != "" {
				return errors.New("verify signature: more than one timestamp")
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return errors.New("verify signature: a v1 signature is not 64 hex digits")
			}
			sigs = append(sigs, sig)
		}
	}
	if ts == "" {
		return errors.New("verify signature: no timestamp")
	}
	if len(sigs) == 0 {
		return errors.New("verify signature: no v1 signature")
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("verify signature: timestamp: %w", err)
	}
	if age := now.Sub(time.Unix(unix, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("verify signature: timestamp is %s away from now, more than %s", age.Truncate(time.Second), tolerance)
	}
	want := mac(secret, ts, body)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return errors.New("verify signature: no v1 signature matches")
}
