// Package storetest gives tests a real DynamoDB engine and a real S3 server:
// dynalite and the S3 gateway, started once per test binary (or those at
// DYNAMODB_ENDPOINT and S3_ENDPOINT), and for each test a fresh copy of
// template.yaml's tables and buckets under unique names, with the
// environment each function would get from the template. Its Proxy is the
// one way tests and make bench watch DynamoDB calls: it records them,
// injects faults and measures capacity at the wire, so the store carries no
// hooks of its own.
package storetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/samtemplate"
)

// runtimeVars are the variables the Lambda runtime sets in every function;
// the template does not list them.
var runtimeVars = map[string]string{
	"AWS_REGION":             localdb.Region,
	"AWS_ACCESS_KEY_ID":      localdb.AccessKeyID,
	"AWS_SECRET_ACCESS_KEY":  localdb.SecretAccessKey,
	"AWS_SESSION_TOKEN":      "",
	"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
	// With LogFormat JSON Lambda hands a custom runtime its application
	// log level (INFO unless ApplicationLogLevel says otherwise).
	"AWS_LAMBDA_LOG_LEVEL": "INFO",
}

var (
	endpoint   string
	s3Endpoint string
	tmpl       *samtemplate.Template
	seq        atomic.Int64
)

// Main runs a test binary's tests with a local engine: call it from TestMain.
// When the engines are not installed it runs none of them, saying so in
// one line naming `make test`, except with CI=true, where it fails
// (localserver.SkipLine, the one rule for missing engines).
func Main(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "storetest:", err)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	wd, _ := os.Getwd()
	root, err := localdb.ModuleRoot(wd)
	if err == nil {
		tmpl, err = samtemplate.Load(root + "/template.yaml")
	}
	if err != nil {
		return 1, err
	}
	var missing []error
	if os.Getenv("DYNAMODB_ENDPOINT") == "" {
		_, err := localdb.Installed(root)
		missing = append(missing, err)
	}
	if os.Getenv("S3_ENDPOINT") == "" && len(tmpl.Buckets) > 0 {
		_, err := locals3.Installed(root)
		missing = append(missing, err)
	}
	if err := errors.Join(missing...); err != nil {
		line, skip := localserver.SkipLine(err)
		if !skip {
			return 1, errors.New(localserver.FailLine(err))
		}
		fmt.Println(line)
		return RunNone(m), nil
	}
	if endpoint = os.Getenv("DYNAMODB_ENDPOINT"); endpoint == "" {
		srv, err := localdb.Start(context.Background(), root, "", nil)
		if err != nil {
			return 1, err
		}
		defer srv.Stop()
		endpoint = srv.Endpoint
	}
	if s3Endpoint = os.Getenv("S3_ENDPOINT"); s3Endpoint == "" && len(tmpl.Buckets) > 0 {
		srv, err := locals3.Start(context.Background(), root, "", localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region, nil)
		if err != nil {
			return 1, err
		}
		defer srv.Stop()
		s3Endpoint = srv.Endpoint
	}
	return m.Run(), nil
}

// RunNone runs none of m's tests, benchmarks, examples or fuzz targets,
// whatever the command line asks (go test then ends its line with "[no
// tests to run]"): for a TestMain whose package needs what is missing,
// once it has said so.
func RunNone(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	for name, value := range map[string]string{"test.run": "^$", "test.bench": "", "test.fuzz": ""} {
		if err := flag.Set(name, value); err != nil {
			panic(err) // the testing package's own flags
		}
	}
	return m.Run()
}

// Env is one test's tables and buckets: Names maps each one's logical id
// to this test's name of it, in the engines at Endpoint and S3Endpoint.
type Env struct {
	t                    testing.TB
	Endpoint, S3Endpoint string
	// Cognito is the local Cognito's endpoint a function is given as
	// COGNITO_ENDPOINT, "" (none) unless a test that starts one sets it.
	Cognito  string
	Names    map[string]string
	Template *samtemplate.Template
	Client   *dynamodb.Client

	fixtureIDs atomic.Int64 // the last fixture id handed out
}

// FixtureIDs returns the ids for what a test stores itself (orders,
// articles, files set up before the code under test runs): 1 up to
// store.IDShards × store.IDChunk, below the first chunk of every shard of
// the id counter on a table that never had the single counter, so that
// they never take an id the counter hands out and never seed a shard. A
// function's first reservation then always seeds its shard (it reads the
// old counter with GetItem) as on a new stack, and the test of its grants
// sees it; with fixtures taken from the counter, it did not when the
// function happened to pick a shard the fixtures had seeded.
func (e *Env) FixtureIDs() *FixtureIDs { return &FixtureIDs{e} }

// FixtureIDs are an Env's fixture ids (Env.FixtureIDs).
type FixtureIDs struct{ e *Env }

// Reserve returns the first of n fixture ids.
func (f *FixtureIDs) Reserve(_ context.Context, n int64) (int64, error) {
	last := f.e.fixtureIDs.Add(n)
	if last > store.IDShards*store.IDChunk {
		return 0, fmt.Errorf("storetest: %d fixture ids used, more than the %d below the id counter's first chunk", last, store.IDShards*store.IDChunk)
	}
	return last - n + 1, nil
}

