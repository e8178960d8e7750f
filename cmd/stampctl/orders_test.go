package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/cmd/internal/apigw"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// opsAPI is an operator API that checks signatures as the local stack
// does (apigw's AWS_IAM routes) and answers from canned orders, recording
// what it was asked.
type opsAPI struct {
	mu       sync.Mutex
	requests []events.APIGatewayV2HTTPRequest
	order    stampduty.OpsOrder
	// bucket is where a pre-signed upload is sent; staged what it got.
	bucket *httptest.Server
	staged []byte
}

func (a *opsAPI) Invoke(_ context.Context, payload []byte) ([]byte, error) {
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.requests = append(a.requests, ev)
	a.mu.Unlock()
	answer := func(status int, v any) ([]byte, error) {
		b, _ := json.Marshal(v)
		return json.Marshal(events.APIGatewayV2HTTPResponse{StatusCode: status, Body: string(b)})
	}
	switch {
	case ev.RequestContext.HTTP.Method == http.MethodPatch && strings.Contains(ev.Body, `"Printed"`):
		return answer(409, map[string]any{"data": nil, "error": map[string]any{"status": 409, "name": "ConflictError",
			"message": "Cannot move a fulfillment from Pending to Printed."}})
	case strings.HasSuffix(ev.RawPath, "/cancel") && strings.Contains(ev.Body, "late"):
		return answer(409, map[string]any{"data": nil, "error": map[string]any{"status": 409, "name": "ConflictError",
			"message": stampduty.MsgOperatorCancel}})
	case strings.HasSuffix(ev.RawPath, "/cancel"):
		var b struct{ Reason string }
		json.Unmarshal([]byte(ev.Body), &b)
		o, at := a.order, "2026-11-21T05:00:00.000Z"
		o.CancelledAt, o.UpdatedAt, o.Cancellation = &at, at, &stampduty.Cancellation{By: stampduty.ByOperator, Reason: &b.Reason}
		return answer(200, map[string]any{"data": o})
	case ev.RequestContext.HTTP.Method == http.MethodPatch:
		o := a.order
		o.Fulfillments = slices.Clone(o.Fulfillments)
		for i, f := range o.Fulfillments { // the one the path names moves
			if strings.HasSuffix(ev.RawPath, "/fulfillments/"+f.DocumentID) {
				o.Fulfillments[i].Status = stampduty.StatusCreated
			}
		}
		return answer(200, map[string]any{"data": o})
	case strings.HasSuffix(ev.RawPath, "/certificate/upload"):
		var d struct{ Size int }
		json.Unmarshal([]byte(ev.Body), &d)
		return answer(200, map[string]any{"data": map[string]any{"upload": "up1", "method": "PUT", "url": a.bucket.URL + "/uploads/up1",
			"headers": map[string]string{"Content-Type": "application/pdf", "Content-Length": strconv.Itoa(d.Size)}, "fields": map[string]string{},
			"expiresAt": "2026-11-21T04:24:00.123Z"}})
	case ev.RawPath == "/api/ops/live-orders":
		next := "CURSOR"
		return answer(200, map[string]any{"data": []stampduty.OpsOrder{a.order}, "meta": map[string]any{"pagination": map[string]any{"pageSize": 25, "next": next}}})
	default:
		return answer(200, map[string]any{"data": a.order, "meta": map[string]any{}})
	}
}

// opsIAM is the key pair the operator API of TestOrdersCommands accepts.
var opsIAM = apigw.IAM{Credentials: aws.Credentials{AccessKeyID: "AKIAOPS", SecretAccessKey: "ops-secret"}, Region: "us-east-1",
	Account: "000000000000", Principal: functest.Operator}

