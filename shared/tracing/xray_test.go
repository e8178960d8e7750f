//go:build tracing

package tracing_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"stampduty/shared/config"
	"stampduty/shared/files"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/tracing"
	"stampduty/shared/tracing/xray"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// segment is what the tests read of an X-Ray segment document.
type segment struct {
	Name      string         `json:"name"`
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Namespace string         `json:"namespace"`
	TraceID   string         `json:"trace_id"`
	ParentID  string         `json:"parent_id"`
	StartTime float64        `json:"start_time"`
	EndTime   float64        `json:"end_time"`
	Error     bool           `json:"error"`
	Fault     bool           `json:"fault"`
	AWS       map[string]any `json:"aws"`
	HTTP      struct {
		Response struct {
			Status int `json:"status"`
		} `json:"response"`
	} `json:"http"`
}

// daemon is a UDP listener on loopback standing in for the X-Ray daemon
// Lambda runs beside a function, named by AWS_XRAY_DAEMON_ADDRESS as
// Lambda names its daemon (for the clients opened after it).
func daemon(t *testing.T) *net.UDPConn {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("AWS_XRAY_DAEMON_ADDRESS", conn.LocalAddr().String())
	return conn
}

// invocation returns a context as Lambda's runtime hands a function's
// handler one: the trace header under aws-lambda-go's key.
func invocation(header string) context.Context {
	//lint:ignore SA1029 the key Lambda's runtime (aws-lambda-go) puts the header under
	return context.WithValue(context.Background(), xray.TraceHeaderKey, header)
}

// received returns the segment documents conn receives until it has been
// quiet for quiet: each datagram is a header line and one document.
func received(t *testing.T, conn *net.UDPConn, quiet time.Duration) []segment {
	t.Helper()
	var segs []segment
	buf := make([]byte, 64<<10)
	for {
		conn.SetReadDeadline(time.Now().Add(quiet))
		n, err := conn.Read(buf)
		if err != nil {
			return segs
		}
		header, doc, ok := bytes.Cut(buf[:n], []byte("\n"))
		if !ok || !bytes.Contains(header, []byte(`"format"`)) {
			t.Fatalf("the daemon received %q, not a header line and a segment", buf[:n])
		}
		var s segment
		if err := json.Unmarshal(doc, &s); err != nil {
			t.Fatalf("the daemon received %q: %v", doc, err)
		}
		segs = append(segs, s)
	}
}

// TestTracedCalls: built with tracing, the clients store.Open and
// files.Open make send a subsegment for each call to DynamoDB (dynalite)
// and S3 (the local S3 server) to the X-Ray daemon, in the trace and under
// the segment of the invocation (Lambda's trace header, which its runtime
// puts in the context), naming the service, the operation, the status and
// the request id, and marking a refused call an error; a call outside a
// sampled invocation works and sends nothing.
func TestTracedCalls(t *testing.T) {
	if !tracing.Enabled {
		t.Fatal("tracing.Enabled is false in a build with -tags tracing")
	}
	env := storetest.New(t)
	conn := daemon(t)
	cfg := config.New(env.Getenv("GetOrderFunction", nil))
	db, fs := store.Open(cfg), files.Open(cfg)
	if err := cfg.Err(); err != nil {
		t.Fatal(err)
	}
	table := env.Table("OrdersTable")
	body := []byte("%PDF-1.4 traced")
	const root, parent = "1-6a4c0c1e-5b1c2d3e4f5a6b7c8d9e0f1a", "53995c3f42cd8ad8"

	for name, ctx := range map[string]context.Context{
		"Untraced":   context.Background(),
		"NotSampled": invocation("Root=" + root + ";Parent=" + parent + ";Sampled=0"),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := db.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err != nil {
				t.Fatal(err)
			}
			if err := fs.Put(ctx, "documents/untraced", "application/pdf", body, sha256.Sum256(body)); err != nil {
				t.Fatal(err)
			}
			if segs := received(t, conn, 300*time.Millisecond); len(segs) != 0 {
				t.Errorf("calls outside a sampled trace sent %+v", segs)
			}
		})
	}

	t.Run("InLambdaInvocation", func(t *testing.T) {
		ctx := invocation("Root=" + root + ";Parent=" + parent + ";Sampled=1")
		if _, err := db.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err != nil {
			t.Fatal(err)
		}
		if err := fs.Put(ctx, "documents/traced", "application/pdf", body, sha256.Sum256(body)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := fs.Stat(ctx, "documents/traced"); err != nil {
			t.Fatal(err)
		}
		_, err := db.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("NoSuchTable")})
		if err == nil {
			t.Fatal("DescribeTable of a table that does not exist succeeded")
		}
		segs := received(t, conn, 2*time.Second)
		var got []string
		ids := map[string]bool{}
		for _, s := range segs {
			got = append(got, fmt.Sprintf("%s %s %d error=%v fault=%v", s.Name, s.AWS["operation"], s.HTTP.Response.Status, s.Error, s.Fault))
			if s.Type != "subsegment" || s.Namespace != "aws" || s.TraceID != root || s.ParentID != parent {
				t.Errorf("segment %+v: want a subsegment, namespace aws, trace %s, parent %s", s, root, parent)
			}
			if len(s.ID) != 16 || ids[s.ID] || s.StartTime <= 0 || s.EndTime < s.StartTime || s.AWS["region"] != localdb.Region {
				t.Errorf("segment %+v: want a new 16-digit id, start and end times, region %s", s, localdb.Region)
			}
			ids[s.ID] = true
			if s.Name == "DynamoDB" && s.AWS["request_id"] == nil {
				t.Errorf("segment %+v: want DynamoDB's request id", s)
			}
		}
		slices.Sort(got)
		want := []string{"DynamoDB DescribeTable 200 error=false fault=false", "DynamoDB DescribeTable 400 error=true fault=false",
			"S3 HeadObject 200 error=false fault=false", "S3 PutObject 200 error=false fault=false"}
		if !slices.Equal(got, want) {
			t.Errorf("the daemon received subsegments\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
