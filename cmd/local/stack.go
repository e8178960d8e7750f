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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"stampduty/cmd/internal/apigw"
	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/cmd/internal/schedule"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/samtemplate"
)

// stack is a running local service.
type stack struct {
	// URL is the API's base address, e.g. http://127.0.0.1:3000.
	URL string
	// Endpoint is the DynamoDB's address.
	Endpoint string
	// S3Endpoint is the S3 server's address.
	S3Endpoint string
	// IAM is the key pair the operator routes accept, and who it acts as.
	IAM     apigw.IAM
	s3Addr  string          // where to run the S3 server; empty when S3_ENDPOINT is given
	s3      *locals3.Server // nil when S3_ENDPOINT was given
	root    string
	tmpl    *samtemplate.Template
	out     io.Writer       // progress, banner and function logs
	apiAddr string          // where to serve the API; empty with -db-only
	dbAddr  string          // where to run dynalite; empty when DYNAMODB_ENDPOINT is given
	db      *localdb.Server // nil when DYNAMODB_ENDPOINT was given
	pools   map[string]*runtimeapi.Pool
	// schedules are the scheduled functions' jobs it runs (schedule.Run).
	schedules     []schedule.Job
	stopSchedules context.CancelFunc // nil until they run
	schedulesDone chan struct{}
	server        *http.Server
	tmp           string
	seeded        int
	devToken      bool
	// offset is LOCAL_PORT_OFFSET, which moved the default ports.
	offset int
	// every is how often a long step says it is still going.
	every time.Duration
}

// The default ports, which LOCAL_PORT_OFFSET moves all at once.
const (
	defaultAPIPort = 3000
	defaultDBPort  = 8000
	defaultS3Port  = 9000
)

// addrs are where the stack listens, before the engines given by
// DYNAMODB_ENDPOINT or S3_ENDPOINT are taken into account.
type addrs struct {
	api, db, s3 string
	offset      int
}

// localAddrs reads LOCAL_ADDR, LOCAL_DYNAMODB_ADDR and LOCAL_S3_ADDR, each
// defaulting to 127.0.0.1 on its default port plus LOCAL_PORT_OFFSET (0
// when unset): one variable moves a second stack's three ports, and a
// variable of its own still moves one of them.
func localAddrs(getenv func(string) string) (addrs, error) {
	var a addrs
	if v := getenv("LOCAL_PORT_OFFSET"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || defaultS3Port+n > 65535 {
			return a, fmt.Errorf("LOCAL_PORT_OFFSET=%q is not a whole number from 0 to %d", v, 65535-defaultS3Port)
		}
		a.offset = n
	}
	port := func(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p+a.offset)) }
	a.api = cmp.Or(getenv("LOCAL_ADDR"), port(defaultAPIPort))
	a.db = cmp.Or(getenv("LOCAL_DYNAMODB_ADDR"), port(defaultDBPort))
	a.s3 = cmp.Or(getenv("LOCAL_S3_ADDR"), port(defaultS3Port))
	return a, nil
}

// start brings the stack up: database, tables, seed data, function
// binaries, and (unless dbOnly) the API. It checks first that the addresses
// it needs are free, so that it fails before anything slow; and it listens
// on the API's address only once every function is built, so that no
// connection waits on a stack that cannot answer yet. On error, what was
// started is stopped and nothing is left behind.
func start(ctx context.Context, o options) (*stack, error) {
	wd, _ := os.Getwd()
	root, err := localdb.ModuleRoot(wd)
	if err != nil {
		return nil, err
	}
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, err
	}
	s := &stack{root: root, tmpl: tmpl, out: runtimeapi.LockedWriter(o.out), pools: map[string]*runtimeapi.Pool{},
		every: cmp.Or(o.progressEvery, defaultProgressEvery)}
	addrs, err := localAddrs(o.getenv)
	if err != nil {
		return nil, err
	}
	s.offset = addrs.offset
	if !o.dbOnly {
		s.apiAddr = addrs.api
	}
	if s.Endpoint = o.getenv("DYNAMODB_ENDPOINT"); s.Endpoint == "" {
		s.dbAddr = addrs.db
	}
	if s.S3Endpoint = o.getenv("S3_ENDPOINT"); s.S3Endpoint == "" {
		s.s3Addr = addrs.s3
	}
	s.IAM = operatorKeys(o.getenv)
	every, err := scheduleEvery(o.getenv("LOCAL_SCHEDULE_EVERY"))
	if err != nil {
		return nil, err
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

// scheduleEvery reads LOCAL_SCHEDULE_EVERY: a Go duration that overrides
// the period of every schedule, or "" to keep the template's.
func scheduleEvery(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("LOCAL_SCHEDULE_EVERY=%q is not a positive Go duration such as 2s or 1m", v)
	}
	return d, nil
}

