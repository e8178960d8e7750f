package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"stampduty/cmd/internal/apigw"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/auth"
	"stampduty/shared/rules"
	"stampduty/shared/samtemplate"
	"stampduty/shared/store"
	"stampduty/shared/store/localdb"
)

// stack is a running local service.
type stack struct {
	// URL is the API's base address, e.g. http://127.0.0.1:3000.
	URL string
	// Endpoint is the DynamoDB's address.
	Endpoint string
	tmpl     *samtemplate.Template
	db       *localdb.Server // nil when DYNAMODB_ENDPOINT was given
	pools    map[string]*runtimeapi.Pool
	server   *http.Server
	tmp      string
	seeded   int
	devToken bool
}

// start brings the stack up: database, tables, seed data, function
// binaries, and (unless dbOnly) the API. On error, what was started is stopped.
func start(ctx context.Context, o options) (s *stack, err error) {
	wd, _ := os.Getwd()
	root, err := localdb.ModuleRoot(wd)
	if err != nil {
		return nil, err
	}
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, err
	}
	s = &stack{tmpl: tmpl, pools: map[string]*runtimeapi.Pool{}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()

	s.Endpoint = o.getenv("DYNAMODB_ENDPOINT")
	if s.Endpoint == "" {
		addr := o.getenv("LOCAL_DYNAMODB_ADDR")
		if addr == "" {
			addr = "127.0.0.1:8000"
		}
		if s.db, err = localdb.Start(ctx, root, addr, nil); err != nil {
			return nil, err
		}
		s.Endpoint = s.db.Endpoint
	}
	// Tables are named by their logical ids, as `sam local` resolves !Ref.
	client := localdb.Client(s.Endpoint)
	if err := localdb.CreateTables(ctx, client, tmpl.Tables, nil); err != nil {
		return nil, err
	}
	if err := s.seed(ctx, root, o.getenv("ARTICLES"), store.New(client, nil)); err != nil {
		return nil, err
	}
	if o.dbOnly {
		return s, nil
	}

	if s.tmp, err = os.MkdirTemp("", "stampduty-local-"); err != nil {
		return nil, err
	}
	addr := o.getenv("LOCAL_ADDR")
	if addr == "" {
		addr = "127.0.0.1:3000"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve the API: %w (set LOCAL_ADDR to use another address)", err)
	}
	s.URL = "http://" + l.Addr().String()
	logs := runtimeapi.LockedWriter(o.out)
	var routes []apigw.Route
	for _, f := range tmpl.Functions {
		bin, err := build(ctx, root, s.tmp, f.LogicalID)
		if err != nil {
			l.Close()
			return nil, err
		}
		env, err := s.env(f)
		if err != nil {
			l.Close()
			return nil, err
		}
		pool := runtimeapi.NewPool(runtimeapi.Function{
			Name: f.LogicalID, Path: bin, Env: env, Timeout: time.Duration(f.Timeout) * time.Second,
			MemoryMB: f.MemorySize, Log: logs,
		})
		s.pools[f.LogicalID] = pool
		for _, r := range f.Routes {
			routes = append(routes, apigw.Route{Method: r.Method, Path: r.Path, Target: pool})
		}
	}
	s.server = &http.Server{Handler: apigw.NewHandler(routes, apigw.Options{Log: logs}), ReadHeaderTimeout: 10 * time.Second}
	go s.server.Serve(l)
	return s, nil
}

// seed loads the catalogue (the sample, or the file named by ARTICLES) and
// registers the dev token. The dev token goes only into an engine on this
// machine.
func (s *stack) seed(ctx context.Context, root, file string, db *store.DB) error {
	if file == "" {
		file = filepath.Join(root, "cmd/local/articles.json")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read articles: %w", err)
	}
	arts, err := rules.DecodeArticles(data)
	if err != nil {
		var e *rules.Error
		if errors.As(err, &e) {
			for _, f := range e.Fields {
				err = fmt.Errorf("%w\n  %s: %s", err, f.Path, f.Message)
			}
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	if _, _, err := db.Articles("ArticlesTable").Upsert(ctx, db.IDs("CountersTable", 10), arts); err != nil {
		return fmt.Errorf("seed articles: %w", err)
	}
	s.seeded = len(arts)
	if !loopback(s.Endpoint) {
		return nil // the dev token goes only into an engine on this machine
	}
	s.devToken = true
	err = db.Tokens("TokensTable").Create(ctx, auth.Token{Hash: auth.Hash(localdb.DevToken), Owner: localdb.DevOwner, CreatedAt: time.Now()})
	if err != nil && rules.ErrorCode(err) != rules.ECONFLICT {
		return fmt.Errorf("seed dev token: %w", err)
	}
	return nil
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

// build builds a function for this host with its own Makefile target (the
// one `sam build` runs), overriding only the target platform.
func build(ctx context.Context, root, tmp, logicalID string) (string, error) {
	dir := filepath.Join(tmp, logicalID)
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "-s", "build-"+logicalID, "ARTIFACTS_DIR="+dir, "LAMBDA_ENV=CGO_ENABLED=0")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", logicalID, err, out)
	}
	return filepath.Join(dir, "bootstrap"), nil
}

// env is a function's environment: the template's variables resolved
// against the local tables and engine, plus what the Lambda service sets.
func (s *stack) env(f samtemplate.Function) ([]string, error) {
	env := []string{
		"AWS_REGION=" + localdb.Region, "AWS_DEFAULT_REGION=" + localdb.Region,
		"AWS_ACCESS_KEY_ID=" + localdb.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + localdb.SecretAccessKey,
	}
	// Locally each table is named by its logical id, as `sam local` resolves !Ref.
	names := map[string]string{}
	for _, t := range s.tmpl.Tables {
		names[t.LogicalID] = t.LogicalID
	}
	for name, v := range f.Env {
		val, err := s.tmpl.Resolve(v, map[string]string{"DynamoDBEndpoint": s.Endpoint}, names)
		if err != nil {
			return nil, fmt.Errorf("%s env %s: %w", f.LogicalID, name, err)
		}
		env = append(env, name+"="+val)
	}
	return env, nil
}

// banner prints where everything is and how to try it.
func (s *stack) banner(w io.Writer) {
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
			fmt.Fprintf(w, "  %-4s %s%s -> %s\n", r.Method, s.URL, r.Path, f.LogicalID)
		}
	}
	fmt.Fprintf(w, "API: %s  (try: curl -s %s/api/stamp-duty-datas)  Ctrl-C stops everything.\n", s.URL, s.URL)
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
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}
