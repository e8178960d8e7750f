package apigw

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

var testIAM = &IAM{
	Credentials: aws.Credentials{AccessKeyID: "AKIALOCAL", SecretAccessKey: "local-secret"},
	Region:      "ap-south-1", Account: "000000000000", Principal: "arn:aws:iam::000000000000:user/local-operator",
}

// signed returns a request signed as an AWS SDK client signs it.
func signed(t *testing.T, method, url, body string, creds aws.Credentials, region string, at time.Time) *http.Request {
	t.Helper()
	r := httptest.NewRequest(method, url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256([]byte(body))
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), "execute-api", region, at); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestVerifySigV4(t *testing.T) {
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	const url = "http://127.0.0.1:3000/api/ops/live-orders/abc/fulfillments/def?x=1&a=b%20c"
	const body = `{"order_status":"Created"}`
	good := func() *http.Request {
		return signed(t, http.MethodPatch, url, body, testIAM.Credentials, testIAM.Region, now)
	}
	t.Run("Signed", func(t *testing.T) {
		iam, err := testIAM.verify(good(), []byte(body), now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := iam.UserARN, testIAM.Principal; got != want {
			t.Errorf("UserARN = %q, want %q", got, want)
		}
		if got, want := iam.AccessKey, "AKIALOCAL"; got != want {
			t.Errorf("AccessKey = %q, want %q", got, want)
		}
	})
	refused := map[string]struct {
		r    func() *http.Request
		body string
		now  time.Time
	}{
		"ErrUnsigned": {func() *http.Request { return httptest.NewRequest(http.MethodPatch, url, nil) }, body, now},
		"ErrOtherSecret": {func() *http.Request {
			return signed(t, http.MethodPatch, url, body, aws.Credentials{AccessKeyID: "AKIALOCAL", SecretAccessKey: "x"}, testIAM.Region, now)
		}, body, now},
		"ErrOtherKey": {func() *http.Request {
			return signed(t, http.MethodPatch, url, body, aws.Credentials{AccessKeyID: "AKIAOTHER", SecretAccessKey: "local-secret"}, testIAM.Region, now)
		}, body, now},
		"ErrOtherRegion": {func() *http.Request {
			return signed(t, http.MethodPatch, url, body, testIAM.Credentials, "us-east-1", now)
		}, body, now},
		"ErrBodyChanged":         {good, `{"order_status":"Printed"}`, now},
		"ErrPathChanged":         {func() *http.Request { r := good(); r.URL.Path = "/api/ops/live-orders/abc/fulfillments/xyz"; return r }, body, now},
		"ErrQueryChanged":        {func() *http.Request { r := good(); r.URL.RawQuery = "x=2&a=b%20c"; return r }, body, now},
		"ErrMethodChanged":       {func() *http.Request { r := good(); r.Method = http.MethodPut; return r }, body, now},
		"ErrSignedHeaderChanged": {func() *http.Request { r := good(); r.Header.Set("Content-Type", "text/plain"); return r }, body, now},
		"ErrExpired":             {good, body, now.Add(6 * time.Minute)},
		"ErrFromTheFuture":       {good, body, now.Add(-6 * time.Minute)},
		"ErrSignatureTampered": {func() *http.Request {
			r := good()
			a := r.Header.Get("Authorization")
			r.Header.Set("Authorization", a[:len(a)-1]+string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", a[len(a)-1])+1)%16]))
			return r
		}, body, now},
	}
	for name, tt := range refused {
		t.Run(name, func(t *testing.T) {
			if _, err := testIAM.verify(tt.r(), []byte(tt.body), tt.now); err == nil {
				t.Error("verify accepted the request")
			}
		})
	}
	t.Run("UnsignedHeadersMayChange", func(t *testing.T) {
		r := good()
		r.Header.Set("User-Agent", "curl/8")
		r.Header.Set("X-Forwarded-For", "10.0.0.1")
		if _, err := testIAM.verify(r, []byte(body), now); err != nil {
			t.Error(err)
		}
	})
}
