package config

import (
	"strings"
	"testing"
	"time"
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

// TestSeconds: a whole number of seconds from 1 to 3600, the default when
// unset, and anything else a failed init naming the variable.
func TestSeconds(t *testing.T) {
	cases := map[string]struct {
		value string
		want  time.Duration
		fails bool
	}{
		"Unset":    {want: 5 * time.Second},
		"Two":      {value: "2", want: 2 * time.Second},
		"Hour":     {value: "3600", want: time.Hour},
		"Zero":     {value: "0", want: 5 * time.Second, fails: true},
		"TooLong":  {value: "3601", want: 5 * time.Second, fails: true},
		"GoString": {value: "5s", want: 5 * time.Second, fails: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := New(func(k string) string { return map[string]string{"EVERY": tc.value}[k] })
			if got, want := e.Seconds("EVERY", 5*time.Second), tc.want; got != want {
				t.Errorf("Seconds = %v, want %v", got, want)
			}
			err := e.Err()
			if got := err != nil; got != tc.fails {
				t.Fatalf("Err = %v, want failing %v", err, tc.fails)
			}
			if err != nil && !strings.Contains(err.Error(), "EVERY") {
				t.Errorf("Err = %q, want it to name EVERY", err)
			}
		})
	}
}