// newOpsServer serves api's operator routes on loopback behind the local
// API Gateway (apigw), which checks signatures against iam as the local
// stack does. It is closed when the test ends.
func newOpsServer(t *testing.T, api *opsAPI, iam apigw.IAM) *httptest.Server {
	var routes []apigw.Route
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/ops/live-orders"}, {"GET", "/api/ops/live-orders/{documentId}"},
		{"PATCH", "/api/ops/live-orders/{documentId}/fulfillments/{f}"}, {"PUT", "/api/ops/live-orders/{documentId}/fulfillments/{f}/certificate"},
	} {
		routes = append(routes, apigw.Route{Method: r.method, Path: r.path, Target: api, IAM: true})
	}
	routes = append(routes, apigw.Route{Method: "POST", Path: "/api/ops/live-orders/{documentId}/fulfillments/{f}/certificate/upload", Target: api, IAM: true},
		apigw.Route{Method: "POST", Path: "/api/ops/live-orders/{documentId}/cancel", Target: api, IAM: true})
	api.bucket = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPut || r.Header.Get("Content-Type") != "application/pdf" || r.ContentLength != int64(len(b)) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		api.mu.Lock()
		api.staged = b
		api.mu.Unlock()
	}))
	t.Cleanup(api.bucket.Close)
	srv := httptest.NewServer(apigw.NewHandler(routes, apigw.Options{IAM: &iam}))
	t.Cleanup(srv.Close)
	return srv
}

// count returns how many requests a has had.
func (a *opsAPI) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.requests)
}

// opsCommands is what TestOrdersCommands's cases share: the fake ops API
// (one order), the environment stampctl runs with, and the certificate
// file the API serves.
type opsCommands struct {
	api  *opsAPI
	vars map[string]string
	cert []byte
	// h is nil: stampctl runs against the fake API alone, no tables.
	h *harness
}

// last returns the last request the API got.
func (c *opsCommands) last() events.APIGatewayV2HTTPRequest {
	c.api.mu.Lock()
	defer c.api.mu.Unlock()
	return c.api.requests[len(c.api.requests)-1]
}

