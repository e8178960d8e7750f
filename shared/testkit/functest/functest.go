// Package functest drives the Lambda functions in tests as API Gateway and
// the Lambda runtime do (HTTP API payload 2.0 events through the entry
// point main uses), against real engines seeded with the sample catalogue,
// checks every answer against openapi.yaml, and checks a function against
// template.yaml: the environment it reads, the DynamoDB actions it uses.
package functest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/apipath"
	"stampduty/shared/auth"
	"stampduty/shared/duty"
	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/links"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/testkit/syncbuf"
)

// Stack is one test's function, its tables and the proxy that watches its
// DynamoDB calls: Handler as its wire function built it, Lambda the
// handler main hands to lambda.Start over it (measured as function.Main
// measures it), Read every environment variable it read, Logs everything
// it logged, Metrics the metric records its invocations wrote (on AWS both
// go to standard output; apart here, so that a test of the log lines reads
// those only).
type Stack struct {
	t        testing.TB
	Env      *storetest.Env
	Proxy    *storetest.Proxy
	Function samtemplate.Function
	Handler  http.Handler
	Lambda   function.Handler
	Read     map[string]bool
	Logs     *SyncBuffer
	Metrics  *SyncBuffer
	unrouted *sync.Map // the requests checkRouted failed, each told once
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers.
type SyncBuffer = syncbuf.Buffer

// New creates fresh tables, seeded (Seed), and builds function logicalID's
// handler with wire from the environment template.yaml gives it, pointed at
// a recording proxy.
func New(t testing.TB, logicalID string, wire function.Wire) *Stack {
	t.Helper()
	s := newStack(t, logicalID)
	s.Restart(wire)
	return s
}

// newStack creates the seeded tables of function logicalID behind a proxy.
func newStack(t testing.TB, logicalID string) *Stack {
	t.Helper()
	env := storetest.New(t)
	s := &Stack{t: t, Env: env, Read: map[string]bool{}, Logs: &SyncBuffer{}, Metrics: &SyncBuffer{}, unrouted: &sync.Map{}}
	Seed(t, env)
	s.Proxy = env.NewProxy()
	s.Function, _ = env.Template.Function(logicalID) // Getenv fails the test for an unknown one
	return s
}

// Restart replaces the function's instance with a new one built by wire
// (a cold start): same tables, same proxy, nothing cached.
func (s *Stack) Restart(wire function.Wire) {
	s.t.Helper()
	logger := slog.New(slog.NewJSONHandler(s.Logs, nil))
	getenv := s.Env.Getenv(s.Function.LogicalID, s.Read)
	h, err := function.Build(wire, getenv, logger)
	if err != nil {
		s.t.Fatalf("wire %s: %v", s.Function.LogicalID, err)
	}
	s.Handler, s.Lambda = h, function.Measured(function.MeterFromEnv(getenv, s.Metrics), function.Lambda(h, logger))
}

// NewScheduled is New for a scheduled function: it builds its run,
// measured as function.Scheduled measures it.
func NewScheduled(t testing.TB, logicalID string, wire func(function.Deps) function.Run) (*Stack, function.Run) {
	t.Helper()
	s := newStack(t, logicalID)
	getenv := s.Env.Getenv(logicalID, s.Read)
	run, err := function.BuildRun(wire, getenv)
	if err != nil {
		t.Fatalf("wire %s: %v", logicalID, err)
	}
	return s, function.MeasuredRun(function.MeterFromEnv(getenv, s.Metrics), run)
}

// Seed loads the sample catalogue and the dev token into env's tables, as
// the local stack does (localdb.Seed).
func Seed(t testing.TB, env *storetest.Env) {
	t.Helper()
	if _, err := localdb.Seed(context.Background(), env.DB(), env.FixtureIDs(), env.Table, filepath.Join(root(t), localdb.SampleCatalogue), true); err != nil {
		t.Fatal(err)
	}
}

// SeedCatalogue stores the articles of a catalogue file (its bytes) in
// env's tables and publishes them, as `make local` seeds its file.
func SeedCatalogue(t testing.TB, env *storetest.Env, file []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "articles.json")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := localdb.Seed(context.Background(), env.DB(), env.FixtureIDs(), env.Table, path, false); err != nil {
		t.Fatalf("seed %s: %v", path, err)
	}
}

