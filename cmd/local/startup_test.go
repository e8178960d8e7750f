package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
)

// commandDir holds the cmd/local binary the tests build (see command).
var commandDir string

// TestMain runs the tests when the stack's engines are installed; without
// them it runs none, saying so in one line, except with CI=true, where it
// fails (localserver.SkipLine).
func TestMain(m *testing.M) {
	code := runInstalled(m)
	if commandDir != "" {
		os.RemoveAll(commandDir)
	}
	os.Exit(code)
}

// runInstalled runs m once dynalite, the S3 server and cognito-local are
// installed (storetest.RunNone's "no tests to run" without them).
func runInstalled(m *testing.M) int {
	root, err := localdb.ModuleRoot(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, db := localdb.Installed(root)
	_, s3 := locals3.Installed(root)
	_, cognito := localcognito.Installed(root)
	if err := errors.Join(db, s3, cognito); err != nil {
		if line, skip := localserver.SkipLine(err); skip {
			fmt.Println(line)
			return storetest.RunNone(m)
		}
		fmt.Fprintln(os.Stderr, localserver.FailLine(err))
		return 1
	}
	return m.Run()
}

var (
	buildOnce  sync.Once
	commandErr error
)

// command returns the path of cmd/local built as `make local` builds it.
func command(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if commandDir, commandErr = os.MkdirTemp("", "cmd-local-test-"); commandErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(commandDir, "local"), ".").CombinedOutput()
		if err != nil {
			commandErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if commandErr != nil {
		t.Fatal(commandErr)
	}
	return filepath.Join(commandDir, "local")
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := localdb.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := localserver.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// occupy listens on a free loopback address until the test ends, accepting
// connections and never answering them.
func occupy(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// processes returns the command lines of the processes other than this one
// for which match, given the fields of /proc/<pid>/stat after the command
// name (state, ppid, ...) and the command line, reports true.
func processes(match func(stat []string, cmdline string) bool) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, dir := range dirs {
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		cmdline, err2 := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || err2 != nil || filepath.Base(dir) == strconv.Itoa(os.Getpid()) {
			continue // gone meanwhile, or this one
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if line := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})); match(fields, line) {
			found = append(found, filepath.Base(dir)+": "+line)
		}
	}
	return found
}

// children returns the processes whose parent is this one.
func children() []string {
	return processes(func(stat []string, _ string) bool {
		return len(stat) > 1 && stat[1] == strconv.Itoa(os.Getpid())
	})
}

// processesWith returns the processes other than this one whose command
// line contains any of needles.
func processesWith(needles ...string) []string {
	return processes(func(_ []string, cmdline string) bool {
		return slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(cmdline, n) })
	})
}

// alive reports whether a process with that pid exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// checkEmpty fails t unless dir holds nothing.
func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s left in the temporary folder", e.Name())
	}
}

// tryStart runs the stack with env until it is ready, and stops it then.
// It returns run's error, and whether the stack came up.
func tryStart(t *testing.T, env map[string]string, o options) (started bool, out string, err error) {
	t.Helper()
	buf := &functest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.getenv = func(k string) string { return env[k] }
	o.out = buf
	ready := make(chan struct{}, 1)
	o.ready = func(*stack) { ready <- struct{}{} }
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()
	select {
	case <-ready:
		cancel()
		return true, buf.String(), <-done
	case err := <-done:
		return false, buf.String(), err
	case <-time.After(3 * time.Minute):
		t.Fatalf("run neither started nor failed in 3 minutes\n%s", buf)
		return false, "", nil
	}
}

// startupError is a way for the stack to fail to start.
type startupError struct {
	name string
	// env returns the stack's environment; the test's temporary folders are
	// made before TMPDIR is set.
	env func(t *testing.T) map[string]string
	// want are what the message must say.
	want []string
	// early: the stack must fail before it builds anything.
	early bool
}

