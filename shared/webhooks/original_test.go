package webhooks

import (
	"strings"
	"testing"

	"stampduty/shared/stampduty"
)

// TestSignOriginal: x-signature is the lowercase hex HMAC-SHA256 of the raw
// body, keyed with the whole secret; the expected value was computed with
// openssl (printf '%s' BODY | openssl dgst -sha256 -hmac SECRET).
func TestSignOriginal(t *testing.T) {
	const body = `{"url":"https://s3.example/c.pdf?a=1&b=2","name":"certificate.pdf","orderId":"o","orderFulfillmentId":"f"}`
	if got, want := SignOriginal(testSecret, []byte(body)), "8cb878fb3e05feaa3ad83f3f5f46e8482cb40e0877cadf02b742b500f9c8e12b"; got != want {
		t.Errorf("SignOriginal = %s, want %s", got, want)
	}
	if SignOriginal(strings.TrimPrefix(testSecret, SecretPrefix), []byte(body)) == SignOriginal(testSecret, []byte(body)) {
		t.Error("the key leaves out the whsec_ prefix")
	}
}

func TestCheckFormat(t *testing.T) {
	cert := []string{stampduty.EventOrderCertificateAttached}
	for _, tc := range []struct {
		name, format string
		events       []string
	}{
		{"DefaultTakesAnyEvents", "", []string{stampduty.EventOrderCreated, stampduty.EventOrderCancelled}},
		{"StampdutyTakesAnyEvents", FormatStampduty, []string{stampduty.EventOrderStatusChanged}},
		{"OriginalTakesTheCertificateEvent", FormatOriginal, cert},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckFormat(tc.format, tc.events); err != nil {
				t.Errorf("CheckFormat(%q, %v) = %v", tc.format, tc.events, err)
			}
		})
	}
	const onlyCert = "events must list exactly order.certificate_attached when format is original"
	for _, tc := range []struct {
		name, format string
		events       []string
		path, msg    string
	}{
		{"ErrUnknown", "strapi", cert, "format", FormatRule},
		{"ErrCase", "Original", cert, "format", FormatRule},
		{"ErrOriginalWithAnotherEvent", FormatOriginal, []string{stampduty.EventOrderCreated}, "events", onlyCert},
		{"ErrOriginalWithTwoEvents", FormatOriginal, []string{stampduty.EventOrderCertificateAttached, stampduty.EventOrderStatusChanged}, "events", onlyCert},
		{"ErrOriginalWithNone", FormatOriginal, nil, "events", onlyCert},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertInvalid(t, CheckFormat(tc.format, tc.events), tc.path, tc.msg)
		})
	}
}

// TestOriginalBody: the original API's body, key for key and byte for
// byte, about the fulfillment the event names, or (an event recorded
// before events named theirs) the first with a certificate.
func TestOriginalBody(t *testing.T) {
	file := func(name, url string) *stampduty.File {
		return &stampduty.File{Name: name, URL: url, Key: "certificates/x"}
	}
	o := stampduty.Order{DocumentID: "k3v9xq2m7p4r8t1w5y6z0abc", Fulfillments: []stampduty.Fulfillment{
		{DocumentID: "f0000000000000000000000a"},
		{DocumentID: "f0000000000000000000000b", CertificateFile: file("IN-KA-1.pdf", "https://s3.example/b.pdf?X-Amz-Date=1&X-Amz-Signature=<b>")},
		{DocumentID: "f0000000000000000000000c", CertificateFile: file("IN-KA-2.pdf", "https://s3.example/c.pdf?a=1&b=2")},
	}}
	for _, tc := range []struct{ name, fulfillment, want string }{
		{"TheNamedFulfillment", "f0000000000000000000000c",
			`{"url":"https://s3.example/c.pdf?a=1&b=2","name":"IN-KA-2.pdf","orderId":"k3v9xq2m7p4r8t1w5y6z0abc","orderFulfillmentId":"f0000000000000000000000c"}`},
		{"UnnamedIsTheFirstCertified", "",
			`{"url":"https://s3.example/b.pdf?X-Amz-Date=1&X-Amz-Signature=<b>","name":"IN-KA-1.pdf","orderId":"k3v9xq2m7p4r8t1w5y6z0abc","orderFulfillmentId":"f0000000000000000000000b"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := originalBody("evt_x", o, tc.fulfillment)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != tc.want {
				t.Errorf("body = %s, want %s", got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, fulfillment string }{
		{"ErrNamedWithoutCertificate", "f0000000000000000000000a"},
		{"ErrNamedNotInTheOrder", "f0000000000000000000000z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if b, err := originalBody("evt_x", o, tc.fulfillment); err == nil {
				t.Errorf("body = %s, want an error", b)
			}
		})
	}
	t.Run("ErrNoCertificate", func(t *testing.T) {
		if b, err := originalBody("evt_x", stampduty.Order{Fulfillments: o.Fulfillments[:1]}, ""); err == nil {
			t.Errorf("body = %s, want an error", b)
		}
	})
}