// QueryCorpus returns the fuzz corpus of raw query strings kept once in
// shared/strapiquery/testdata/fuzz/FuzzQuery, for every fuzz target that reads
// a query.
func QueryCorpus(tb testing.TB) []string {
	tb.Helper()
	dir := filepath.Join(root(tb), "shared/strapiquery/testdata/fuzz/FuzzQuery")
	files, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		head, value, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
		quoted, prefixed := strings.CutPrefix(value, "string(")
		quoted, suffixed := strings.CutSuffix(quoted, ")")
		if !prefixed || !suffixed || head != "go test fuzz v1" {
			tb.Fatalf("%s: not one string in go test's corpus format", f.Name())
		}
		s, err := strconv.Unquote(quoted)
		if err != nil {
			tb.Fatalf("%s: %v", f.Name(), err)
		}
		out = append(out, s)
	}
	return out
}

// DevHeaders are the headers of a JSON request with the local dev token.
// Copy the map to change it.
var DevHeaders = map[string]string{"authorization": "Bearer " + localdb.DevToken, "content-type": "application/json"}

// AddToken registers secret as a token of owner.
func AddToken(t testing.TB, env *storetest.Env, secret, owner string) {
	t.Helper()
	err := env.DB().Tokens(env.Table("TokensTable")).Create(context.Background(), auth.Token{Hash: localdb.Hasher().Hash(secret), Owner: owner, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
}

// AddTestToken registers secret (auth.TestPrefix…) as a test token of
// owner: it authenticates as stampduty.TestOwnerOf(owner).
func AddTestToken(t testing.TB, env *storetest.Env, secret, owner string) {
	t.Helper()
	err := env.DB().Tokens(env.Table("TokensTable")).Create(context.Background(), auth.Token{Hash: localdb.Hasher().Hash(secret), Owner: owner, CreatedAt: time.Now(), Test: true})
	if err != nil {
		t.Fatal(err)
	}
}

func root(t testing.TB) string {
	r, err := localdb.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Event reads events/<name>.json.
func Event(t testing.TB, name string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), "events", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("events/%s.json: %v", name, err)
	}
	return ev
}

// Request builds the event API Gateway sends for a request; rawQuery stays
// percent-encoded.
func Request(method, path, rawQuery string, headers map[string]string, body string) events.APIGatewayV2HTTPRequest {
	h := map[string]string{"host": "api.example.com", "user-agent": "functest"}
	for k, v := range headers {
		h[strings.ToLower(k)] = v
	}
	return events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       method + " " + path,
		RawPath:        path,
		RawQueryString: rawQuery,
		Headers:        h,
		Body:           body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: domainName,
			RequestID:  "test",
			RouteKey:   method + " " + path,
			Stage:      "$default",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"},
		},
	}
}

// Response is a function's answer.
type Response struct {
	Status  int
	Headers map[string]string
	Body    string
}

// Invoke runs ev through the function's Lambda entry point; an answer
// openapi.yaml does not describe fails the test (CheckOpenAPI).
func (s *Stack) Invoke(ev events.APIGatewayV2HTTPRequest) Response {
	s.t.Helper()
	out, err := s.Lambda(context.Background(), ev)
	if err != nil {
		s.t.Fatalf("invoke: %v", err)
	}
	if err := CheckOpenAPI(ev, out); err != nil {
		s.t.Errorf("the answer is not what openapi.yaml describes: %v", err)
	}
	resp := Response{Status: out.StatusCode, Headers: out.Headers, Body: out.Body}
	if err := s.checkRouted(ev, resp); err != nil {
		if _, told := s.unrouted.LoadOrStore(ev.RequestContext.HTTP.Method+" "+ev.RawPath, true); !told {
			s.t.Error(err)
		}
	}
	return resp
}