func startupErrors() []startupError {
	return []startupError{{
		name: "APIAddressInUse",
		env: func(t *testing.T) map[string]string {
			return map[string]string{"LOCAL_ADDR": occupy(t), "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}
		},
		want:  []string{"in use", "LOCAL_ADDR"},
		early: true,
	}, {
		name: "DatabaseAddressInUse",
		env: func(t *testing.T) map[string]string {
			return map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": occupy(t), "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}
		},
		want:  []string{"in use", "LOCAL_DYNAMODB_ADDR"},
		early: true,
	}, {
		// A second `make local` beside a first one: both variables are named at once.
		name: "BothAddressesInUse",
		env: func(t *testing.T) map[string]string {
			return map[string]string{"LOCAL_ADDR": occupy(t), "LOCAL_DYNAMODB_ADDR": occupy(t), "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}
		},
		want:  []string{"LOCAL_ADDR", "LOCAL_DYNAMODB_ADDR"},
		early: true,
	}, {
		name: "BadArticlesFile",
		env: func(t *testing.T) map[string]string {
			file := filepath.Join(t.TempDir(), "articles.json")
			os.WriteFile(file, []byte("some invalid json"), 0o600)
			return map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0", "ARTICLES": file}
		},
		want: []string{"ARTICLES", "articles.json"},
	}, {
		name: "MissingArticlesFile",
		env: func(t *testing.T) map[string]string {
			return map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0", "ARTICLES": filepath.Join(t.TempDir(), "none.json")}
		},
		want: []string{"ARTICLES", "none.json", "no such file"},
	}, {
		name: "DynamoDBEndpointRefuses",
		env: func(t *testing.T) map[string]string {
			return map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "DYNAMODB_ENDPOINT": "http://" + freeAddr(t), "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}
		},
		want:  []string{"DYNAMODB_ENDPOINT", "does not answer", "connection refused"},
		early: true,
	}, {
		name: "DynamoDBEndpointSilent",
		env: func(t *testing.T) map[string]string {
			return map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "DYNAMODB_ENDPOINT": "http://" + occupy(t), "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}
		},
		want:  []string{"DYNAMODB_ENDPOINT", "does not answer"},
		early: true,
	}, {
		name: "BadScheduleEvery",
		env: func(t *testing.T) map[string]string {
			return map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0", "LOCAL_SCHEDULE_EVERY": "often"}
		},
		want:  []string{"LOCAL_SCHEDULE_EVERY", "often"},
		early: true,
	}, {
		name: "BadDispatchPollers",
		env: func(t *testing.T) map[string]string {
			return map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0", "LOCAL_DISPATCH_POLLERS": "3"}
		},
		want:  []string{"LOCAL_DISPATCH_POLLERS", `"3" is not one of 1, 2, 4`},
		early: true,
	}}
}

// TestStartupErrors: a stack that cannot start says why, and leaves no
// process and no temporary folder behind.
func TestStartupErrors(t *testing.T) {
	for _, c := range startupErrors() {
		t.Run(c.name, func(t *testing.T) {
			env := c.env(t)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			begin := time.Now()
			started, out, err := tryStart(t, env, options{endpointWait: 2 * time.Second})
			if started {
				t.Fatalf("the stack started, want an error\n%s", out)
			}
			if err == nil {
				t.Fatalf("run returned nil, want an error\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if c.early && strings.Contains(out, "building") {
				t.Errorf("failed after building, want before:\n%s", out)
			}
			if took := time.Since(begin); took > 20*time.Second {
				t.Errorf("took %v to fail", took)
			}
			if kids := children(); len(kids) > 0 {
				t.Errorf("processes left running: %v", kids)
			}
			checkEmpty(t, tmp)
		})
	}
}

// TestStartupErrorsExit: the command itself ends a failed start with its
// message on stderr and exit status 1, not a panic.
func TestStartupErrorsExit(t *testing.T) {
	bin := command(t)
	root := moduleRoot(t)
	for _, c := range startupErrors() {
		if c.name == "DynamoDBEndpointSilent" {
			continue // waits the whole default time; TestStartupErrors covers it
		}
		t.Run(c.name, func(t *testing.T) {
			env := c.env(t)
			tmp := t.TempDir()
			cmd := exec.Command(bin)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			go func() { <-ctx.Done(); syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) }()
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("exit: %v, want status 1\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
			}
			if got, want := exit.ExitCode(), 1; got != want {
				t.Errorf("exit status %d, want %d", got, want)
			}
			msg := stderr.String()
			if !strings.HasPrefix(msg, "local: ") || strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
				t.Errorf("stderr is not the message alone:\n%s", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr does not say %q:\n%s", w, msg)
				}
			}
			checkEmpty(t, tmp)
		})
	}
}

