//go:build tracing

package tracing_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-xray-sdk-go/xray"

	"stampduty/shared/config"
	"stampduty/shared/files"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/tracing"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// segment is what the tests read of an X-Ray segment document.
type segment struct {
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Namespace string         `json:"namespace"`
	TraceID   string         `json:"trace_id"`
	ParentID  string         `json:"parent_id"`
	AWS       map[string]any `json:"aws"`
}

// daemon is a UDP listener on loopback standing in for the X-Ray daemon
// Lambda runs beside a function: the X-Ray SDK sends it there.
func daemon(t *testing.T) *net.UDPConn {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := xray.Configure(xray.Config{DaemonAddr: conn.LocalAddr().String()}); err != nil {
		t.Fatal(err)
	}
	return conn
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
// puts in the context), naming the service and the operation; a call
// made outside a traced invocation works and sends nothing.
func TestTracedCalls(t *testing.T) {
	if !tracing.Enabled {
		t.Fatal("tracing.Enabled is false in a build with -tags tracing")
	}
	env := storetest.New(t)
	cfg := config.New(env.Getenv("GetOrderFunction", nil))
	db, fs := store.Open(cfg), files.Open(cfg)
	if err := cfg.Err(); err != nil {
		t.Fatal(err)
	}
	conn := daemon(t)
	table := env.Table("OrdersTable")
	body := []byte("%PDF-1.4 traced")

	t.Run("Untraced", func(t *testing.T) {
		ctx := context.Background()
		if _, err := db.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err != nil {
			t.Fatal(err)
		}
		if err := fs.Put(ctx, "documents/untraced", "application/pdf", body, sha256.Sum256(body)); err != nil {
			t.Fatal(err)
		}
		if segs := received(t, conn, 300*time.Millisecond); len(segs) != 0 {
			t.Errorf("calls outside a trace sent %+v", segs)
		}
	})

	t.Run("InLambdaInvocation", func(t *testing.T) {
		// As in Lambda: LAMBDA_TASK_ROOT set, and the invocation's trace
		// header in the context under the key aws-lambda-go puts it.
		t.Setenv("LAMBDA_TASK_ROOT", "/var/task")
		const root, parent = "1-6a4c0c1e-5b1c2d3e4f5a6b7c8d9e0f1a", "53995c3f42cd8ad8"
		//lint:ignore SA1029 the key Lambda's runtime (aws-lambda-go) and the X-Ray SDK share
		ctx := context.WithValue(context.Background(), "x-amzn-trace-id", "Root="+root+";Parent="+parent+";Sampled=1")
		if _, err := db.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err != nil {
			t.Fatal(err)
		}
		if err := fs.Put(ctx, "documents/traced", "application/pdf", body, sha256.Sum256(body)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := fs.Stat(ctx, "documents/traced"); err != nil {
			t.Fatal(err)
		}
		segs := received(t, conn, 2*time.Second)
		var got []string
		for _, s := range segs {
			got = append(got, s.Name+" "+s.AWS["operation"].(string))
			if s.Type != "subsegment" || s.Namespace != "aws" || s.TraceID != root || s.ParentID != parent {
				t.Errorf("segment %+v: want a subsegment, namespace aws, trace %s, parent %s", s, root, parent)
			}
		}
		slices.Sort(got)
		if want := []string{"DynamoDB DescribeTable", "S3 HeadObject", "S3 PutObject"}; !slices.Equal(got, want) {
			t.Errorf("the daemon received subsegments %q, want %q", got, want)
		}
	})
}
