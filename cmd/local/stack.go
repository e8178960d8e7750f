package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"stampduty/cmd/internal/apigw"
	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
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
	if err := s.seed(ctx, root, o.getenv("ARTICLES"), store.New(client)); err != nil {
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
		bin, err := localstack.Build(ctx, root, s.tmp, f.LogicalID, false)
		if err != nil {
			l.Close()
			return nil, err
		}
		fn, err := localstack.Function(tmpl, f, bin, s.Endpoint, logs)
		if err != nil {
			l.Close()
			return nil, err
		}
		pool := runtimeapi.NewPool(fn)
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
// registers the dev token, which goes only into an engine on this machine.
func (s *stack) seed(ctx context.Context, root, file string, db *store.DB) (err error) {
	if file == "" {
		file = filepath.Join(root, localstack.SampleCatalogue)
	}
	s.devToken = loopback(s.Endpoint)
	s.seeded, err = localstack.Seed(ctx, db, file, s.devToken)
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