// runSchedules starts the template's scheduled functions on their
// schedules (every, when positive, overriding each), through the same pools
// as the API's requests, until close.
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
	s.schedules = jobs
	ctx, cancel := context.WithCancel(context.Background())
	s.stopSchedules, s.schedulesDone = cancel, make(chan struct{})
	for _, j := range jobs {
		fmt.Fprintf(s.out, "local: running %s every %s (%s)\n", j.Function, j.Every, j.Rule)
	}
	go func() {
		defer close(s.schedulesDone)
		schedule.Run(ctx, jobs, localdb.Region, s.out)
	}()
	return nil
}

// open does start's work once the addresses are known to be free.
func (s *stack) open(ctx context.Context, o options) error {
	if s.dbAddr != "" {
		fmt.Fprintf(s.out, "local: starting DynamoDB (dynalite) on %s…\n", s.dbAddr)
		db, err := localdb.Start(ctx, s.root, s.dbAddr, nil)
		if errors.Is(err, localdb.ErrAddrInUse) {
			return s.inUse(s.dbBusy())
		}
		if err != nil {
			return err
		}
		s.db, s.Endpoint = db, db.Endpoint
	}
	// Tables are named by their logical ids, as `sam local` resolves !Ref.
	client := localdb.Client(s.Endpoint)
	if s.db == nil {
		fmt.Fprintf(s.out, "local: using the DynamoDB at %s (DYNAMODB_ENDPOINT)…\n", s.Endpoint)
		if err := answers(ctx, client, cmp.Or(o.endpointWait, defaultEndpointWait)); err != nil {
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
	if err := s.openFiles(ctx); err != nil {
		return err
	}
	if o.dbOnly {
		return nil
	}
	routes, err := s.build(ctx)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", s.apiAddr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return s.inUse(s.apiBusy())
	}
	if err != nil {
		return fmt.Errorf("serve the API on %s: %w (set LOCAL_ADDR to use another address)", s.apiAddr, err)
	}
	s.URL = "http://" + l.Addr().String()
	s.server = &http.Server{Handler: apigw.NewHandler(routes, apigw.Options{Log: s.out, IAM: &s.IAM}), ReadHeaderTimeout: 10 * time.Second}
	go s.server.Serve(l)
	return nil
}

// build builds every function of the template for this machine into a
// temporary folder, saying which as it goes ("building 3/10 …") and, while
// one build lasts, how long it has taken every s.every (a first run with an
// empty Go build cache compiles the AWS SDK for the first function), and
// returns the API's routes to them.
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
		fn, err := localstack.Function(s.tmpl, f, bin, localstack.Engines{DynamoDB: s.Endpoint, S3: s.S3Endpoint}, s.out)
		if err != nil {
			return nil, err
		}
		pool := runtimeapi.NewPool(fn)
		s.pools[f.LogicalID] = pool
		for _, r := range f.Routes {
			routes = append(routes, apigw.Route{Method: r.Method, Path: r.Path, Target: pool, IAM: r.IAM})
		}
	}
	fmt.Fprintf(s.out, "local: built %d functions in %.1fs\n", n, time.Since(begin).Seconds())
	return routes, nil
}