func TestOrdersCommands(t *testing.T) {
	cert := []byte("%PDF-1.7\ncertificate\n%%EOF\n")
	sum := sha256.Sum256(cert)
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(cert) }))
	defer files.Close()
	api := &opsAPI{order: stampduty.OpsOrder{Owner: "alice", Caller: "alice", Order: stampduty.Order{DocumentID: "o1", CreatedAt: "2026-11-21T04:09:00.123Z", Livemode: true,
		Fulfillments: []stampduty.Fulfillment{{DocumentID: "f1", Status: stampduty.StatusPending,
			CertificateFile: &stampduty.File{Name: "certificate.pdf", SHA256: hex.EncodeToString(sum[:]), URL: files.URL + "/c"}}}}}}
	srv := newOpsServer(t, api, opsIAM)
	vars := map[string]string{"STAMPDUTY_API_URL": srv.URL, "AWS_ACCESS_KEY_ID": "AKIAOPS", "AWS_SECRET_ACCESS_KEY": "ops-secret", "AWS_REGION": "us-east-1"}
	for k, v := range vars {
		t.Setenv(k, v) // the AWS SDK reads its own variables from the process
	}
	c := &opsCommands{api: api, vars: vars, cert: cert}
	last := c.last
	var h *harness

	t.Run("Queue", func(t *testing.T) {
		r := h.run(t, "", vars, "orders", "queue", "--status", "Pending")
		if r.code != 0 || !strings.Contains(r.stdout, "o1") || !strings.Contains(r.stdout, "alice") ||
			!strings.Contains(r.stdout, "stampctl orders queue --status Pending --cursor CURSOR") {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if ev := last(); ev.RawQueryString != "pagination%5BpageSize%5D=25&status=Pending" || ev.RequestContext.Authorizer.IAM.UserARN != functest.Operator {
			t.Errorf("request %s?%s", ev.RawPath, ev.RawQueryString)
		}
	})
	t.Run("QueueOfTestOrders", func(t *testing.T) {
		r := h.run(t, "", vars, "orders", "queue", "--mode", "test")
		if r.code != 0 || !strings.Contains(r.stdout, "stampctl orders queue --status Pending --mode test --cursor CURSOR") {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if ev := last(); ev.RawQueryString != "mode=test&pagination%5BpageSize%5D=25&status=Pending" {
			t.Errorf("request %s?%s, want mode=test", ev.RawPath, ev.RawQueryString)
		}
		h.run(t, "", vars, "orders", "queue", "--mode", "live")
		if ev := last(); strings.Contains(ev.RawQueryString, "mode") {
			t.Errorf("request %s?%s, want the live queue (no mode)", ev.RawPath, ev.RawQueryString)
		}
	})
	t.Run("QueueNamesTheCallerAndMarksATestOrder", func(t *testing.T) {
		api.mu.Lock()
		one := api.order
		api.order.Owner, api.order.Livemode = "alice~test", false
		api.mu.Unlock()
		defer func() { api.mu.Lock(); api.order = one; api.mu.Unlock() }()
		r := h.run(t, "", vars, "orders", "queue", "--status", "Pending")
		if r.code != 0 || !strings.Contains(r.stdout, "alice (test)") || strings.Contains(r.stdout, "~test") {
			t.Errorf("exit %d, want the owner shown as \"alice (test)\"\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("AdvanceFlagsAfterTheOrder", func(t *testing.T) {
		r := h.run(t, "", vars, "orders", "advance", "o1", "--to", "Created", "--ref", "SUBIN-1")
		if r.code != 0 || !strings.Contains(r.stdout, "order o1 fulfillment f1 is Created") {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		ev := last()
		if ev.RawPath != "/api/ops/live-orders/o1/fulfillments/f1" || ev.Body != `{"order_status":"Created","unique_doc_ref":"SUBIN-1"}` {
			t.Errorf("request %s %s", ev.RawPath, ev.Body)
		}
	})
	t.Run("SeveralPapersNameOne", c.severalPapersNameOne)
	t.Run("ErrRefusedTransitionSaysWhy", func(t *testing.T) {
		r := h.run(t, "", vars, "orders", "advance", "o1", "--to", "Printed")
		if r.code != 1 || !strings.Contains(r.stderr, "409 ConflictError: Cannot move a fulfillment from Pending to Printed.") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("AttachCertificate", c.attachCertificate)
	t.Run("AttachCertificateOverTheBodyLimit", c.attachCertificateOverTheBodyLimit)
	t.Run("Cancel", func(t *testing.T) {
		r := h.run(t, "", vars, "orders", "cancel", "o1", "--reason", `Duplicate of "o0"`)
		if r.code != 0 || r.stdout != "order o1 is cancelled, at 2026-11-21T05:00:00.000Z by the operator: Duplicate of \"o0\"\n" {
			t.Errorf("exit %d\n%q%s", r.code, r.stdout, r.stderr)
		}
		ev := last()
		if ev.RequestContext.HTTP.Method != http.MethodPost || ev.RawPath != "/api/ops/live-orders/o1/cancel" ||
			ev.Body != `{"reason":"Duplicate of \"o0\""}` || ev.Headers["content-type"] != "application/json" {
			t.Errorf("request %s %s %s %v", ev.RequestContext.HTTP.Method, ev.RawPath, ev.Body, ev.Headers["content-type"])
		}
	})
	t.Run("ErrCancelWithoutReason", func(t *testing.T) {
		n := api.count()
		if r := h.run(t, "", vars, "orders", "cancel", "o1"); r.code != 2 || !strings.Contains(r.stderr, "--reason is required") {
			t.Errorf("exit %d %s", r.code, r.stderr)
		}
		if api.count() != n {
			t.Error("a cancel without a reason reached the API")
		}
	})
	t.Run("ErrRefusedCancelSaysWhy", func(t *testing.T) {
		r := h.run(t, "", vars, "orders", "cancel", "o1", "--reason", "too late")
		if r.code != 1 || !strings.Contains(r.stderr, "409 ConflictError: "+stampduty.MsgOperatorCancel) {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("DownloadChecksTheSum", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "c.pdf")
		r := h.run(t, "", vars, "orders", "download", "o1", "--out", out)
		if got, _ := os.ReadFile(out); r.code != 0 || string(got) != string(cert) {
			t.Errorf("exit %d, file %q\n%s", r.code, got, r.stderr)
		}
		api.order.Fulfillments[0].CertificateFile.SHA256 = strings.Repeat("0", 64)
		if r := h.run(t, "", vars, "orders", "download", "o1", "--out", out); r.code != 1 || !strings.Contains(r.stderr, "SHA-256") {
			t.Errorf("a wrong sum: exit %d %s", r.code, r.stderr)
		}
	})
	t.Run("ErrUnsigned", func(t *testing.T) {
		wrong := map[string]string{"STAMPDUTY_API_URL": srv.URL}
		t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
		r := h.run(t, "", wrong, "orders", "show", "o1")
		if r.code != 1 || !strings.Contains(r.stderr, "403 Forbidden: Forbidden") {
			t.Errorf("exit %d %s", r.code, r.stderr)
		}
		// What to do about it: the key it signed with, and the pair the local stack takes.
		for _, want := range []string{"key AKIAOPS, region us-east-1", "execute-api:Invoke",
			localdb.OperatorExports(localdb.OperatorKeyID, localdb.OperatorSecret, localdb.Region, srv.URL)} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the 403 does not say %q:\n%s", want, r.stderr)
			}
		}
	})
}

func (c *opsCommands) severalPapersNameOne(t *testing.T) {
	c.api.mu.Lock()
	one := c.api.order
	c.api.order.Fulfillments = append(slices.Clone(one.Fulfillments), stampduty.Fulfillment{DocumentID: "f2", Status: stampduty.StatusPending})
	c.api.mu.Unlock()
	defer func() { c.api.mu.Lock(); c.api.order = one; c.api.mu.Unlock() }()
	before := c.api.count()
	r := c.h.run(t, "", c.vars, "orders", "advance", "o1", "--to", "Created", "--ref", "SUBIN-2")
	if r.code != 1 || !strings.Contains(r.stderr, "order o1 has 2 fulfillments: name one with --fulfillment") {
		t.Errorf("without --fulfillment: exit %d\n%s", r.code, r.stderr)
	}
	if got := c.api.count() - before; got != 1 { // the read of the order, no change
		t.Errorf("%d requests without --fulfillment, want the one read", got)
	}
	r = c.h.run(t, "", c.vars, "orders", "advance", "o1", "--to", "Created", "--ref", "SUBIN-2", "--fulfillment", "f2")
	if ev := c.last(); r.code != 0 || ev.RawPath != "/api/ops/live-orders/o1/fulfillments/f2" {
		t.Errorf("with --fulfillment f2: exit %d, request %s\n%s", r.code, ev.RawPath, r.stderr)
	}
}

func (c *opsCommands) attachCertificate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cert 1.pdf")
	os.WriteFile(file, c.cert, 0o600)
	r := c.h.run(t, "", c.vars, "orders", "attach-certificate", "o1", file)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ev := c.last()
	if ev.RawPath != "/api/ops/live-orders/o1/fulfillments/f1/certificate" || ev.Headers["content-type"] != "application/pdf" || ev.RawQueryString != "name=cert%201.pdf" {
		t.Errorf("request %s?%s %v", ev.RawPath, ev.RawQueryString, ev.Headers["content-type"])
	}
}

func (c *opsCommands) attachCertificateOverTheBodyLimit(t *testing.T) {
	big := make([]byte, stampduty.MaxDirectCertificateSize)
	copy(big, c.cert)
	file := filepath.Join(t.TempDir(), "scan.pdf")
	os.WriteFile(file, big, 0o600)
	r := c.h.run(t, "", c.vars, "orders", "attach-certificate", "o1", file)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c.api.mu.Lock()
	n := len(c.api.requests)
	upload, attach, staged := c.api.requests[n-2], c.api.requests[n-1], c.api.staged
	c.api.mu.Unlock()
	if upload.RawPath != "/api/ops/live-orders/o1/fulfillments/f1/certificate/upload" ||
		upload.Body != `{"mime":"application/pdf","name":"scan.pdf","size":10485760}` {
		t.Errorf("upload request %s %s", upload.RawPath, upload.Body)
	}
	if len(staged) != len(big) {
		t.Errorf("the bucket got %d bytes, want %d", len(staged), len(big))
	}
	if attach.RawPath != "/api/ops/live-orders/o1/fulfillments/f1/certificate" || attach.Body != `{"upload":"up1"}` ||
		attach.Headers["content-type"] != "application/json" {
		t.Errorf("attach request %s %s %v", attach.RawPath, attach.Body, attach.Headers["content-type"])
	}
}

// TestOrdersBackfill: the command queues the orders stored before the
// queue, and moves those stored before its shards into their shard, once.
func TestOrdersBackfill(t *testing.T) {
	h := newHarness(t)
	h.vars["ORDERS_TABLE"] = h.env.Table("OrdersTable")
	functest.Seed(t, h.env)
	os := functest.AddOrders(t, h.env, "alice", 2)
	key := func(seq string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: "alice"}, "seq": &types.AttributeValueMemberN{Value: seq}}
	}
	// As stored before the queue: no queue keys; before its shards: the
	// bare status.
	_, err := h.env.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(h.vars["ORDERS_TABLE"]),
		Key: key("1"), UpdateExpression: aws.String("REMOVE qs, qk")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.env.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(h.vars["ORDERS_TABLE"]),
		Key: key("2"), UpdateExpression: aws.String("SET qs = :s"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: stampduty.StatusPending}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := h.mustRun(t, "", "orders", "backfill"); !strings.Contains(r.stdout, "queued 2 orders") {
		t.Errorf("first run: %s", r.stdout)
	}
	if r := h.mustRun(t, "", "orders", "backfill"); !strings.Contains(r.stdout, "queued 0 orders") {
		t.Errorf("second run: %s", r.stdout)
	}
	for _, seq := range []string{"1", "2"} {
		out, err := h.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(h.vars["ORDERS_TABLE"]), Key: key(seq)})
		if qs, _ := out.Item["qs"].(*types.AttributeValueMemberS); err != nil || qs == nil || !strings.HasPrefix(qs.Value, stampduty.StatusPending+"#") {
			t.Errorf("order %s after the backfill: qs %v, %v; want its shard of Pending", seq, out.Item["qs"], err)
		}
	}
	page, _, err := h.db.Orders(h.vars["ORDERS_TABLE"]).Queue(context.Background(), stampduty.StatusPending, false, "", 10)
	if err != nil || len(page) != 2 || page[0].DocumentID != os[0].DocumentID || page[1].DocumentID != os[1].DocumentID {
		t.Errorf("queue = %v, %v", page, err)
	}
}

