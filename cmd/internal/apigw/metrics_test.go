package apigw

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"stampduty/shared/metrics"
	"stampduty/shared/testkit/syncbuf"
)

// TestApiMetrics: each request writes API Gateway's Count, 4xx, 5xx and
// Latency for the API, as AWS publishes them; the 5xx Api5xxAlarm watches
// counts a function that fails as well as one that answers 5xx.
func TestApiMetrics(t *testing.T) {
	for _, tc := range []struct {
		name         string
		fn           *fakeInvoker
		want4, want5 float64
	}{
		{"a 200 is a request, no error", newFake(), 0, 0},
		{"a function's 404 is a 4xx", answering(`{"statusCode":404,"body":"no"}`, nil), 1, 0},
		{"a function's 503 is a 5xx", answering(`{"statusCode":503,"body":"busy"}`, nil), 0, 1},
		{"a function that fails is a 5xx", answering("", errors.New("the function crashed")), 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out syncbuf.Buffer
			srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: tc.fn}}, Options{Metrics: &out, ApiID: "abc123"})
			resp, _ := do(t, "GET", srv.URL+"/x", nil, nil)
			got := map[metrics.Name]float64{}
			for line := range strings.Lines(out.String()) {
				ps, ok, err := metrics.Read([]byte(line))
				if !ok || err != nil {
					t.Fatalf("line %q is no EMF record (%v)", line, err)
				}
				for _, p := range ps {
					if p.Namespace != ApiNamespace || p.Dimensions["ApiId"] != "abc123" || len(p.Dimensions) != 1 {
						t.Errorf("%s in %s with %v; want %s, ApiId abc123 only", p.Name, p.Namespace, p.Dimensions, ApiNamespace)
					}
					got[p.Name] += p.Values[0]
				}
			}
			want := map[metrics.Name]float64{"Count": 1, "4xx": tc.want4, "5xx": tc.want5}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("answer %d: %s = %v; want %v", resp.StatusCode, name, got[name], w)
				}
			}
			if got["Latency"] <= 0 {
				t.Errorf("Latency = %v; want > 0", got["Latency"])
			}
		})
	}
	t.Run("without a Metrics writer nothing is written", func(t *testing.T) {
		srv := serve(t, []Route{{Method: "GET", Path: "/x", Target: newFake()}}, Options{})
		if resp, _ := do(t, "GET", srv.URL+"/x", nil, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("answer %d", resp.StatusCode)
		}
	})
}
