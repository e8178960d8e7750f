package config

import (
	"strings"
	"testing"
)

// TestEndpoint: a local engine's address is used only in a local Lambda
// runtime (LocalSignal exactly "true", as SAM CLI sets it); anywhere else
// it is refused, and the init fails naming the variable and the signal.
func TestEndpoint(t *testing.T) {
	cases := map[string]struct {
		signal, endpoint string
		want             string
		fails            bool
	}{
		"LocalRuntime":        {signal: "true", endpoint: "http://127.0.0.1:8000", want: "http://127.0.0.1:8000"},
		"DeployedWithAddress": {endpoint: "http://127.0.0.1:8000", fails: true},
		"SignalNotTrue":       {signal: "1", endpoint: "http://127.0.0.1:8000", fails: true},
		"DeployedEmpty":       {},
		"LocalEmpty":          {signal: "true"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := New(func(k string) string {
				return map[string]string{LocalSignal: tc.signal, "DYNAMODB_ENDPOINT": tc.endpoint}[k]
			})
			if got := e.Endpoint("DYNAMODB_ENDPOINT"); got != tc.want {
				t.Errorf("Endpoint = %q, want %q", got, tc.want)
			}
			err := e.Err()
			if got := err != nil; got != tc.fails {
				t.Fatalf("Err = %v, want failing %v", err, tc.fails)
			}
			if err != nil && (!strings.Contains(err.Error(), "DYNAMODB_ENDPOINT") || !strings.Contains(err.Error(), LocalSignal)) {
				t.Errorf("Err = %q, want it to name DYNAMODB_ENDPOINT and %s", err, LocalSignal)
			}
			if got, want := e.Local(), tc.signal == "true"; got != want {
				t.Errorf("Local = %v, want %v", got, want)
			}
		})
	}
}