// checkRouted fails a request the handler serves that template.yaml does
// not route to the function: on AWS, API Gateway would never hand it
// over, so the route is missing from the template (or the test invokes
// the wrong function). A request the handler's own router refuses (405,
// 404 `Not Found`, a redirect) is served by no route, and passes; so does
// any request to a function that has the $default route.
func (s *Stack) checkRouted(ev events.APIGatewayV2HTTPRequest, resp Response) error {
	if resp.Status == http.StatusMethodNotAllowed || resp.Status/100 == 3 ||
		resp.Status == http.StatusNotFound && strings.Contains(resp.Body, `"message":"Not Found"`) {
		return nil
	}
	method, path := ev.RequestContext.HTTP.Method, ev.RawPath
	for _, r := range s.Function.Routes {
		if r.Path == samtemplate.DefaultRoute {
			return nil
		}
		if _, ok := apipath.Parse(r.Path).Match(path); ok && (r.Method == method || r.Method == "ANY" ||
			method == http.MethodHead && r.Method == http.MethodGet) {
			return nil
		}
	}
	return fmt.Errorf("%s %s: %s answered %d, but template.yaml routes no such request to it (add the route to its Events, then `make generate`)",
		method, path, s.Function.LogicalID, resp.Status)
}

// OK checks that r answered 200 with a JSON body and decodes it as a T.
func OK[T any](t testing.TB, r Response) T {
	t.Helper()
	var body T
	if r.Status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", r.Status, r.Body)
	} else if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	return body
}

// domainName is the API's domain in the requests a Stack's function is
// given.
const domainName = "api.example.com"

// Download reads url, a file address an answer of s's function gave, as a
// browser would: a link of the service's own (links.Path at the domain the
// stack's requests name) is followed as DownloadFileFunction follows it,
// through files.Store.Follow (the link's expiry and signature checked,
// under the local key), to the pre-signed address it redirects to; a
// link that does not work is Follow's answer's status (403).
func (s *Stack) Download(t testing.TB, url string) Response {
	t.Helper()
	token, ok := strings.CutPrefix(url, "https://"+domainName+links.Path)
	if !ok {
		return Download(t, url)
	}
	signer, err := links.NewSigner([]byte(localdb.LinkKey))
	if err != nil {
		t.Fatal(err)
	}
	to, err := files.New(s.Env.S3(), s.Env.Table("FilesBucket")).WithLinks(signer).Follow(context.Background(), token, time.Now())
	if err != nil {
		return Response{Status: function.NewErrorBody(err).Error.Status}
	}
	return Download(t, to)
}

// Download reads url, a pre-signed address (a webhook's body carries
// them), as a browser would.
func Download(t testing.TB, url string) Response {
	t.Helper()
	resp, err := http.Get(url)
	var body []byte
	if err == nil {
		defer resp.Body.Close()
		body, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return Response{Status: resp.StatusCode, Body: string(body)}
}

// CheckEvents checks the status the function answers to each event of
// want (events/<name>.json).
func (s *Stack) CheckEvents(t testing.TB, want map[string]int) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if got := s.Invoke(Event(t, name)).Status; got != want[name] {
			t.Errorf("events/%s.json: status %d, want %d", name, got, want[name])
		}
	}
}

// Error checks that r is a Strapi error envelope for its status
// (CheckEnvelope) and decodes it.
func (r Response) Error(t testing.TB) Envelope {
	t.Helper()
	return CheckEnvelope(t, r.Status, []byte(r.Body))
}