// firstBuildHint is what the first function's build line adds: it compiles
// what is not in the Go build cache yet. After `make local`'s build of this
// program (same CGO_ENABLED=0 -trimpath) that is little: 1.5 s measured
// with an empty cache; after a build with other flags (go test, go run) it
// is the standard library and the AWS SDK again: 93 s measured.
const firstBuildHint = "with an empty Go build cache the first may take a minute or two"

// defaultProgressEvery is how often a long step says it is still going.
const defaultProgressEvery = 10 * time.Second

// ticking prints "local: <what>: still going, 20s" every s.every until
// the returned stop is called, so that no step is silent for long.
func (s *stack) ticking(what string) (stop func()) {
	begin := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
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
	}()
	return func() {
		close(done)
		<-finished
	}
}

// busy is an address the stack needs that something else listens on.
type busy struct {
	addr     string
	what     string // what would listen there
	variable string // what moves it
}

func (s *stack) apiBusy() busy { return busy{s.apiAddr, "the API", "LOCAL_ADDR"} }
func (s *stack) dbBusy() busy  { return busy{s.dbAddr, "the local DynamoDB", "LOCAL_DYNAMODB_ADDR"} }
func (s *stack) s3Busy() busy  { return busy{s.s3Addr, "the local S3", "LOCAL_S3_ADDR"} }

// checkAddrs fails when the API's, the database's or the S3 server's
// address cannot be listened on, before anything starts. All are checked,
// so that a second `make local` beside a first one says at once everything
// to set.
func (s *stack) checkAddrs() error {
	var taken []busy
	var errs []error
	for _, b := range []busy{s.apiBusy(), s.dbBusy(), s.s3Busy()} {
		if b.addr == "" {
			continue
		}
		err := localdb.CheckFree(b.addr)
		if errors.Is(err, localdb.ErrAddrInUse) {
			taken = append(taken, b)
		} else if err != nil {
			errs = append(errs, fmt.Errorf("%s=%s: %w", b.variable, b.addr, err))
		}
	}
	if len(taken) > 0 {
		errs = append(errs, s.inUse(taken...))
	}
	return errors.Join(errs...)
}

// inUse says which addresses are taken and how to move each: by its own
// variable, or all of the default ports at once by LOCAL_PORT_OFFSET.
func (s *stack) inUse(taken ...busy) error {
	var names, hints []string
	for _, b := range taken {
		names = append(names, fmt.Sprintf("%s (%s)", b.addr, b.what))
		hints = append(hints, fmt.Sprintf("  set %s to move %s, e.g. %s=%s", b.variable, b.what, b.variable, nextPort(b.addr)))
	}
	n := s.offset + 1
	hints = append(hints, fmt.Sprintf("  or set LOCAL_PORT_OFFSET=%d to move every default port by %d: API %d, DynamoDB %d, S3 %d",
		n, n, defaultAPIPort+n, defaultDBPort+n, defaultS3Port+n))
	verb, list := "is", names[0]
	if len(names) > 1 {
		verb, list = "are", strings.Join(names[:len(names)-1], ", ")+" and "+names[len(names)-1]
	}
	return fmt.Errorf("%s %s in use: is another `make local` or `make local-db` running?\n%s",
		list, verb, strings.Join(hints, "\n"))
}

// nextPort returns addr with the port after its own, for an example.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n <= 0 || n >= 65535 {
		return "127.0.0.1:0"
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// answers checks that a DynamoDB answers at the client's endpoint within
// wait: an endpoint that refuses connections, or accepts them and never
// answers, must not leave the stack waiting.
func answers(ctx context.Context, client *dynamodb.Client, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err := client.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	var netErr *net.OpError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("no answer within %v", wait)
	case errors.As(err, &netErr):
		return netErr
	}
	return err
}

// seed loads the catalogue (the sample, or the file named by ARTICLES) and
// registers the dev token, which goes only into an engine on this machine.
func (s *stack) seed(ctx context.Context, articles string, db *store.DB) error {
	file := cmp.Or(articles, filepath.Join(s.root, localdb.SampleCatalogue))
	s.devToken = loopback(s.Endpoint)
	n, err := localdb.Seed(ctx, db, localdb.LogicalNames, file, s.devToken)
	if err != nil && articles != "" {
		return fmt.Errorf("the catalogue ARTICLES names: %w", err)
	}
	s.seeded = n
	return err
}

