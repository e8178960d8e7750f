package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"stampduty/cmd/internal/apigw"
	"stampduty/cmd/internal/localmetrics"
	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/cmd/internal/schedule"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/samtemplate"
)

// stack is a running local service.
type stack struct {
	URL        string    // the API's base address, e.g. http://127.0.0.1:3000
	Endpoint   string    // the DynamoDB's address
	S3Endpoint string    // the S3 server's address
	IAM        apigw.IAM // the key pair the operator routes accept, and who it acts as
	// Cognito is the staff's sign-in: the local Cognito's address, the
	// template's pools, clients and groups created in it, and the staff
	// accounts (localcognito.Staff); empty with -db-only.
	Cognito Cognito
	root    string
	tmpl    *samtemplate.Template
	out     io.Writer // progress, banner and function logs
	// Metrics reads the functions' metric lines from their logs (as
	// CloudWatch Logs does) and serves their summary at localmetrics.Path.
	Metrics *localmetrics.Recorder
	// Where to serve the API (empty with -db-only) and to run dynalite and
	// the S3 server (empty when DYNAMODB_ENDPOINT or S3_ENDPOINT is given),
	// and the engines it started.
	apiAddr, dbAddr, s3Addr string
	cognitoAddr             string            // where to run cognito-local; "" with -db-only
	cognitoNames            map[string]string // the local ids of the pool, its client and groups, by logical id
	db                      *localserver.Server
	s3                      *locals3.Server
	cognito                 *localcognito.Server
	jwts                    map[string]*apigw.JWT // the JWT authorizers, by name
	stopJWTs                context.CancelFunc    // ends their key refreshes
	pools                   map[string]*runtimeapi.Pool
	schedules               []schedule.Job // the scheduled functions' jobs it runs
	stopSchedules           func()         // stops them and waits; nil until they run
	server                  *http.Server
	tmp                     string // the builds
	seeded                  int
	devToken                bool
	offset                  int           // LOCAL_PORT_OFFSET
	every                   time.Duration // how often a long step says it is still going
}