// CheckTemplate checks the function against template.yaml once calls hold
// every path of it: each variable the template sets was read, each
// DynamoDB action used is granted, and each granted action was used — no
// function holds a permission, least of all a write, it does not use.
func (s *Stack) CheckTemplate(calls []storetest.ProxyCall, elsewhere ...Elsewhere) {
	s.t.Helper()
	for name := range s.Function.Env {
		if !s.Read[name] {
			s.t.Errorf("template.yaml sets %s for %s, which never reads it", name, s.Function.LogicalID)
		}
	}
	granted, err := s.Function.TableGrants()
	if err != nil {
		s.t.Error(err)
	}
	used := s.Env.Used(calls)
	for table, ops := range used {
		for op := range ops {
			if !granted[table][op] {
				s.t.Errorf("%s calls %s on %s, which its policy does not grant", s.Function.LogicalID, op, table)
			}
		}
	}
	for table, ops := range granted {
		for _, op := range slices.Sorted(maps.Keys(ops)) {
			if used[table][op] == 0 && !slices.ContainsFunc(elsewhere, func(e Elsewhere) bool { return e.Table == table }) {
				s.t.Errorf("%s is granted %s on %s, which it never uses", s.Function.LogicalID, op, table)
			}
		}
	}
}

// Elsewhere names a table whose grants another test of the function
// exercises (Test), so that CheckTemplate does not ask this one to.
type Elsewhere struct{ Table, Test string }

// CheckRoutes checks that the handler serves each of the function's
// routes (no 405), and that the catch-all ($default) answers 404
// NotFoundError.
func (s *Stack) CheckRoutes() {
	s.t.Helper()
	if len(s.Function.Routes) == 0 {
		s.t.Errorf("template.yaml gives %s no route", s.Function.LogicalID)
	}
	for _, r := range s.Function.Routes {
		if r.Path == samtemplate.DefaultRoute {
			ev := Request(http.MethodGet, "/api/no-such-route", "", nil, "")
			ev.RouteKey, ev.RequestContext.RouteKey = r.Key(), r.Key()
			if resp := s.Invoke(ev); resp.Status != http.StatusNotFound || resp.Error(s.t).Error.Name != "NotFoundError" {
				s.t.Errorf("%s: status %d, the catch-all does not answer 404 NotFoundError: %s", r.Key(), resp.Status, resp.Body)
			}
			continue
		}
		resp := s.Invoke(Request(r.Method, r.Path, "", nil, ""))
		if resp.Status == http.StatusMethodNotAllowed || resp.Status == http.StatusNotFound && !strings.Contains(resp.Body, "Purpose") {
			s.t.Errorf("%s %s: status %d, the handler does not serve the route", r.Method, r.Path, resp.Status)
		}
	}
}

// AddOrders stores n Pending orders of owner (Affidavit, Karnataka, 20,
// first parties "Party 1".."Party n") straight in env's tables, each with
// its seq in its documentId as the create-order workflow stores them.
func AddOrders(t testing.TB, env *storetest.Env, owner string, n int) []stampduty.Order {
	t.Helper()
	return addOrders(t, env, owner, n, 1, time.Now)
}

// AddPapers stores one order of owner's with papers papers (quantity), as
// AddOrders stores its orders, and returns it.
func AddPapers(t testing.TB, env *storetest.Env, owner string, papers int64) stampduty.Order {
	t.Helper()
	return addOrders(t, env, owner, 1, papers, time.Now)[0]
}

// AddOrdersAt is AddOrders with every order created at at.
func AddOrdersAt(t testing.TB, env *storetest.Env, owner string, n int, at time.Time) []stampduty.Order {
	t.Helper()
	return addOrders(t, env, owner, n, 1, func() time.Time { return at })
}