// TestOrdersClaimNumbers: the command claims the numbers of the papers
// stored before the numbers table, so that a later move cannot give them
// to another paper; it prints each number two stored papers share, and
// running it again claims nothing new.
func TestOrdersClaimNumbers(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.vars["NUMBERS_TABLE"] = h.env.Table("NumbersTable")
	functest.Seed(t, h.env)
	table := h.db.Orders(h.vars["ORDERS_TABLE"])
	alice, bob := functest.AddOrders(t, h.env, "alice", 2), functest.AddOrders(t, h.env, "bob", 1)
	// As stored before numbers were claimed: straight into the table.
	const cn = "IN-KA93689528000869Y"
	for _, n := range []struct {
		o        stampduty.Order
		ref, cn  string
		procured bool
	}{{alice[0], "SUBIN-A1", cn, true}, {alice[1], "SUBIN-A2", "", false}, {bob[0], "SUBIN-A1", "", false}} {
		s, err := table.ByDocument(ctx, n.o.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		o := s.Order
		o.Fulfillments = []stampduty.Fulfillment{o.Fulfillments[0]}
		o.Fulfillments[0].Status, o.Fulfillments[0].UniqueDocRef, o.Fulfillments[0].CertificateNumber = stampduty.StatusCreated, n.ref, n.cn
		if n.procured {
			o.Fulfillments[0].Status = stampduty.StatusProcured
		}
		if err := table.Replace(ctx, s, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range []string{"first", "again"} {
		r := h.mustRun(t, "", "orders", "claim-numbers")
		if !strings.Contains(r.stdout, "claimed 3 numbers of 3 papers; 1 numbers shared by two papers") ||
			!strings.Contains(r.stdout, "shared unique_doc_ref SUBIN-A1: ") {
			t.Errorf("%s run: %s", run, r.stdout)
		}
	}
	// A move of another paper to alice's certificate_number is refused.
	other := functest.AddOrders(t, h.env, "carol", 1)[0]
	f := functest.Fulfiller(h.env)
	ff := other.Fulfillments[0].DocumentID
	if _, err := f.Advance(ctx, other.DocumentID, ff, stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "SUBIN-C1"}, "op"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Advance(ctx, other.DocumentID, ff, stampduty.Change{Status: stampduty.StatusProcured, CertificateNumber: cn}, "op"); stampduty.ErrorCode(err) != stampduty.ECONFLICT {
		t.Errorf("a move to a stored paper's number after the backfill: %v, want ECONFLICT", err)
	}
}
