package apigw

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"stampduty/shared/testkit"
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
	testkit.SignForAPI(t, r, []byte(body), creds, region, at)
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

// TestIAMRoutes: the API refuses unsigned and badly signed requests to an
// AWS_IAM route with 403 before the function runs, passes signed ones with
// requestContext.authorizer.iam filled in, and leaves other routes alone.
func TestIAMRoutes(t *testing.T) {
	ops, public := newFake(), newFake()
	iam := *testIAM
	srv := serve(t, []Route{{Method: "GET", Path: "/api/ops/live-orders", Target: ops, IAM: true},
		{Method: "GET", Path: "/api/stamp-duty-datas", Target: public}}, Options{IAM: &iam, Log: testLog{t}})
	do := func(r *http.Request) (int, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	sign := func(secret string) *http.Request {
		r, _ := http.NewRequest("GET", srv.URL+"/api/ops/live-orders?status=Pending", nil)
		creds := testIAM.Credentials
		creds.SecretAccessKey = secret
		testkit.SignForAPI(t, r, nil, creds, testIAM.Region, time.Now())
		return r
	}
	t.Run("ErrUnsigned", func(t *testing.T) {
		r, _ := http.NewRequest("GET", srv.URL+"/api/ops/live-orders", nil)
		if status, body := do(r); status != http.StatusForbidden || body != `{"message":"Forbidden"}` {
			t.Errorf("unsigned: %d %s", status, body)
		}
		ops.notInvoked(t)
	})
	t.Run("ErrWrongSecret", func(t *testing.T) {
		if status, _ := do(sign("wrong")); status != http.StatusForbidden {
			t.Errorf("wrong secret: %d, want 403", status)
		}
		ops.notInvoked(t)
	})
	t.Run("Signed", func(t *testing.T) {
		if status, body := do(sign(testIAM.Credentials.SecretAccessKey)); status != http.StatusOK {
			t.Fatalf("signed: %d %s", status, body)
		}
		ev := ops.event(t)
		if ev.RequestContext.Authorizer == nil || ev.RequestContext.Authorizer.IAM == nil || ev.RequestContext.Authorizer.IAM.UserARN != testIAM.Principal {
			t.Errorf("authorizer = %+v", ev.RequestContext.Authorizer)
		}
	})
	t.Run("OtherRoutesNeedNoSignature", func(t *testing.T) {
		r, _ := http.NewRequest("GET", srv.URL+"/api/stamp-duty-datas", nil)
		if status, _ := do(r); status != http.StatusOK {
			t.Errorf("public route: %d", status)
		}
		if ev := public.event(t); ev.RequestContext.Authorizer != nil {
			t.Errorf("public route got an authorizer: %+v", ev.RequestContext.Authorizer)
		}
	})
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) { l.t.Log(string(p)); return len(p), nil }
