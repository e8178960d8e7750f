package apigw

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"stampduty/cmd/internal/runtimeapi"
)

func TestMain(m *testing.M) {
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		// Started by the local runtime as a function's bootstrap: be the
		// Lambda function of the round-trip test, echo behind the api-proxy
		// adapter, like the project's functions.
		lambda.Start(httpadapter.NewV2(http.HandlerFunc(echo)).ProxyWithContext)
		return
	}
	os.Exit(m.Run())
}

// echo is the handler of the test function: it answers with what it
// received, after the time its X-Echo-Sleep header says, if any.
func echo(w http.ResponseWriter, r *http.Request) {
	if d, err := time.ParseDuration(r.Header.Get("X-Echo-Sleep")); err == nil {
		time.Sleep(d)
	}
	body, _ := io.ReadAll(r.Body)
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Handler", "echo")
	w.Header().Add("X-Multi", "one")
	w.Header().Add("X-Multi", "two")
	http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc", Path: "/"})
	http.SetCookie(w, &http.Cookie{Name: "theme", Value: "dark"})
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"method":   r.Method,
		"path":     r.URL.Path,
		"rawQuery": r.URL.RawQuery,
		"headers":  r.Header,
		"cookies":  cookies,
		"body":     body,
	})
}

// echoed is what echo answers.
type echoed struct {
	Method   string
	Path     string
	RawQuery string
	Headers  http.Header
	Cookies  []string
	Body     []byte
}

// echoedBy returns what echo answered with resp and its body raw, failing
// the test unless echo answered.
func echoedBy(t *testing.T, resp *http.Response, raw []byte) echoed {
	t.Helper()
	if got, want := resp.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("status = %d, want %d (body %s)", got, want, raw)
	}
	var seen echoed
	if err := json.Unmarshal(raw, &seen); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return seen
}

func TestRoundTrip(t *testing.T) {
	t.Run("through the api-proxy adapter in-process", func(t *testing.T) {
		target := adapterInvoker{httpadapter.NewV2(http.HandlerFunc(echo))}
		checkRoundTrip(t, target)
	})

	t.Run("through a Lambda process on the local runtime", func(t *testing.T) {
		self, err := os.Executable() // this test binary is the function (see TestMain)
		if err != nil {
			t.Fatal(err)
		}
		pool := runtimeapi.NewPool(runtimeapi.Function{
			Name:    "httpfn",
			Path:    self,
			Env:     []string{"AWS_REGION=eu-west-1"},
			Timeout: 10 * time.Second,
		})
		t.Cleanup(func() {
			if err := pool.Close(); err != nil {
				t.Errorf("close pool: %v", err)
			}
		})
		checkRoundTrip(t, pool)
	})
}

// checkRoundTrip sends requests through the emulated API to the echo handler
// behind target and checks what the handler saw and what the client got.
func checkRoundTrip(t *testing.T, target Invoker) {
	t.Helper()
	srv := serve(t, []Route{{Method: "POST", Path: "/api/live-orders/{id}", Target: target}}, Options{})

	t.Run("the handler sees the request as sent", func(t *testing.T) {
		const rawQuery = "sort%5B0%5D=purpose_name%3Aasc&tag=a&tag=b"
		const body = `{"amount":"12.50","note":"ünï"}`
		resp, raw := do(t, "POST", srv.URL+"/api/live-orders/42?"+rawQuery, strings.NewReader(body), http.Header{
			"Content-Type":  {"application/json"},
			"X-Request-Tag": {"t1"},
			"X-Multi":       {"a", "b"},
			"Cookie":        {"a=1; b=2"},
		})
		seen := echoedBy(t, resp, raw)
		for _, c := range []struct{ name, got, want string }{
			{"method", seen.Method, "POST"},
			{"path", seen.Path, "/api/live-orders/42"},
			{"raw query", seen.RawQuery, rawQuery},
			{"body", string(seen.Body), body},
			{"Content-Type", seen.Headers.Get("Content-Type"), "application/json"},
			{"X-Request-Tag", seen.Headers.Get("X-Request-Tag"), "t1"},
		} {
			if c.got != c.want {
				t.Errorf("handler saw %s %q, want %q", c.name, c.got, c.want)
			}
		}
		if got, want := seen.Headers.Values("X-Multi"), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
			t.Errorf("handler saw X-Multi %q, want %q", got, want)
		}
		if got, want := seen.Cookies, []string{"a=1", "b=2"}; !reflect.DeepEqual(got, want) {
			t.Errorf("handler saw cookies %q, want %q", got, want)
		}

		for name, want := range map[string][]string{
			"Content-Type": {"application/json"},
			"X-Handler":    {"echo"},
			"X-Multi":      {"one,two"}, // the adapter joins repeated headers
			"Set-Cookie":   {"session=abc; Path=/", "theme=dark"},
		} {
			if got := resp.Header.Values(name); !reflect.DeepEqual(got, want) {
				t.Errorf("client got %s %q, want %q", name, got, want)
			}
		}
	})

	t.Run("a binary body arrives unchanged", func(t *testing.T) {
		body := []byte{0x00, 0x89, 'P', 'N', 'G', 0xff, 0xfe}
		resp, raw := do(t, "POST", srv.URL+"/api/live-orders/7", bytes.NewReader(body), http.Header{
			"Content-Type": {"application/octet-stream"},
		})
		if seen := echoedBy(t, resp, raw); !bytes.Equal(seen.Body, body) {
			t.Errorf("handler saw body %q, want %q", seen.Body, body)
		}
	})
}
