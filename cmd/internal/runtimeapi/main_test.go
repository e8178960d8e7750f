package runtimeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"stampduty/shared/functest"
)

// testBinary is the test function (testdata/fn), built once by TestMain.
var testBinary string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runtimeapi-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testBinary = filepath.Join(dir, "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", testBinary, "./testdata/fn")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build the test function: %v\n", err)
		return 1
	}
	code := m.Run()
	if left := processesOf(testBinary); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: test function processes left running: %v\n", left)
		return 1
	}
	return code
}

// processesOf returns the live (not zombie) processes running the binary at path.
func processesOf(path string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == path && !processGone(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processGone reports whether pid no longer runs: no such process, or a zombie
// waiting to be reaped.
func processGone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state is the field after the command name, which is in parentheses.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	fields := strings.Fields(string(rest))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// waitGone polls until pid is gone. A process that is not our child gives us
// nothing to wait on, so polling is the only way to see it die.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testFunction returns a Function running the test binary whose log goes to
// the returned buffer, shown when the test fails.
func testFunction(t *testing.T, name string) (Function, *functest.SyncBuffer) {
	t.Helper()
	logs := &functest.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("function log:\n%s", logs)
		}
	})
	return Function{
		Name:    name,
		Path:    testBinary,
		Env:     []string{"AWS_REGION=eu-west-1"},
		Timeout: 10 * time.Second,
		Log:     logs,
	}, logs
}

// newPool returns a pool closed when the test ends.
func newPool(t *testing.T, fn Function) *Pool {
	t.Helper()
	p := NewPool(fn)
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close pool: %v", err)
		}
	})
	return p
}

// start starts an instance closed when the test ends.
func start(t *testing.T, fn Function) *Instance {
	t.Helper()
	inst, err := Start(context.Background(), fn)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := inst.Close(); err != nil {
			t.Errorf("close instance: %v", err)
		}
	})
	return inst
}

// invoker is an Instance or a Pool.
type invoker interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// call invokes the test function with ev and decodes its response into out.
func call(t *testing.T, target invoker, ev any, out any) error {
	t.Helper()
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatalf("marshal event: %v", err)
	}
	resp, err := target.Invoke(context.Background(), payload)
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			t.Fatalf("decode response %q: %v", resp, err)
		}
	}
	return nil
}

// pidOf returns the pid of the process the next invocation of target runs in.
func pidOf(t *testing.T, target invoker) int {
	t.Helper()
	var pid int
	if err := call(t, target, map[string]string{"action": "pid"}, &pid); err != nil {
		t.Fatalf("invoke pid: %v", err)
	}
	return pid
}

// errorsIs fails the test unless errors.Is(err, target).
func errorsIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want one that is %v", err, target)
	}
}
