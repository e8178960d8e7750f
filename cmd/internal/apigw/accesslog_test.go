package apigw

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/metrics"
	"stampduty/shared/testkit/syncbuf"
)

// Values a request may carry that no log line may hold: a caller's
// token, a PAN and a mobile number in the query (issue 33 sent these),
// the bearer token, a cookie and a made-up header value.
const (
	secretToken  = "sdt_QUERYxTOKENxMUSTxNOTxBExLOGGEDx0000000000"
	secretPAN    = "ABCDE1234F"
	secretMobile = "9876543210"
	secretBearer = "sdt_BEARERxTOKENxMUSTxNOTxBExLOGGEDx000000000"
	secretCookie = "session-cookie-value-must-not-be-logged"
	secretHeader = "x-header-value-must-not-be-logged"
)

// TestAccessLogHoldsNoValues: the access log line of each request is
// what the template has API Gateway write (route key, status, latency,
// request id), and none holds a query value, the path as sent or a
// header value, whatever the request's fate: answered by the function,
// refused by an authorizer, matched by no route, or failed.
func TestAccessLogHoldsNoValues(t *testing.T) {
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys":[]}`))
	}))
	t.Cleanup(jwks.Close)
	auth, err := NewJWT(t.Context(), "$request.header.Authorization", "https://issuer.example", []string{"client"}, jwks.URL)
	if err != nil {
		t.Fatal(err)
	}
	var out syncbuf.Buffer
	srv := serve(t, []Route{
		{Method: "GET", Path: "/api/live-orders", Target: newFake()},
		{Method: "GET", Path: "/api/files/{token}", Target: newFake()},
		{Method: "GET", Path: "/api/ops/live-orders", Target: newFake(), IAM: true},
		{Method: "GET", Path: "/api/console/me", Target: newFake(), JWT: auth},
		{Method: "GET", Path: "/api/fails", Target: answering("not json "+secretPAN, nil)},
	}, Options{Log: &out, IAM: testIAM})
	query := "?access_token=" + secretToken + "&pan=" + secretPAN + "&mobile=" + secretMobile
	header := http.Header{"Authorization": {"Bearer " + secretBearer}, "Cookie": {"s=" + secretCookie}, "X-Extra": {secretHeader}}

	for _, c := range []struct {
		name, path string
		status     int
		want       string // the line's start: route key and status
	}{
		{"answered by the function", "/api/live-orders" + query, http.StatusOK, "GET /api/live-orders 200 "},
		{"a path parameter is not logged", "/api/files/" + secretToken + query, http.StatusOK, "GET /api/files/{token} 200 "},
		{"refused by AWS_IAM", "/api/ops/live-orders" + query, http.StatusForbidden, "GET /api/ops/live-orders 403 "},
		{"refused by the JWT authorizer", "/api/console/me" + query, http.StatusUnauthorized, "GET /api/console/me 401 "},
		{"matched by no route", "/api/" + secretMobile + query, http.StatusNotFound, "- 404 "},
		{"a function answering no JSON", "/api/fails" + query, http.StatusInternalServerError, "GET /api/fails 500 "},
	} {
		t.Run(c.name, func(t *testing.T) {
			from := len(out.String())
			resp, _ := do(t, "GET", srv.URL+c.path, nil, header)
			if got, want := resp.StatusCode, c.status; got != want {
				t.Errorf("status %d, want %d", got, want)
			}
			line := out.String()[from:]
			if !strings.HasPrefix(line, c.want) || strings.Count(line, "\n") != 1 {
				t.Errorf("access log %q, want one line starting %q", line, c.want)
			}
			if id := resp.Header.Get("Apigw-Requestid"); id == "" || !strings.Contains(line, " "+id) {
				t.Errorf("access log %q lacks the request id %q", line, id)
			}
			for _, secret := range []string{secretToken, secretPAN, secretMobile, secretBearer, secretCookie, secretHeader, "access_token", "?"} {
				if strings.Contains(line, secret) {
					t.Errorf("access log %q holds %q", line, secret)
				}
			}
		})
	}
}

// TestClientHangsUp: a client that hangs up while the function runs
// does not stop the invocation, and its request is logged with the
// function's status and client=closed: API Gateway's, never a 500 of its
// own. API Gateway's 5xx (Api5xxAlarm's metric) does not count it.
func TestClientHangsUp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(t *testing.T, release <-chan struct{}, seen chan<- error) Invoker
	}{
		{"a function that waits", func(t *testing.T, release <-chan struct{}, seen chan<- error) Invoker {
			fn := newFake()
			fn.respond = func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) ([]byte, error) {
				// Like runtimeapi's Invoke: the caller's context ending is
				// the end of the wait.
				select {
				case <-release:
					seen <- ctx.Err()
					return []byte(`{"statusCode":201,"body":"created"}`), nil
				case <-ctx.Done():
					seen <- ctx.Err()
					return nil, ctx.Err()
				}
			}
			return fn
		}},
		{"a Lambda process on the local runtime", func(t *testing.T, release <-chan struct{}, seen chan<- error) Invoker {
			self, err := os.Executable() // this test binary is the function (see TestMain)
			if err != nil {
				t.Fatal(err)
			}
			pool := runtimeapi.NewPool(runtimeapi.Function{Name: "slowfn", Path: self, Timeout: 10 * time.Second})
			t.Cleanup(func() { _ = pool.Close() })
			go func() { <-release; seen <- nil }() // the function sleeps on its own (X-Echo-Sleep)
			return pool
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release, seen := make(chan struct{}), make(chan error, 1)
			var log, emf syncbuf.Buffer
			srv := serve(t, []Route{{Method: "POST", Path: "/api/live-orders", Target: tc.target(t, release, seen)}},
				Options{Log: &log, Metrics: &emf, ApiID: "Api"})

			ctx, cancel := context.WithCancel(t.Context())
			req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/live-orders", strings.NewReader(`{"amount":20}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Echo-Sleep", "400ms")
			done := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			time.Sleep(100 * time.Millisecond) // the function has the event
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("the client got %v, want its own cancellation", err)
			}
			time.Sleep(100 * time.Millisecond) // the gateway sees the connection go
			close(release)
			if err := <-seen; err != nil {
				t.Errorf("the invocation ended with the client: %v", err)
			}

			var line string
			for deadline := time.Now().Add(5 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				line = log.String()
			}
			if !strings.HasPrefix(line, "POST /api/live-orders 201 ") || !strings.Contains(line, " client=closed") || strings.Contains(line, "error=") {
				t.Errorf("access log %q, want the function's 201 with client=closed and no error", line)
			}
			got := map[metrics.Name]float64{}
			for l := range strings.Lines(emf.String()) {
				ps, _, err := metrics.Read([]byte(l))
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					got[p.Name] += p.Values[0]
				}
			}
			if got["Count"] != 1 || got["5xx"] != 0 || got["4xx"] != 0 {
				t.Errorf("API Gateway's metrics %v, want Count 1, 4xx 0, 5xx 0", got)
			}
		})
	}
}