// start brings the stack up: database, tables, seed data, function
// binaries, and (unless dbOnly) the API. It checks first that the addresses
// it needs are free, so that it fails before anything slow, and it listens
// on the API's address only once every function is built, so that no
// connection waits on a stack that cannot answer yet. On error, what was
// started is stopped and nothing is left behind.
func start(ctx context.Context, o options) (*stack, error) {
	root, err := localdb.ModuleRoot(".")
	if err != nil {
		return nil, err
	}
	tmpl, err := loadTemplate(root, o.getenv)
	if err != nil {
		return nil, err
	}
	addrs, err := localAddrs(o.getenv)
	if err != nil {
		return nil, err
	}
	rec := localmetrics.New(nil)
	s := &stack{root: root, tmpl: tmpl, out: runtimeapi.LockedWriter(rec.Tee(o.out)), Metrics: rec, pools: map[string]*runtimeapi.Pool{},
		every: cmp.Or(o.progressEvery, 10*time.Second), offset: addrs.offset, IAM: operatorKeys(o.getenv),
		Endpoint: o.getenv("DYNAMODB_ENDPOINT"), S3Endpoint: o.getenv("S3_ENDPOINT")}
	if !o.dbOnly {
		s.apiAddr, s.cognitoAddr = addrs.api, addrs.cognito
	}
	if s.Endpoint == "" {
		s.dbAddr = addrs.db
	}
	if s.S3Endpoint == "" {
		s.s3Addr = addrs.s3
	}
	var every time.Duration
	if v := o.getenv("LOCAL_SCHEDULE_EVERY"); v != "" {
		if every, err = time.ParseDuration(v); err != nil || every <= 0 {
			return nil, fmt.Errorf("LOCAL_SCHEDULE_EVERY=%q is not a positive Go duration such as 2s or 1m", v)
		}
	}
	if err := s.checkAddrs(); err != nil {
		return nil, err
	}
	if err := s.open(ctx, o); err != nil {
		s.close()
		return nil, err
	}
	if err := s.runSchedules(every); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// loadTemplate reads the stack's template with the parameter values the
// local stack sets from its variables: LOCAL_DISPATCH_POLLERS is
// DispatchPollers (how many webhook pollers run; the template's default
// when unset), LOCAL_TEST_STEP_SECONDS is TestStepSeconds (how far apart
// test orders step). ConsoleMfa is always OFF: cognito-local cannot enrol a
// TOTP device at sign-in, and the local staff sign in with their
// password alone.
func loadTemplate(root string, getenv func(string) string) (*samtemplate.Template, error) {
	params := map[string]string{"ConsoleMfa": "OFF"}
	v := getenv("LOCAL_DISPATCH_POLLERS")
	if v != "" {
		params["DispatchPollers"] = v
	}
	step := getenv("LOCAL_TEST_STEP_SECONDS")
	if step != "" {
		params["TestStepSeconds"] = step
	}
	tmpl, err := samtemplate.LoadWith(filepath.Join(root, "template.yaml"), params)
	if err != nil && v != "" {
		return nil, fmt.Errorf("LOCAL_DISPATCH_POLLERS=%q: %w", v, err)
	}
	if err != nil && step != "" {
		return nil, fmt.Errorf("LOCAL_TEST_STEP_SECONDS=%q: %w", step, err)
	}
	return tmpl, err
}

// open does start's work once the addresses are known to be free.
func (s *stack) open(ctx context.Context, o options) error {
	if s.dbAddr != "" {
		fmt.Fprintf(s.out, "local: starting DynamoDB (dynalite) on %s…\n", s.dbAddr)
		db, err := localdb.Start(ctx, s.root, s.dbAddr, nil)
		if errors.Is(err, localserver.ErrAddrInUse) {
			return s.inUse(s.dbBusy())
		} else if err != nil {
			return err
		}
		s.db, s.Endpoint = db, db.Endpoint
	}
	// Tables are named by their logical ids, as `sam local` resolves !Ref.
	client := localdb.Client(s.Endpoint)
	if s.db == nil {
		fmt.Fprintf(s.out, "local: using the DynamoDB at %s (DYNAMODB_ENDPOINT)…\n", s.Endpoint)
		if err := answers(ctx, client, cmp.Or(o.endpointWait, 10*time.Second)); err != nil {
			return fmt.Errorf("DYNAMODB_ENDPOINT %s does not answer: %w", s.Endpoint, err)
		}
	}
	fmt.Fprintf(s.out, "local: creating %d tables, seeding the catalogue and the dev token…\n", len(s.tmpl.Tables))
	if err := localdb.CreateTables(ctx, client, s.tmpl.Tables, nil); err != nil {
		return err
	}
	if err := s.seed(ctx, o.getenv("ARTICLES"), store.New(client)); err != nil {
		return err
	}
	if s.s3Addr != "" {
		fmt.Fprintf(s.out, "local: starting S3 (versitygw) on %s…\n", s.s3Addr)
		srv, err := locals3.Start(ctx, s.root, s.s3Addr, localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region, nil)
		if errors.Is(err, localserver.ErrAddrInUse) {
			return s.inUse(s.s3Busy())
		} else if err != nil {
			return err
		}
		s.s3, s.S3Endpoint = srv, srv.Endpoint
	}
	if err := localstack.Buckets(ctx, s.S3Endpoint, s.tmpl); err != nil || o.dbOnly {
		return err
	}
	if err := s.startCognito(ctx); err != nil {
		return err
	}
	routes, err := s.build(ctx)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", s.apiAddr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return s.inUse(s.apiBusy())
	} else if err != nil {
		return fmt.Errorf("serve the API on %s: %w (set LOCAL_ADDR to use another address)", s.apiAddr, err)
	}
	s.URL = "http://" + l.Addr().String()
	// The local stack's own path beside the API's routes: what the
	// dashboard would show, from the functions' metric lines. Not a
	// ServeMux: it would clean and redirect the paths API Gateway takes as
	// they come.
	// API Gateway's own metrics (its 5xx, which an alarm watches) go
	// straight into the summary: on AWS they are in no log either.
	api := apigw.NewHandler(routes, apigw.Options{Log: s.out, IAM: &s.IAM, Metrics: s.Metrics.Tee(io.Discard), ApiID: "Api"})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == localmetrics.Path {
			s.Metrics.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
	s.server = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go s.server.Serve(l)
	return nil
}

// answers checks that a DynamoDB answers at the client's endpoint within
// wait: an endpoint that refuses connections, or accepts them and never
// answers, must not leave the stack waiting.
func answers(ctx context.Context, client *dynamodb.Client, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err := client.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	switch netErr, ok := errors.AsType[*net.OpError](err); {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("no answer within %v", wait)
	case ok:
		return netErr
	}
	return err
}

// seed loads the catalogue (the sample, or the file ARTICLES names) and
// registers the dev token, which goes only into an engine on this machine
// (a loopback address, or all of its addresses).
func (s *stack) seed(ctx context.Context, articles string, db *store.DB) error {
	if u, err := url.Parse(s.Endpoint); err == nil {
		ip := net.ParseIP(u.Hostname())
		s.devToken = u.Hostname() == "localhost" || ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
	}
	var err error
	s.seeded, err = localdb.Seed(ctx, db, db.IDs(localdb.LogicalNames("CountersTable"), 10), localdb.LogicalNames, cmp.Or(articles, filepath.Join(s.root, localdb.LocalCatalogue)), s.devToken)
	if err != nil && articles != "" {
		return fmt.Errorf("the catalogue ARTICLES names: %w", err)
	}
	return err
}

// firstBuildHint is what the first function's build line adds: it compiles
// what is not in the Go build cache yet. After `make local`'s build of this
// program (same CGO_ENABLED=0 -trimpath) that is little: 1.5 s measured
// with an empty cache; after a build with other flags (go test, go run) it
// is the standard library and the AWS SDK again: 93 s measured.
const firstBuildHint = "with an empty Go build cache the first may take a minute or two"

// build builds every function of the template for this machine into a
// temporary folder, saying which as it goes ("building 3/10 …") and, every
// s.every while one lasts, how long it has taken, and returns the API's
// routes to them.
func (s *stack) build(ctx context.Context) ([]apigw.Route, error) {
	var err error
	if s.tmp, err = os.MkdirTemp("", "stampduty-local-"); err != nil {
		return nil, fmt.Errorf("make a folder for the builds: %w", err)
	}
	begin := time.Now()
	var routes []apigw.Route
	n := len(s.tmpl.Functions)
	for i, f := range s.tmpl.Functions {
		hint := ""
		if i == 0 {
			hint = " (" + firstBuildHint + ")"
		}
		what := fmt.Sprintf("building %d/%d %s", i+1, n, f.LogicalID)
		fmt.Fprintf(s.out, "local: %s…%s\n", what, hint)
		stop := s.ticking(what)
		bin, err := localstack.Build(ctx, s.root, s.tmp, f.LogicalID, false)
		stop()
		if err != nil {
			return nil, err
		}
		fn, err := localstack.Function(s.tmpl, f, bin, localstack.Engines{DynamoDB: s.Endpoint, S3: s.S3Endpoint, Cognito: s.Cognito.Endpoint, Names: s.cognitoNames}, s.out)
		if err != nil {
			return nil, err
		}
		s.pools[f.LogicalID] = runtimeapi.NewPool(fn)
		for _, r := range f.Routes {
			rt := apigw.Route{Method: r.Method, Path: r.Path, Target: s.pools[f.LogicalID], IAM: r.IAM}
			if r.Authorizer != "" {
				if rt.JWT = s.jwts[r.Authorizer]; rt.JWT == nil {
					return nil, fmt.Errorf("%s: route %s: no local JWT authorizer %s", f.LogicalID, r.Key(), r.Authorizer)
				}
			}
			routes = append(routes, rt)
		}
	}
	fmt.Fprintf(s.out, "local: built %d functions in %.1fs\n", n, time.Since(begin).Seconds())
	return routes, nil
}

// ticking prints "local: <what>: still going, 20s" every s.every until the
// returned stop is called, so that no step is silent for long.
func (s *stack) ticking(what string) (stop func()) {
	begin, done := time.Now(), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(s.out, "local: %s: still going, %s\n", what, time.Since(begin).Round(time.Second))
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// runSchedules runs the template's scheduled functions on their schedules
// (every, when positive, overriding each), through the pools that serve
// the API's requests, until close.
func (s *stack) runSchedules(every time.Duration) error {
	if len(s.pools) == 0 {
		return nil // -db-only: no function runs
	}
	targets := map[string]schedule.Invoker{}
	for id, p := range s.pools {
		targets[id] = p
	}
	jobs, skipped, err := schedule.Jobs(s.tmpl, every, targets)
	if err != nil {
		return err
	}
	for _, note := range skipped {
		fmt.Fprintf(s.out, "local: not scheduled: %s\n", note)
	}
	if len(jobs) == 0 {
		return nil
	}
	for _, j := range jobs {
		input := ""
		if j.Input != nil {
			input = ", input " + string(j.Input)
		}
		fmt.Fprintf(s.out, "local: running %s every %s (%s%s)\n", j.Function, j.Every, j.Rule, input)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { schedule.Run(ctx, jobs, localdb.Region, s.out) })
	s.schedules, s.stopSchedules = jobs, func() { cancel(); wg.Wait() }
	return nil
}

// banner prints where everything is and how to try it.
func (s *stack) banner() {
	w := s.out
	var tables, buckets []string
	for _, t := range s.tmpl.Tables {
		tables = append(tables, t.LogicalID)
	}
	for _, b := range s.tmpl.Buckets {
		buckets = append(buckets, localstack.BucketName(b))
	}
	fmt.Fprintf(w, "DynamoDB (local): %s — tables %s; %d articles seeded\n", s.Endpoint, strings.Join(tables, ", "), s.seeded)
	if s.devToken {
		fmt.Fprintf(w, "Dev token (owner %q): %s\n", localdb.DevOwner, localdb.DevToken)
	} else {
		fmt.Fprintln(w, "No dev token: DYNAMODB_ENDPOINT is not on this machine; make one with stampctl token create.")
	}
	if s.URL == "" {
		fmt.Fprintln(w, "Database only. Ctrl-C stops it.")
		return
	}
	for _, f := range s.tmpl.Functions {
		for _, r := range f.Routes {
			if r.Path == samtemplate.DefaultRoute {
				fmt.Fprintf(w, "  any other request (%s) -> %s\n", r.Path, f.LogicalID)
			} else {
				fmt.Fprintf(w, "  %-4s %s%s -> %s\n", r.Method, s.URL, r.Path, f.LogicalID)
			}
		}
	}
	fmt.Fprintf(w, "S3 (local): %s — bucket %s\n", s.S3Endpoint, strings.Join(buckets, ", "))
	fmt.Fprintf(w, "Operator API (/api/ops/, AWS_IAM): sign for execute-api in %s as %s with\n", s.IAM.Region, s.IAM.Principal)
	fmt.Fprintf(w, "  %s\n", localdb.OperatorExports(s.IAM.Credentials.AccessKeyID, s.IAM.Credentials.SecretAccessKey, s.IAM.Region, s.URL))
	s.Cognito.banner(w)
	fmt.Fprintf(w, "Metrics: each function's lines below are its logs and its metrics (the JSON with \"_aws\"); "+
		"the last minutes summed as the dashboard shows them: stampctl metrics (or curl -s %s%s?minutes=5)\n", s.URL, localmetrics.Path)
	fmt.Fprintf(w, "The README's examples, in another terminal: export API=%s DB=%s WORK=$(mktemp -d)\n", s.URL, s.Endpoint)
	fmt.Fprintf(w, "API: %s  (try: curl -s %s/api/stamp-duty-datas)  Ctrl-C stops everything.\n", s.URL, s.URL)
}

// operatorKeys returns what the operator routes check signatures against:
// the AWS credentials of the stack's own environment, or when those are
// unset the fixed local pair (localdb.OperatorKeyID), valid nowhere else.
func operatorKeys(getenv func(string) string) apigw.IAM {
	iam := apigw.IAM{Region: localdb.Region, Account: "000000000000", Principal: localdb.OperatorARN,
		Credentials: aws.Credentials{AccessKeyID: localdb.OperatorKeyID, SecretAccessKey: localdb.OperatorSecret}}
	if id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"); id != "" && secret != "" {
		iam.Credentials = aws.Credentials{AccessKeyID: id, SecretAccessKey: secret}
	}
	return iam
}

// close stops the schedules, the API, the function instances and the
// engines, and removes the builds.
func (s *stack) close() {
	if s.stopSchedules != nil {
		s.stopSchedules()
	}
	if s.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.server.Shutdown(ctx)
		cancel()
	}
	for _, p := range s.pools {
		p.Close()
	}
	if s.db != nil {
		s.db.Stop()
	}
	if s.s3 != nil {
		s.s3.Stop()
	}
	if s.stopJWTs != nil {
		s.stopJWTs()
	}
	if s.cognito != nil {
		s.cognito.Stop()
	}
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}