// loopback reports whether endpoint's host is this machine (a loopback
// address, or all of its addresses).
func loopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// banner prints where everything is and how to try it.
func (s *stack) banner() {
	w := s.out
	fmt.Fprintf(w, "DynamoDB (local): %s — tables %s; %d articles seeded\n", s.Endpoint, tableNames(s.tmpl), s.seeded)
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
				continue
			}
			fmt.Fprintf(w, "  %-4s %s%s -> %s\n", r.Method, s.URL, r.Path, f.LogicalID)
		}
	}
	fmt.Fprintf(w, "S3 (local): %s — bucket %s\n", s.S3Endpoint, strings.Join(bucketNames(s.tmpl), ", "))
	fmt.Fprintf(w, "Operator API (/api/ops/, AWS_IAM): sign for execute-api in %s as %s with\n", s.IAM.Region, s.IAM.Principal)
	fmt.Fprintf(w, "  %s\n", localdb.OperatorExports(s.IAM.Credentials.AccessKeyID, s.IAM.Credentials.SecretAccessKey, s.IAM.Region, s.URL))
	fmt.Fprintf(w, "The README's examples, in another terminal: export API=%s DB=%s WORK=$(mktemp -d)\n", s.URL, s.Endpoint)
	fmt.Fprintf(w, "API: %s  (try: curl -s %s/api/stamp-duty-datas)  Ctrl-C stops everything.\n", s.URL, s.URL)
}

func bucketNames(t *samtemplate.Template) []string {
	var names []string
	for _, b := range t.Buckets {
		names = append(names, localstack.BucketName(b))
	}
	return names
}

// The key pair the local operator API accepts when the environment names
// none: fixed, printed by the stack and named in the README, valid nowhere
// but here.
const (
	LocalOperatorKeyID  = localdb.OperatorKeyID
	LocalOperatorSecret = localdb.OperatorSecret
	LocalOperatorARN    = localdb.OperatorARN
)

// operatorKeys returns what the operator routes check signatures against:
// the AWS credentials in the stack's own environment, or the fixed local
// pair when those are unset, for the stack's region.
func operatorKeys(getenv func(string) string) apigw.IAM {
	iam := apigw.IAM{Region: localdb.Region, Account: "000000000000", Principal: LocalOperatorARN,
		Credentials: aws.Credentials{AccessKeyID: LocalOperatorKeyID, SecretAccessKey: LocalOperatorSecret}}
	if id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"); id != "" && secret != "" {
		iam.Credentials = aws.Credentials{AccessKeyID: id, SecretAccessKey: secret}
	}
	return iam
}

// openFiles starts the local S3 server (unless S3_ENDPOINT names one) and
// creates the template's buckets in it, versioned as the template has them.
func (s *stack) openFiles(ctx context.Context) error {
	if s.s3Addr != "" {
		fmt.Fprintf(s.out, "local: starting S3 (versitygw) on %s…\n", s.s3Addr)
		srv, err := locals3.Start(ctx, s.root, s.s3Addr, localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region, nil)
		if errors.Is(err, localdb.ErrAddrInUse) {
			return s.inUse(s.s3Busy())
		}
		if err != nil {
			return err
		}
		s.s3, s.S3Endpoint = srv, srv.Endpoint
	}
	client := locals3.Client(s.S3Endpoint, localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region)
	for _, b := range bucketNames(s.tmpl) {
		if err := locals3.CreateBucket(ctx, client, b); err != nil {
			return fmt.Errorf("S3 at %s: %w", s.S3Endpoint, err)
		}
	}
	return nil
}

func tableNames(t *samtemplate.Template) string {
	var names []string
	for _, tb := range t.Tables {
		names = append(names, tb.LogicalID)
	}
	return strings.Join(names, ", ")
}

// close stops the API, the function instances and the database, and removes the builds.
func (s *stack) close() {
	if s.stopSchedules != nil {
		s.stopSchedules()
		<-s.schedulesDone
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
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}