// New creates a fresh copy of the template's tables for t.
func New(t testing.TB) *Env {
	t.Helper()
	if tmpl == nil {
		t.Fatal("storetest: call storetest.Main from TestMain")
	}
	n := seq.Add(1)
	e := &Env{t: t, Endpoint: endpoint, S3Endpoint: s3Endpoint, Names: map[string]string{}, Template: tmpl, Client: localdb.Client(endpoint)}
	for _, tb := range tmpl.Tables {
		e.Names[tb.LogicalID] = fmt.Sprintf("%s-%d-%d", tb.LogicalID, os.Getpid(), n)
	}
	// An app client's id is made by the user pool (localcognito, in the
	// tests that start one); a function's setting that names it gets a
	// stand-in.
	for _, c := range tmpl.UserPoolClients {
		e.Names[c.LogicalID] = "local-" + strings.ToLower(c.LogicalID)
	}
	// So is a user pool's id, which a test with a local Cognito sets to
	// its pool's (with Cognito, its endpoint).
	for _, p := range tmpl.UserPools {
		e.Names[p.LogicalID] = "local-" + strings.ToLower(p.LogicalID)
	}
	if err := localdb.CreateTables(context.Background(), e.Client, tmpl.Tables, e.Names); err != nil {
		t.Fatal(err)
	}
	for _, b := range tmpl.Buckets {
		e.Names[b] = strings.ToLower(fmt.Sprintf("%s-%d-%d", b, os.Getpid(), n))
		if err := locals3.CreateBucket(context.Background(), e.S3(), e.Names[b]); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// S3 returns a client of the S3 server, with the local credentials.
func (e *Env) S3() *s3.Client {
	return locals3.Client(e.S3Endpoint, localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region)
}

// DB returns a store straight over this test's engine, around any proxy.
func (e *Env) DB() *store.DB { return store.New(e.Client) }

// ProxiedDB starts a proxy in front of this test's engine (NewProxy) and
// returns it and a store whose calls go through it.
func (e *Env) ProxiedDB() (*store.DB, *Proxy) {
	p := e.NewProxy()
	return store.New(localdb.Client(p.URL)), p
}

// Table returns this test's name of the table with the given logical id.
func (e *Env) Table(logicalID string) string {
	e.t.Helper()
	n, ok := e.Names[logicalID]
	if !ok {
		e.t.Fatalf("template has no table %s", logicalID)
	}
	return n
}

// Getenv returns the environment function fn gets from the template,
// resolved to this test's tables, plus the Lambda runtime's own variables,
// completed as a local runtime does (localdb.LocalRuntime). Every name read
// is recorded in read; reading a name the template does not set fails the
// test.
func (e *Env) Getenv(fn string, read map[string]bool) func(string) string {
	e.t.Helper()
	f, ok := tmpl.Function(fn)
	if !ok {
		e.t.Fatalf("template has no function %s", fn)
	}
	vals := maps.Clone(runtimeVars)
	for k, v := range f.Env {
		s, err := tmpl.Resolve(v, localdb.Params(), e.Names)
		if err != nil {
			e.t.Fatalf("%s env %s: %v", fn, k, err)
		}
		vals[k] = s
	}
	localdb.LocalRuntime(vals, e.Endpoint, e.S3Endpoint, e.Cognito)
	vals["AWS_LAMBDA_FUNCTION_NAME"] = fn // as the local runtime names it: the logical id
	var mu sync.Mutex
	return func(name string) string {
		mu.Lock()
		defer mu.Unlock()
		if read != nil {
			read[name] = true
		}
		v, ok := vals[name]
		if !ok {
			e.t.Errorf("%s reads %s, which template.yaml does not set", fn, name)
		}
		return v
	}
}

// Operations renders calls as "Operation:LogicalTable=count", sorted, e.g.
// "GetItem:ArticlesTable=1 PutItem:OrdersTable=1", with table names mapped
// back to logical ids. It counts the requests the code made: the SDK's
// retries of them are left out (Requests), so that a test of what
// an operation calls holds on a machine loaded enough for an attempt to
// time out. The GetItems on TokensTable are left out too: they are a
// function's Authenticator refreshing its cached lookup, once per token every
// auth.CacheTTL, so a warm request meets one whenever the clock passes the
// entry's expiry (on a loaded machine, any request may). shared/auth's tests
// count them; every other test counts what its operation calls.
func (e *Env) Operations(calls []ProxyCall) string {
	var parts []string
	for table, ops := range e.Used(e.Made(calls)) {
		for op, n := range ops {
			parts = append(parts, fmt.Sprintf("%s:%s=%d", op, table, n))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// Made returns the calls an operation made among calls, as Operations
// counts them: its requests (Requests), less the Authenticator's refreshes
// of its cached token lookups (GetItem on TokensTable), which a warm
// request meets whenever the clock passes an entry's expiry. A test of an
// operation's calls or units counts these.
func (e *Env) Made(calls []ProxyCall) []ProxyCall {
	tokens := e.Names["TokensTable"]
	return slices.DeleteFunc(Requests(calls), func(c ProxyCall) bool {
		return c.Table == tokens && c.Index == "" && c.Operation == "GetItem"
	})
}

// Requests returns the requests the code made among calls: calls less the
// SDK's retries (ProxyCall.Attempt above 1).
func Requests(calls []ProxyCall) []ProxyCall {
	return slices.DeleteFunc(slices.Clone(calls), func(c ProxyCall) bool { return c.Attempt > 1 })
}

// Used returns, per logical table, how many calls of each operation calls
// hold.
func (e *Env) Used(calls []ProxyCall) map[string]map[string]int {
	logical := map[string]string{}
	for id, n := range e.Names {
		logical[n] = id
	}
	out := map[string]map[string]int{}
	for _, c := range calls {
		id := logical[c.Table]
		if c.Index != "" {
			id += "/index/" + c.Index
		}
		if out[id] == nil {
			out[id] = map[string]int{}
		}
		out[id][c.Operation]++
	}
	return out
}