// addOrders is AddOrders with papers papers each, each order created at now().
func addOrders(t testing.TB, env *storetest.Env, owner string, n int, papers int64, now func() time.Time) []stampduty.Order {
	t.Helper()
	ctx := context.Background()
	db := env.DB()
	ids := env.FixtureIDs()
	art, err := db.Articles(env.Table("ArticlesTable")).Get(ctx, "Affidavit", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]stampduty.Order, 0, n)
	for i := 1; i <= n; i++ {
		first, err := ids.Reserve(ctx, stampduty.IDsPerOrder(papers))
		if err != nil {
			t.Fatal(err)
		}
		req := stampduty.OrderRequest{Amount: 20, Purpose: art.PurposeName, State: art.State, PaidBy: stampduty.SecondParty, Description: "N/A",
			FirstPartyMobileNumber: "9876543210", FirstPartyName: "Party " + strconv.Itoa(i), SecondPartyName: "Bank", FirstPartyPan: "ABCDE1234F", Quantity: papers}
		req.Inputs = duty.Request{Numbers: map[string]int64{"amount": 20}}
		d, err := art.Price(req, duty.TodayInIndia(now()))
		if err != nil {
			t.Fatal(err)
		}
		o, err := stampduty.NewPricedOrder(req, art, d, stampduty.NewOrderIDs(first, papers), now())
		if err != nil {
			t.Fatal(err)
		}
		// Held on the owner's account, as the create holds it (accounts.md).
		o = storetest.PutHeldOrder(t, db, env.Table("OrdersTable"), env.Table("LedgerTable"), owner, o)
		_, o.Livemode = stampduty.CallerOf(owner) // as the store reads it back
		out = append(out, o)
	}
	return out
}

// Fulfiller returns the fulfillment workflow over env's tables and bucket.
func Fulfiller(env *storetest.Env) *orders.Fulfiller {
	db := env.DB()
	bucket := files.New(env.S3(), env.Table("FilesBucket"))
	return &orders.Fulfiller{Orders: db.Orders(env.Table("OrdersTable")), Files: bucket, Direct: bucket,
		Watches: db.Uploads(env.Table("UploadsTable")), IDs: env.FixtureIDs(), Numbers: db.Numbers(env.Table("NumbersTable")), Now: time.Now}
}

// Operator is the IAM identity of the operator in tests.
const Operator = "arn:aws:iam::000000000000:user/test-operator"

// AsOperator returns ev as API Gateway passes a request signed by arn on
// an AWS_IAM route.
func AsOperator(ev events.APIGatewayV2HTTPRequest, arn string) events.APIGatewayV2HTTPRequest {
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{AccessKey: "AKIATEST", AccountID: "000000000000",
			CallerID: "AKIATEST", UserARN: arn, UserID: "AKIATEST"},
	}
	return ev
}

// StaffClaims are the claims of a staff pool's id token for email in
// groups, as API Gateway's JWT authorizer passes them (every value a
// string, the groups as "[admin operator]").
func StaffClaims(email string, groups ...string) map[string]string {
	c := map[string]string{"sub": "0b1e7d3c-5f2a-4c8e-9d6b-2a7f1c4e8b90", "email": email, "email_verified": "true",
		"token_use": "id", "aud": "testclient", "iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_test",
		"iat": "1795234000", "exp": "1795234900", "cognito:username": "0b1e7d3c-5f2a-4c8e-9d6b-2a7f1c4e8b90"}
	if len(groups) > 0 {
		c["cognito:groups"] = "[" + strings.Join(groups, " ") + "]"
	}
	return c
}

// AsStaff returns ev as API Gateway passes a request whose token its JWT
// authorizer accepted with these claims.
func AsStaff(ev events.APIGatewayV2HTTPRequest, claims map[string]string) events.APIGatewayV2HTTPRequest {
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims},
	}
	return ev
}

// WithFile returns ev carrying body as a binary upload, in base64 as API
// Gateway passes one.
func WithFile(ev events.APIGatewayV2HTTPRequest, contentType string, body []byte) events.APIGatewayV2HTTPRequest {
	ev.Headers = maps.Clone(ev.Headers)
	ev.Headers["content-type"] = contentType
	ev.Body = base64.StdEncoding.EncodeToString(body)
	ev.IsBase64Encoded = true
	return ev
}
