package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/samtemplate"
)

// startTemplate returns template.yaml, as the stack reads it.
func startTemplate(t *testing.T) *samtemplate.Template {
	t.Helper()
	tmpl, err := samtemplate.Load(filepath.Join(moduleRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// TestReadyLineSaysWhatItCovers: started by `make local` (LOCAL_STARTED_AT),
// the ready line counts from make's start, the wait a reader had, and says
// how much of it went before this program; otherwise it says it counts
// from this program's start.
func TestReadyLineSaysWhatItCovers(t *testing.T) {
	begin := time.Unix(1_800_000_000, 0)
	now := begin.Add(326900 * time.Millisecond)
	makeStarted := strconv.FormatInt(begin.Add(-11*time.Minute).Unix(), 10)
	for _, c := range []struct {
		name, startedAt, want string
	}{
		{"FromMakeLocal", makeStarted, "local: ready in 986.9s since `make local` started (660.0s before this program ran, 326.9s in it)"},
		{"Alone", "", "local: ready in 326.9s since this program started"},
		{"NotATime", "soon", "local: ready in 326.9s since this program started"},
		{"AfterThisProgramStarted", strconv.FormatInt(now.Unix()+60, 10), "local: ready in 326.9s since this program started"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := readyLine(begin, now, c.startedAt); got != c.want {
				t.Errorf("readyLine = %q, want %q", got, c.want)
			}
		})
	}
}

// TestPortOffsetMovesEveryPort: LOCAL_PORT_OFFSET moves the API's, the
// local DynamoDB's, the local S3's and the local Cognito's default ports
// at once (a second stack needs all four), and a variable of its own
// still moves one.
func TestPortOffsetMovesEveryPort(t *testing.T) {
	t.Run("Addresses", func(t *testing.T) {
		for _, c := range []struct {
			env  vars
			want addrs
		}{
			{vars{}, addrs{api: "127.0.0.1:3000", db: "127.0.0.1:8000", s3: "127.0.0.1:9000", cognito: "127.0.0.1:9229"}},
			{vars{"LOCAL_PORT_OFFSET": "1"}, addrs{api: "127.0.0.1:3001", db: "127.0.0.1:8001", s3: "127.0.0.1:9001", cognito: "127.0.0.1:9230", offset: 1}},
			{vars{"LOCAL_PORT_OFFSET": "10", "LOCAL_S3_ADDR": "127.0.0.1:9999"}, addrs{api: "127.0.0.1:3010", db: "127.0.0.1:8010", s3: "127.0.0.1:9999", cognito: "127.0.0.1:9239", offset: 10}},
		} {
			got, err := localAddrs(c.env.getenv)
			if err != nil || got != c.want {
				t.Errorf("localAddrs(%v) = %+v, %v; want %+v", c.env, got, err, c.want)
			}
		}
		for _, bad := range []string{"-1", "x", "1.5", "56536"} {
			if _, err := localAddrs(vars{"LOCAL_PORT_OFFSET": bad}.getenv); err == nil || !strings.Contains(err.Error(), "LOCAL_PORT_OFFSET") {
				t.Errorf("LOCAL_PORT_OFFSET=%s: %v, want an error naming it", bad, err)
			}
		}
	})

	t.Run("TheEnginesListenThere", func(t *testing.T) {
		// An offset whose three ports are free: the database and S3 (with
		// -db-only, which builds nothing) must listen on theirs.
		var offset int
		for try := 0; ; try++ {
			offset = 20000 + rand.IntN(3000)
			if free(defaultAPIPort+offset) && free(defaultDBPort+offset) && free(defaultS3Port+offset) {
				break
			}
			if try == 20 {
				t.Fatal("no offset with three free ports")
			}
		}
		out := &functest.SyncBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := make(chan *stack, 1)
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, options{getenv: vars{"LOCAL_PORT_OFFSET": strconv.Itoa(offset)}.getenv, dbOnly: true, out: out,
				ready: func(s *stack) { got <- s }})
		}()
		select {
		case s := <-got:
			if want := fmt.Sprintf("http://127.0.0.1:%d", defaultDBPort+offset); s.Endpoint != want {
				t.Errorf("DynamoDB at %s, want %s", s.Endpoint, want)
			}
			if want := fmt.Sprintf("http://127.0.0.1:%d", defaultS3Port+offset); s.S3Endpoint != want {
				t.Errorf("S3 at %s, want %s", s.S3Endpoint, want)
			}
		case err := <-done:
			t.Fatalf("run: %v\n%s", err, out)
		case <-time.After(2 * time.Minute):
			t.Fatalf("not ready in 2 minutes\n%s", out)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
}

// free reports whether nothing listens on 127.0.0.1:port.
func free(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// progress runs cmd/progress/progress with args, with PROGRESS_EVERY=1, and
// returns its output and exit status.
func progress(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(moduleRoot(t), "cmd", "progress", "progress"), args...)
	cmd.Env = append(os.Environ(), "PROGRESS_EVERY=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("cmd/progress/progress: %v", err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// TestProgressScript: the Makefile's long steps run under cmd/progress/progress,
// which counts the packages go -v names (hiding them), shows anything else,
// says every PROGRESS_EVERY seconds how far it is, and ends with the time
// taken and the command's own status.
func TestProgressScript(t *testing.T) {
	t.Run("CountsPackagesAndTicks", func(t *testing.T) {
		out, status := progress(t, "-hide", "-n", "4", "building x", "--", "bash", "-c",
			`echo internal/abi; echo "go: downloading example.com/m v1.0.0"; echo "example.com/m/p [example.com/m/p.test]"; sleep 2.5; echo example.com/m/q`)
		if status != 0 {
			t.Errorf("status %d, want 0\n%s", status, out)
		}
		for _, want := range []string{"go: downloading example.com/m v1.0.0\n", "building x: 2/4 packages, 1s\n", "building x: 2/4 packages, 2s\n", "building x: done in "} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "internal/abi") || strings.Contains(out, "example.com/m/q") {
			t.Errorf("package lines shown:\n%s", out)
		}
	})
	t.Run("ShowsErrorsAndKeepsTheStatus", func(t *testing.T) {
		out, status := progress(t, "-hide", "building y", "--", "bash", "-c", `echo example.com/m; echo "# example.com/m"; echo "m.go:1:1: syntax error"; exit 3`)
		if status != 3 {
			t.Errorf("status %d, want 3", status)
		}
		if !strings.Contains(out, "# example.com/m\nm.go:1:1: syntax error\n") || !strings.Contains(out, "building y: failed after ") {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("CountsGoTestResultsAndShowsThem", func(t *testing.T) {
		out, status := progress(t, "-n", "2", "tests", "--", "bash", "-c", `printf 'ok  \tstampduty/a\t0.1s\n'; sleep 1.5; printf '?   \tstampduty/b\t[no test files]\n'`)
		if status != 0 || !strings.Contains(out, "ok  \tstampduty/a") || !strings.Contains(out, "tests: 1/2 packages, 1s\n") {
			t.Errorf("status %d, output:\n%s", status, out)
		}
	})
	t.Run("SaysItRunsWhenThereIsNothingToCount", func(t *testing.T) {
		out, _ := progress(t, "vet", "--", "sleep", "1.5")
		if !strings.Contains(out, "vet: running, 1s\n") {
			t.Errorf("output:\n%s", out)
		}
	})
}

// TestMakefileLongStepsReport: `make test` announces its three phases in
// order and runs each long command under cmd/progress/progress (vet's
// staticcheck and deadcode -test, which fails on any line, among them);
// `make local` builds cmd/local under it and gives the stack make's start
// time.
func TestMakefileLongStepsReport(t *testing.T) {
	dryRun := func(target string) string {
		cmd := exec.Command("make", "-n", "--no-print-directory", target, "LOCAL_BIN=/nonexistent/local")
		cmd.Dir = moduleRoot(t)
		cmd.Env = append(os.Environ(), "MAKEFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out)
		}
		return string(out)
	}
	test := dryRun("test")
	at := 0
	for _, want := range []string{`echo "test: 1/3 vet`, "cmd/progress/progress -hide -n ", `"vet: go vet ./..." -- go vet -v ./...`,
		`"vet: staticcheck" -- .build/tools/staticcheck-v`, `/staticcheck ./...`,
		`"vet: deadcode" -- sh -c 'out=$(.build/tools/deadcode-v`, `/deadcode -test ./...) || exit 1;`, `exit 1; fi'`,
		`echo "test: 2/3 the package tests`, `cmd/progress/progress -n `, `"test: package tests" -- go test -race`,
		`echo "test: 3/3 cmd/local's stack tests`, `"test: cmd/local" -- go test -race -count=1 ./cmd/local`,
		`echo "test: passed, `} {
		i := strings.Index(test[at:], want)
		if i < 0 {
			t.Errorf("make -n test lacks %q after byte %d:\n%s", want, at, test)
			continue
		}
		at += i + len(want)
	}
	local := dryRun("local")
	for _, re := range []string{`CGO_ENABLED=0 cmd/progress/progress -hide -n \$\(CGO_ENABLED=0 go list -deps ./cmd/local \| wc -l\) "local: building cmd/local" -- go build -trimpath -v -o /nonexistent/local ./cmd/local`,
		`LOCAL_STARTED_AT=\d{10,} exec /nonexistent/local`} {
		if !regexp.MustCompile(re).MatchString(local) {
			t.Errorf("make -n local does not match %s:\n%s", re, local)
		}
	}
}