// TestSecondStackLeavesTheFirstAlone: a stack whose database address is
// another engine's refuses to start, names the variable that moves it, and
// leaves the other engine's data as it was.
func TestSecondStackLeavesTheFirstAlone(t *testing.T) {
	ctx := context.Background()
	first, err := localdb.Start(ctx, moduleRoot(t), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop()
	client := localdb.Client(first.Endpoint)
	table := samtemplate.Table{LogicalID: "FirstStacksTable", BillingMode: "PAY_PER_REQUEST",
		Attributes: []samtemplate.Attribute{{Name: "pk", Type: "S"}}, KeySchema: []samtemplate.Key{{Name: "pk", Type: "HASH"}}}
	if err := localdb.CreateTables(ctx, client, []samtemplate.Table{table}, nil); err != nil {
		t.Fatal(err)
	}

	started, out, err := tryStart(t, map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": strings.TrimPrefix(first.Endpoint, "http://"), "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}, options{})
	if started {
		t.Errorf("the second stack started on the first one's engine\n%s", out)
	}
	if err == nil || !strings.Contains(err.Error(), "LOCAL_DYNAMODB_ADDR") {
		t.Errorf("run = %v, want an error naming LOCAL_DYNAMODB_ADDR", err)
	}
	tables, err := client.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatalf("the first engine no longer answers: %v", err)
	}
	if got, want := tables.TableNames, []string{"FirstStacksTable"}; !slices.Equal(got, want) {
		t.Errorf("the first engine's tables = %v, want %v", got, want)
	}
}

// TestListensOnlyWhenReady: the API address refuses connections until every
// function is built, and the output lists every phase before the banner,
// with each build numbered and, while one lasts, how long it has taken.
func TestListensOnlyWhenReady(t *testing.T) {
	addr := freeAddr(t)
	out := &functest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, options{
			getenv: vars{"LOCAL_ADDR": addr, "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}.getenv,
			out:    out,
			ready:  func(*stack) { close(ready) },
			// every build (make, then go build from the cache) lasts longer
			progressEvery: 100 * time.Millisecond,
		})
	}()

	// Dial until the stack is ready; the first connection accepted must
	// come after the functions are built.
	refused, accepted, outThen := 0, false, ""
probe:
	for {
		select {
		case <-ready:
			break probe
		case err := <-done:
			t.Fatalf("run: %v\n%s", err, out)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			accepted, outThen = true, out.String()
			c.Close()
			break
		}
		refused++
		time.Sleep(10 * time.Millisecond)
	}
	if refused == 0 {
		t.Error("no connection was refused while the stack started")
	}
	if accepted && !strings.Contains(outThen, "local: built") {
		t.Errorf("a connection was accepted before the functions were built; output then:\n%s", outThen)
	}
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("run: %v\n%s", err, out)
	case <-time.After(3 * time.Minute):
		t.Fatalf("not ready in 3 minutes\n%s", out)
	}

	// Every phase, in order, before the banner; each build numbered, the
	// first with the warning that it is slow with an empty cache, and a
	// build that lasts says so while it runs.
	text := out.String()
	fns := startTemplate(t).Functions
	n := len(fns)
	phases := []string{"local: starting DynamoDB (dynalite)", "local: creating ", "local: starting S3 (versitygw)",
		fmt.Sprintf("local: building 1/%d %s… (%s)", n, fns[0].LogicalID, firstBuildHint),
		fmt.Sprintf("local: building 1/%d %s: still going, ", n, fns[0].LogicalID),
		fmt.Sprintf("local: building 2/%d %s…", n, fns[1].LogicalID),
		fmt.Sprintf("local: building %d/%d %s…", n, n, fns[n-1].LogicalID),
		fmt.Sprintf("local: built %d functions in ", n),
		"DynamoDB (local):", "The README's examples, in another terminal: export API=http://" + addr + " DB=http://",
		"local: ready in "}
	at := 0
	for _, p := range phases {
		i := strings.Index(text[at:], p)
		if i < 0 {
			t.Errorf("the output lacks %q after byte %d:\n%s", p, at, text)
			continue
		}
		at += i + len(p)
	}
	if !strings.Contains(text, "s since this program started") {
		t.Errorf("the ready line does not say what its figure covers:\n%s", text)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

// vars is an environment.
type vars map[string]string

func (v vars) getenv(k string) string { return v[k] }

// interrupted runs cmd, in its own process group as a shell runs a job, until
// its output has the banner, then sends SIGINT to the group as Ctrl-C in a
// terminal does, and waits for it. It returns how the command ended and its
// output.
func interrupted(t *testing.T, cmd *exec.Cmd) (*os.ProcessState, string) {
	t.Helper()
	out := &functest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A shell starts a job with SIGINT at its default action, even where it
	// was started with SIGINT ignored (as background jobs are), which its
	// children would inherit. A signal this process handles is reset to the
	// default in a child.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	err := cmd.Start()
	signal.Stop(sigs)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-waited }
	deadline := time.After(3 * time.Minute)
	for !strings.Contains(out.String(), "Ctrl-C stops everything.") {
		select {
		case <-waited:
			t.Fatalf("ended before it was ready: %v\n%s", cmd.ProcessState, out)
		case <-deadline:
			kill()
			t.Fatalf("not ready in 3 minutes\n%s", out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// A request, so that a function instance runs too.
	if m := regexp.MustCompile(`API: (http://\S+)`).FindStringSubmatch(out.String()); m != nil {
		if c, err := net.DialTimeout("tcp", strings.TrimPrefix(m[1], "http://"), time.Second); err == nil {
			fmt.Fprintf(c, "GET /api/stamp-duty-datas HTTP/1.0\r\n\r\n")
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			var b [512]byte
			c.Read(b[:])
			c.Close()
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		kill()
		t.Fatalf("still running 30s after SIGINT\n%s", out)
	}
	return cmd.ProcessState, out.String()
}

// checkStoppedEverything fails t if a process of the stack whose output is
// out, or anything in its temporary folder tmp, is left.
func checkStoppedEverything(t *testing.T, out, tmp string) {
	t.Helper()
	needles := []string{tmp}
	if m := regexp.MustCompile(`DynamoDB \(local\): http://127\.0\.0\.1:(\d+)`).FindStringSubmatch(out); m != nil {
		needles = append(needles, "--port "+m[1]+" ")
	} else {
		t.Errorf("no database address in the output:\n%s", out)
	}
	if left := processesWith(needles...); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
	checkEmpty(t, tmp)
}

// TestInterrupt: Ctrl-C is the normal way to stop the stack.
func TestInterrupt(t *testing.T) {
	root := moduleRoot(t)
	env := func(tmp string) []string {
		var env []string
		for _, kv := range os.Environ() {
			// as if from a terminal, not from within `make test`
			if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
				env = append(env, kv)
			}
		}
		return append(env, "TMPDIR="+tmp, "LOCAL_ADDR=127.0.0.1:0", "LOCAL_DYNAMODB_ADDR=127.0.0.1:0", "LOCAL_S3_ADDR=127.0.0.1:0", "LOCAL_COGNITO_ADDR=127.0.0.1:0")
	}

	t.Run("CommandExitsZero", func(t *testing.T) {
		tmp := t.TempDir()
		cmd := exec.Command(command(t))
		cmd.Dir, cmd.Env = root, env(tmp)
		state, out := interrupted(t, cmd)
		if got, want := state.ExitCode(), 0; got != want {
			t.Errorf("exit status %d (%v), want %d\n%s", got, state, want, out)
		}
		if !strings.Contains(out, "local: stopped") {
			t.Errorf("output does not end with local: stopped:\n%s", out)
		}
		checkStoppedEverything(t, out, tmp)
	})

	t.Run("WhileBuildingStopsCleanly", func(t *testing.T) {
		// With an empty build cache, the build is surely under way at Ctrl-C.
		t.Setenv("GOCACHE", t.TempDir())
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		out := &functest.SyncBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, options{getenv: vars{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}.getenv, out: out})
		}()
		for len(processes(func(_ []string, cmdline string) bool {
			return strings.HasPrefix(cmdline, "go build") && strings.Contains(cmdline, tmp)
		})) == 0 {
			select {
			case err := <-done:
				t.Fatalf("run ended before building: %v\n%s", err, out)
			case <-time.After(5 * time.Millisecond):
			}
		}
		time.Sleep(time.Second) // go build has made its work folder, in TMPDIR, and compiles
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run = %v, want nil: Ctrl-C is a normal stop\n%s", err, out)
			}
		case <-time.After(time.Minute):
			t.Fatalf("still running a minute after Ctrl-C\n%s", out)
		}
		if !strings.Contains(out.String(), "local: stopped") {
			t.Errorf("output does not end with local: stopped:\n%s", out)
		}
		if kids := children(); len(kids) > 0 {
			t.Errorf("processes left running: %v", kids)
		}
		if left := processesWith(tmp); len(left) > 0 {
			t.Errorf("builds left running: %v", left)
		}
		checkEmpty(t, tmp)
	})

	t.Run("MakeLocalPrintsNoError", func(t *testing.T) {
		tmp := t.TempDir()
		// `make local` builds into LOCAL_BIN; a test's copy goes to its own folder.
		cmd := exec.Command("make", "--no-print-directory", "local", "LOCAL_BIN="+filepath.Join(t.TempDir(), "local"))
		cmd.Dir, cmd.Env = root, env(tmp)
		state, out := interrupted(t, cmd)
		if strings.Contains(out, "make: ***") || strings.Contains(out, "exit status") {
			t.Errorf("Ctrl-C reported as a failure:\n%s", out)
		}
		// GNU make, interrupted itself, waits for the recipe and then ends by
		// the same signal (as any program Ctrl-C stops; shells print nothing
		// for it). Any other end is a failure.
		t.Logf("make ended with %v", state)
		ws := state.Sys().(syscall.WaitStatus)
		if !(ws.Exited() && ws.ExitStatus() == 0) && !(ws.Signaled() && ws.Signal() == syscall.SIGINT) {
			t.Errorf("make ended with %v, want exit status 0 or SIGINT\n%s", state, out)
		}
		if !strings.Contains(out, "local: stopped") {
			t.Errorf("output does not end with local: stopped:\n%s", out)
		}
		checkStoppedEverything(t, out, tmp)
	})
}
