package xray

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// TestParseHeader: the trace header Lambda hands the runtime, its parts in
// any order; without a root or a parent there is no trace to join.
func TestParseHeader(t *testing.T) {
	cases := map[string]struct {
		in   string
		want Header
		ok   bool
	}{
		"Sampled":    {"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1", Header{"1-5759e988-bd862e3fe1be46a994272793", "53995c3f42cd8ad8", true}, true},
		"NotSampled": {"Root=1-a-b;Parent=c;Sampled=0", Header{"1-a-b", "c", false}, true},
		"Reordered":  {"Sampled=1;Lineage=x:0;Parent=c;Root=1-a-b", Header{"1-a-b", "c", true}, true},
		"NoParent":   {"Root=1-a-b;Sampled=1", Header{Root: "1-a-b", Sampled: true}, false},
		"Empty":      {"", Header{}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseHeader(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ParseHeader(%q) = %+v, %v, want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestNewDaemon: AWS_XRAY_DAEMON_ADDRESS as Lambda sets it (host:port), or
// with separate TCP and UDP addresses, of which the UDP one; the default
// when unset.
func TestNewDaemon(t *testing.T) {
	for in, want := range map[string]string{
		"":                                      DefaultDaemon,
		"169.254.79.129:2000":                   "169.254.79.129:2000",
		"tcp:127.0.0.1:2000 udp:127.0.0.2:2001": "127.0.0.2:2001",
	} {
		if got := NewDaemon(in).addr; got != want {
			t.Errorf("NewDaemon(%q) sends to %s, want %s", in, got, want)
		}
	}
}

// TestFailedCalls: a call DynamoDB throttles is an error and a throttle of
// its status, and a call that gets no answer is a fault, each with the
// attempts beyond the first as retries.
func TestFailedCalls(t *testing.T) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	throttling := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}`))
	}))
	defer throttling.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := "http://" + closed.Addr().String()
	closed.Close()

	cases := map[string]struct {
		endpoint string
		want     string
	}{
		"Throttled": {throttling.URL, `"error":true,"throttle":true,"aws":{"operation":"DescribeTable","region":"us-east-1","retries":1},"http":{"response":{"status":400}}`},
		"NoAnswer":  {nobody, `"fault":true,"aws":{"operation":"DescribeTable","region":"us-east-1","retries":1},"http":{"response":{}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			client := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(tc.endpoint),
				Credentials:      credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
				RetryMaxAttempts: 2,
				APIOptions:       []func(*middleware.Stack) error{Middleware(NewDaemon(conn.LocalAddr().String()))}})
			//lint:ignore SA1029 the key aws-lambda-go puts the trace header under
			ctx := context.WithValue(context.Background(), TraceHeaderKey, "Root=1-a-b;Parent=c;Sampled=1")
			if _, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("Orders")}); err == nil {
				t.Fatal("DescribeTable succeeded")
			}
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			buf := make([]byte, 64<<10)
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("the daemon received nothing: %v", err)
			}
			_, doc, _ := bytes.Cut(buf[:n], []byte("\n"))
			if !json.Valid(doc) || !bytes.Contains(doc, []byte(tc.want)) {
				t.Errorf("the daemon received\n%s\nwant it to hold\n%s", doc, tc.want)
			}
		})
	}
}
