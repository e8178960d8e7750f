package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"stampduty/shared/testkit/functest"
)

// testBinary is this test binary, which is also the test function (see
// fn_test.go).
var testBinary string

func TestMain(m *testing.M) {
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		functionMain() // started by an Instance: be the function
		return
	}
	var err error
	if testBinary, err = os.Executable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if left := processesOf(testBinary); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: test function processes left running: %v\n", left)
		code = 1
	}
	os.Exit(code)
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

// wantStarted fails the test unless the pool has started n instances.
func wantStarted(t *testing.T, p *Pool, n int) {
	t.Helper()
	if got := p.Started(); got != n {
		t.Errorf("Started() = %d, want %d", got, n)
	}
}

// functionError returns err as the *FunctionError it must be, unwrapped.
func functionError(t *testing.T, err error) *FunctionError {
	t.Helper()
	fe, ok := err.(*FunctionError)
	if !ok {
		t.Fatalf("got error %#v, want a *FunctionError", err)
	}
	return fe
}
