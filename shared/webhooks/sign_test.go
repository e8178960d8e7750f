package webhooks

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// signSecret is the secret TestSign and TestVerify sign with.
const signSecret = "whsec_test"

func TestNewSecret(t *testing.T) {
	t.Run("PrefixAnd32BytesOfBase64URL", func(t *testing.T) {
		s := NewSecret()
		rest, ok := strings.CutPrefix(s, "whsec_")
		if !ok {
			t.Fatalf("NewSecret() = %q, want the prefix whsec_", s)
		}
		b, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil {
			t.Fatalf("NewSecret() = %q: not base64url: %v", s, err)
		}
		if got, want := len(b), 32; got != want {
			t.Errorf("NewSecret() carries %d bytes, want %d", got, want)
		}
	})
	t.Run("DifferentEachTime", func(t *testing.T) {
		seen := map[string]bool{}
		for range 100 {
			s := NewSecret()
			if seen[s] {
				t.Fatalf("NewSecret() repeated %q", s)
			}
			seen[s] = true
		}
	})
}

func TestSign(t *testing.T) {
	t.Run("StripeSchemeWholeSecretAsKey", func(t *testing.T) {
		// printf '%s' '1700000000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac 'whsec_test'
		got := Sign(signSecret, time.Unix(1700000000, 0), []byte(`{"id":"evt_1"}`))
		if want := "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"; got != want {
			t.Errorf("Sign = %q, want %q", got, want)
		}
	})
	t.Run("SecondsOnly", func(t *testing.T) {
		a := Sign(signSecret, time.Unix(1700000000, 0), []byte("x"))
		b := Sign(signSecret, time.Unix(1700000000, 999_000_000), []byte("x"))
		if a != b {
			t.Errorf("signatures within one second differ: %q, %q", a, b)
		}
	})
}

func TestVerify(t *testing.T) {
	body := []byte(`{"id":"evt_1"}`)
	at := time.Unix(1700000000, 0)
	header := Sign(signSecret, at, body)
	_, v1, _ := strings.Cut(header, ",")
	other := Sign("whsec_other", at, body)
	_, otherV1, _ := strings.Cut(other, ",")

	ok := []struct {
		name   string
		header string
		now    time.Time
		tol    time.Duration
	}{
		{"Fresh", header, at, 0},
		{"FourMinutesOld", header, at.Add(4 * time.Minute), 0},
		{"ExactlyFiveMinutesOld", header, at.Add(5 * time.Minute), 0},
		{"SlightlyAhead", header, at.Add(-time.Minute), 0},
		{"OneOfSeveralV1", "t=1700000000," + otherV1 + "," + v1, at, 0},
		{"SpacesAroundItems", "t=1700000000, " + v1, at, 0},
		{"OtherSchemesIgnored", "t=1700000000,v0=abc," + v1, at, 0},
		{"LongerTolerance", header, at.Add(time.Hour), 2 * time.Hour},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			if err := Verify(tc.header, signSecret, body, tc.now, tc.tol); err != nil {
				t.Errorf("Verify(%q) = %v, want nil", tc.header, err)
			}
		})
	}

	bad := []struct {
		name   string
		header string
		body   []byte
		now    time.Time
		tol    time.Duration
		want   string
	}{
		{"OlderThanFiveMinutes", header, body, at.Add(5*time.Minute + time.Second), 0, "away from now"},
		{"FarAhead", header, body, at.Add(-6 * time.Minute), 0, "away from now"},
		{"OlderThanTolerance", header, body, at.Add(2 * time.Second), time.Second, "away from now"},
		{"OtherSecret", other, body, at, 0, "no v1 signature matches"},
		{"OtherBody", header, []byte(`{"id":"evt_2"}`), at, 0, "no v1 signature matches"},
		{"OtherTimestamp", "t=1700000001," + v1, body, at, 0, "no v1 signature matches"},
		{"NoTimestamp", v1, body, at, 0, "no timestamp"},
		{"NoSignature", "t=1700000000", body, at, 0, "no v1 signature"},
		{"TwoTimestamps", "t=1700000000,t=1700000000," + v1, body, at, 0, "more than one timestamp"},
		{"TimestampNotANumber", "t=soon," + v1, body, at, 0, "timestamp"},
		{"SignatureNotHex", "t=1700000000,v1=zz", body, at, 0, "not 64 hex digits"},
		{"SignatureTruncated", header[:len(header)-2], body, at, 0, "not 64 hex digits"},
		{"Empty", "", body, at, 0, "malformed"},
		{"ItemWithoutEquals", "t=1700000000,v1", body, at, 0, "malformed"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.header, signSecret, tc.body, tc.now, tc.tol)
			if err == nil {
				t.Fatalf("Verify(%q) = nil, want an error", tc.header)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Verify(%q) = %v, want it to say %q", tc.header, err, tc.want)
			}
		})
	}
}
