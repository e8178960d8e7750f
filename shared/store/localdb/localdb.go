// Package localdb runs the local DynamoDB engine (dynalite, an in-memory
// server of the DynamoDB API, installed by `make dynalite` from the pinned
// package in cmd/local/dynalite) and creates in it the tables template.yaml
// defines, exactly as the template defines them. The local stack and the
// tests use it; Lambda functions never do.
package localdb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/auth"
	"stampduty/shared/samtemplate"
)

// DynalitePath is where `make dynalite` installs dynalite's entry point,
// relative to the module root.
const DynalitePath = "cmd/local/dynalite/node_modules/dynalite/cli.js"

// Region and the credentials below are what local clients use: dynalite
// checks that requests are signed, not by whom.
const (
	Region          = "us-east-1"
	AccessKeyID     = "local"
	SecretAccessKey = "local"
)

// Server is a running dynalite process.
type Server struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:41234.
	Endpoint string
	cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited
	output   []string      // its first lines of output, for errors; read once done is closed
	waitErr  error         // how it exited; read once done is closed
}

// maxOutput is how many lines of dynalite's output a Server keeps for errors.
const maxOutput = 50

// ModuleRoot returns the directory of go.mod at or above dir.
func ModuleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or above", dir)
		}
	}
}

// ErrAddrInUse is returned by Start when something else listens on the
// address it was given: another local stack's engine, say, which must not
// be taken for the one Start was asked to start.
var ErrAddrInUse = errors.New("address in use")

// readyTimeout bounds how long Start waits for dynalite to listen and answer.
const readyTimeout = 15 * time.Second

// Start starts dynalite, in memory, on a free loopback port (or on addr when
// not empty and not port 0) and returns once it answers. root is the module
// root; the server's own output goes to log. The server dies with this
// process.
//
// Start never hands back an engine it did not start: when addr is in use,
// or dynalite could not listen on it, it returns an error wrapping
// ErrAddrInUse, and whatever listens there is left alone.
func Start(ctx context.Context, root, addr string, log io.Writer) (*Server, error) {
	cli := filepath.Join(root, DynalitePath)
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("dynalite is not installed (%s): run `make dynalite`", DynalitePath)
	}
	if addr != "" && !strings.HasSuffix(addr, ":0") {
		if err := CheckFree(addr); err != nil {
			return nil, fmt.Errorf("start dynalite: %w", err)
		}
		return spawn(ctx, cli, addr, log)
	}
	// Another process can take the free port between here and dynalite
	// listening on it; then another port will do.
	for attempt := 1; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		addr = l.Addr().String()
		l.Close()
		s, err := spawn(ctx, cli, addr, log)
		if errors.Is(err, ErrAddrInUse) && attempt < 3 {
			continue
		}
		return s, err
	}
}

// CheckFree reports whether a TCP listener could be opened on addr now, by
// opening one and closing it at once. When something listens there already,
// the error wraps ErrAddrInUse.
func CheckFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s: %w", addr, ErrAddrInUse)
	}
	if err != nil {
		return err
	}
	return l.Close()
}

// spawn starts dynalite's cli on addr and returns once it answers. It
// takes the engine that answers for its own only once dynalite has said
// that it listens, and while dynalite still runs: a dynalite that could
// not listen exits, and another process may be answering on addr.
func spawn(ctx context.Context, cli, addr string, log io.Writer) (*Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dynalite address %q: %w", addr, err)
	}
	cmd := exec.Command("node", cli, "--host", host, "--port", port,
		"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	s := &Server{Endpoint: "http://" + net.JoinHostPort(host, port), cmd: cmd, done: make(chan struct{})}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		said := false
		for sc.Scan() {
			line := sc.Text()
			if !said && strings.HasPrefix(line, "Dynalite listening at") {
				close(listening)
				said = true
			}
			if len(s.output) < maxOutput {
				s.output = append(s.output, line)
			}
			if log != nil {
				fmt.Fprintf(log, "[dynalite] %s\n", line)
			}
		}
		s.waitErr = cmd.Wait()
		close(s.done)
	}()

	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	// wait returns nil once ready is closed, and otherwise why dynalite
	// will not be ready: it exited, ctx ended, or the deadline passed
	// (late's error).
	wait := func(ready <-chan struct{}, late func() error) error {
		select {
		case <-ready:
			return nil
		case <-s.done:
			return s.exitError(addr)
		case <-ctx.Done():
			s.Stop()
			return ctx.Err()
		case <-deadline.C:
			s.Stop()
			return late()
		}
	}
	if err := wait(listening, func() error { return fmt.Errorf("dynalite did not listen on %s within %v", addr, readyTimeout) }); err != nil {
		return nil, err
	}
	client := Client(s.Endpoint)
	for {
		// Each attempt is bounded: a server that accepts and never
		// answers must not hold Start forever.
		actx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := client.ListTables(actx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		cancel()
		select {
		case <-s.done:
			return nil, s.exitError(addr)
		default:
		}
		if err == nil {
			return s, nil
		}
		pause := make(chan struct{})
		time.AfterFunc(50*time.Millisecond, func() { close(pause) })
		late := func() error {
			return fmt.Errorf("dynalite did not answer on %s within %v: %w", s.Endpoint, readyTimeout, err)
		}
		if err := wait(pause, late); err != nil {
			return nil, err
		}
	}
}

// exitError describes why dynalite exited before it was ready, from its
// output: node's "Error: ..." line, else its last line. Call it only once
// s.done is closed.
func (s *Server) exitError(addr string) error {
	why := ""
	for _, line := range s.output {
		if strings.Contains(line, "EADDRINUSE") {
			return fmt.Errorf("dynalite could not listen on %s: %w", addr, ErrAddrInUse)
		}
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(why, "Error") {
			why = line
		}
	}
	return fmt.Errorf("dynalite exited (%v): %s", s.waitErr, why)
}

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.done
}

// Client returns a DynamoDB client for a local engine at endpoint.
func Client(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
		BaseEndpoint: aws.String(endpoint),
	})
}

// CreateTables creates each table of the template under names[LogicalID]
// (the LogicalID itself when absent, which is what `sam local` resolves a
// !Ref to), with the template's key schema, attributes, indexes and TTL. A
// table that exists already is left as it is.
func CreateTables(ctx context.Context, client *dynamodb.Client, tables []samtemplate.Table, names map[string]string) error {
	for _, t := range tables {
		name := names[t.LogicalID]
		if name == "" {
			name = t.LogicalID
		}
		in := &dynamodb.CreateTableInput{
			TableName:   aws.String(name),
			BillingMode: types.BillingMode(t.BillingMode),
			KeySchema:   keySchema(t.KeySchema),
		}
		for _, a := range t.Attributes {
			in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
				AttributeName: aws.String(a.Name), AttributeType: types.ScalarAttributeType(a.Type)})
		}
		for _, g := range t.GlobalIndexes {
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
				IndexName:  aws.String(g.Name),
				KeySchema:  keySchema(g.KeySchema),
				Projection: &types.Projection{ProjectionType: types.ProjectionType(g.ProjectionType), NonKeyAttributes: g.NonKeyAttributes},
			})
		}
		_, err := client.CreateTable(ctx, in)
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			continue
		}
		if err != nil {
			return fmt.Errorf("create table %s (%s): %w", name, t.LogicalID, err)
		}
		if err := dynamodb.NewTableExistsWaiter(client).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 30*time.Second,
			func(o *dynamodb.TableExistsWaiterOptions) {
				o.MinDelay = 20 * time.Millisecond
				o.MaxDelay = 200 * time.Millisecond
			}); err != nil {
			return fmt.Errorf("wait for table %s: %w", name, err)
		}
		if t.TTLAttribute != "" {
			// dynalite does not implement TTL; DynamoDB does. Expired items are
			// filtered by the code that reads them, so both behave the same.
			_, _ = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
				TableName:               aws.String(name),
				TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(t.TTLAttribute), Enabled: aws.Bool(true)},
			})
		}
	}
	return nil
}

func keySchema(ks []samtemplate.Key) []types.KeySchemaElement {
	var out []types.KeySchemaElement
	for _, k := range ks {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.Name), KeyType: types.KeyType(k.Type)})
	}
	return out
}

// DevToken is the token the local stack registers (for owner DevOwner) in
// the local engine it runs, and the one the events/ samples carry. It exists
// only in local engines: no command registers it on AWS.
const DevToken = "sdt_LOCALxDEVxTOKENxNEVERxVALIDxONxAWSx00000000"

// DevOwner is the owner of DevToken.
const DevOwner = "dev"

// TokenHashKey is the token hashing key of local stacks and tests: on AWS
// the key comes from SSM Parameter Store (see template.yaml), here it is
// this published, worthless value.
const TokenHashKey = "local-only-token-hash-key-not-a-secret-0001"

// Params are the template parameters of a local stack whose DynamoDB is at
// endpoint, with the local values of the SSM parameters the template
// resolves (as "ssm:NAME"), for samtemplate.Template.Resolve.
func Params(endpoint string) map[string]string {
	return map[string]string{"DynamoDBEndpoint": endpoint, "ssm:" + auth.DefaultKeyParameter: TokenHashKey}
}

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Hasher returns the token hasher of local stacks and tests (TokenHashKey).
func Hasher() *auth.Hasher {
	h, err := auth.NewHasher(TokenHashKey)
	if err != nil {
		panic(err) // TokenHashKey is a constant of the right length
	}
	return h
}
