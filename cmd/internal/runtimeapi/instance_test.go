package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkClose checks that target's Close kills the process it runs events in,
// is idempotent, and fails later invocations with ErrClosed.
func checkClose(t *testing.T, target interface {
	invoker
	Close() error
}) {
	t.Helper()
	pid := pidOf(t, target)
	if err := target.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !processGone(pid) {
		t.Errorf("process %d still running after Close", pid)
	}
	if err := target.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err := target.Invoke(context.Background(), []byte(`{"action":"echo"}`))
	errorsIs(t, err, ErrClosed)
}

func TestStart(t *testing.T) {
	t.Run("reports a positive init duration", func(t *testing.T) {
		fn, _ := testFunction(t, "initfn")
		inst := start(t, fn)
		d := inst.InitDuration()
		if d <= 0 {
			t.Fatalf("InitDuration() = %v, want > 0", d)
		}
		t.Logf("init duration of the test function: %v", d)
	})

	t.Run("passes only the function's environment and the runtime variables", func(t *testing.T) {
		t.Setenv("STAMPDUTY_PARENT_ONLY", "leaked")
		fn, _ := testFunction(t, "envfn")
		fn.MemoryMB = 256
		fn.Env = append(fn.Env,
			"STAMPDUTY_FROM_FN=yes",
			"TZ=Europe/Paris",                // Lambda lets functions set TZ
			"AWS_LAMBDA_FUNCTION_NAME=other", // but not the reserved variables
		)
		inst := start(t, fn)
		var environ []string
		if err := call(t, inst, map[string]string{"action": "env"}, &environ); err != nil {
			t.Fatalf("invoke: %v", err)
		}
		env := map[string]string{}
		for _, kv := range environ {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}

		var keys []string
		for k := range env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		wantKeys := []string{
			"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_VERSION",
			"AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME", "AWS_LAMBDA_RUNTIME_API",
			"AWS_REGION", "LAMBDA_TASK_ROOT", "PATH", "STAMPDUTY_FROM_FN", "TZ",
			"_HANDLER", "_X_AMZN_TRACE_ID", // the last one set by aws-lambda-go per invocation
		}
		if got, want := strings.Join(keys, " "), strings.Join(wantKeys, " "); got != want {
			t.Errorf("environment keys:\n got %s\nwant %s", got, want)
		}
		for k, want := range map[string]string{
			"AWS_LAMBDA_RUNTIME_API":          inst.addr,
			"AWS_LAMBDA_FUNCTION_NAME":        "envfn",
			"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
			"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
			"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/envfn",
			"_HANDLER":                        "bootstrap",
			"LAMBDA_TASK_ROOT":                filepath.Dir(testBinary),
			"TZ":                              "Europe/Paris",
			"PATH":                            "/usr/local/bin:/usr/bin:/bin",
			"AWS_REGION":                      "eu-west-1",
			"STAMPDUTY_FROM_FN":               "yes",
		} {
			if got := env[k]; got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
		if got := env["AWS_LAMBDA_LOG_STREAM_NAME"]; !regexp.MustCompile(`^\d{4}/\d{2}/\d{2}/\[\$LATEST\][0-9a-f]{32}$`).MatchString(got) {
			t.Errorf("AWS_LAMBDA_LOG_STREAM_NAME = %q, want Lambda's shape", got)
		}
	})

	t.Run("sends request id, deadline, ARN and trace id with the event", func(t *testing.T) {
		fn, _ := testFunction(t, "ctxfn")
		fn.Timeout = 5 * time.Second
		inst := start(t, fn)
		var info invokeInfo
		before := time.Now()
		if err := call(t, inst, map[string]string{"action": "context"}, &info); err != nil {
			t.Fatalf("invoke: %v", err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(info.RequestID) {
			t.Errorf("request id %q is not a UUID v4", info.RequestID)
		}
		if got, want := info.FunctionARN, "arn:aws:lambda:eu-west-1:000000000000:function:ctxfn"; got != want {
			t.Errorf("function ARN = %q, want %q", got, want)
		}
		deadline := time.UnixMilli(info.DeadlineMs)
		if lo, hi := before.Add(fn.Timeout-time.Second), time.Now().Add(fn.Timeout); deadline.Before(lo) || deadline.After(hi) {
			t.Errorf("deadline %v, want between %v and %v", deadline, lo, hi)
		}
		if !regexp.MustCompile(`^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0$`).MatchString(info.TraceID) {
			t.Errorf("trace id %q is not an X-Ray trace header", info.TraceID)
		}
		if got, want := info.Cwd, filepath.Dir(testBinary); got != want {
			t.Errorf("working directory = %q, want %q", got, want)
		}
	})

	t.Run("fails when the process exits during init", func(t *testing.T) {
		fn, logs := testFunction(t, "exitfn")
		fn.Env = append(fn.Env, "TEST_INIT=exit")
		_, err := Start(context.Background(), fn)
		errorsIs(t, err, ErrExited)
		if got := err.Error(); !strings.Contains(got, "exit status 2") {
			t.Errorf("error %q does not give the exit status", got)
		}
		if got, want := logs.String(), "[exitfn] init: giving up\n"; !strings.Contains(got, want) {
			t.Errorf("log %q does not contain %q", got, want)
		}
	})

	t.Run("fails with the init error the function reports", func(t *testing.T) {
		fn, _ := testFunction(t, "initerrfn")
		fn.Env = append(fn.Env, "TEST_INIT=error")
		_, err := Start(context.Background(), fn)
		var fe *FunctionError
		if !errors.As(err, &fe) {
			t.Fatalf("got error %v, want a *FunctionError", err)
		}
		if got, want := *fe, (FunctionError{Type: "Runtime.ConfigError", Message: "missing TABLE_NAME"}); got != want {
			t.Errorf("function error = %+v, want %+v", got, want)
		}
	})

	t.Run("gives up when the context ends during init", func(t *testing.T) {
		fn, _ := testFunction(t, "hangfn")
		fn.Env = append(fn.Env, "TEST_INIT=hang")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := Start(ctx, fn)
		errorsIs(t, err, context.DeadlineExceeded)
	})

	t.Run("times out an init longer than InitTimeout", func(t *testing.T) {
		fn, _ := testFunction(t, "slowinitfn")
		fn.Env = append(fn.Env, "TEST_INIT=hang")
		fn.InitTimeout = 200 * time.Millisecond
		_, err := Start(context.Background(), fn)
		errorsIs(t, err, ErrTimeout)
	})

	t.Run("fails for a missing binary", func(t *testing.T) {
		fn, _ := testFunction(t, "nofn")
		fn.Path = filepath.Join(t.TempDir(), "bootstrap")
		if _, err := Start(context.Background(), fn); err == nil {
			t.Fatal("Start succeeded, want an error")
		}
	})
}

func TestInstanceInvoke(t *testing.T) {
	t.Run("returns the function's response", func(t *testing.T) {
		fn, _ := testFunction(t, "echofn")
		inst := start(t, fn)
		payload := `{"action":"echo","result":"ünïcode ✓"}`
		got, err := inst.Invoke(context.Background(), []byte(payload))
		if err != nil {
			t.Fatalf("Invoke: %v", err)
		}
		if string(got) != payload {
			t.Errorf("response = %s, want %s", got, payload)
		}
	})

	t.Run("reports its process's peak memory while it runs", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("PeakRSS reads /proc")
		}
		fn, _ := testFunction(t, "rssfn")
		inst := start(t, fn)
		if _, err := inst.Invoke(context.Background(), []byte(`{"action":"echo"}`)); err != nil {
			t.Fatal(err)
		}
		if got := inst.PeakRSS(); got < 1<<20 || got > 1<<30 {
			t.Errorf("PeakRSS = %d bytes, want a Go process's (1 MiB to 1 GiB)", got)
		}
		if err := inst.Close(); err != nil {
			t.Fatal(err)
		}
		if got := inst.PeakRSS(); got != 0 {
			t.Errorf("PeakRSS after Close = %d, want 0", got)
		}
	})

	t.Run("returns a function error as a *FunctionError and stays usable", func(t *testing.T) {
		fn, _ := testFunction(t, "errfn")
		inst := start(t, fn)
		err := call(t, inst, map[string]string{"action": "error", "value": "amount must be positive"}, nil)
		fe := functionError(t, err)
		if got, want := *fe, (FunctionError{Type: "ValidationError", Message: "amount must be positive"}); got != want {
			t.Errorf("function error = %+v, want %+v", got, want)
		}
		if err := call(t, inst, map[string]string{"action": "echo"}, nil); err != nil {
			t.Errorf("invoke after a function error: %v", err)
		}
	})

	t.Run("answers an unknown request id with 400 like AWS", func(t *testing.T) {
		fn, _ := testFunction(t, "badidfn")
		inst := start(t, fn)
		for _, kind := range []string{"response", "error"} {
			url := "http://" + inst.addr + "/2018-06-01/runtime/invocation/00000000-0000-4000-8000-000000000000/" + kind
			resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatalf("POST %s: %v", kind, err)
			}
			var body FunctionError
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("decode the %s answer: %v", kind, err)
			}
			if got, want := resp.StatusCode, http.StatusBadRequest; got != want {
				t.Errorf("POST %s: status %d, want %d", kind, got, want)
			}
			if got, want := body.Type, "InvalidRequestID"; got != want {
				t.Errorf("POST %s: errorType %q, want %q", kind, got, want)
			}
		}
	})

	t.Run("rejects a payload over Lambda's 6 MB limit", func(t *testing.T) {
		fn, _ := testFunction(t, "bigfn")
		inst := start(t, fn)
		_, err := inst.Invoke(context.Background(), make([]byte, MaxPayload+1))
		if err == nil || !strings.Contains(err.Error(), "exceeds the limit") {
			t.Fatalf("got error %v, want a payload limit error", err)
		}
	})

	t.Run("Close kills the process, is idempotent and fails later invocations", func(t *testing.T) {
		fn, _ := testFunction(t, "closefn")
		checkClose(t, start(t, fn))
	})

	t.Run("Close kills the processes the function started", func(t *testing.T) {
		fn, _ := testFunction(t, "spawnfn")
		inst := start(t, fn)
		var child int
		if err := call(t, inst, map[string]string{"action": "spawn"}, &child); err != nil {
			t.Fatalf("invoke spawn: %v", err)
		}
		if processGone(child) {
			t.Fatalf("child %d not running before Close", child)
		}
		if err := inst.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		waitGone(t, child)
	})
}

func TestLog(t *testing.T) {
	t.Run("copies whole stdout and stderr lines with the function's prefix", func(t *testing.T) {
		fn, logs := testFunction(t, "logfn")
		p := newPool(t, fn)
		const long = 200_000 // longer than a pipe's buffer: arrives in pieces
		ev := map[string]any{"action": "log", "lines": []string{"one", "two"}, "long": long}
		if err := call(t, p, ev, nil); err != nil {
			t.Fatalf("invoke: %v", err)
		}
		if err := p.Close(); err != nil { // waits for the output to be copied
			t.Fatalf("Close: %v", err)
		}

		out := logs.String()
		if !strings.HasSuffix(out, "\n") {
			t.Errorf("log does not end with a whole line: %q", out[max(0, len(out)-40):])
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, l := range lines {
			if !strings.HasPrefix(l, "[logfn] ") {
				t.Errorf("line without prefix: %.60q", l)
			}
		}
		for _, want := range []string{
			"[logfn] stdout: one", "[logfn] stdout: two", "[logfn] stderr: one", "[logfn] stderr: two",
			"[logfn] " + strings.Repeat("x", long),
			"[logfn] unterminated", // the last, unterminated line, flushed at exit
		} {
			if !slices.Contains(lines, want) {
				t.Errorf("log lacks line %.60q", want)
			}
		}
		if got, want := strings.Index(out, "stdout: one"), strings.Index(out, "stdout: two"); got > want {
			t.Errorf("stdout lines out of order")
		}
	})
}

func TestReadFunctionError(t *testing.T) {
	for _, c := range []struct {
		name   string
		body   string
		header string
		want   FunctionError
	}{
		{"takes type and message from the body", `{"errorMessage":"bad","errorType":"ValidationError"}`, "Other", FunctionError{Type: "ValidationError", Message: "bad"}},
		{"takes the type from the header when the body has none", `{"errorMessage":"bad"}`, "Runtime.Custom", FunctionError{Type: "Runtime.Custom", Message: "bad"}},
		{"keeps a body that is not JSON as the message", "plain failure\n", "", FunctionError{Type: "Unhandled", Message: "plain failure"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := http.NewRequest("POST", "/2018-06-01/runtime/invocation/x/error", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.header != "" {
				r.Header.Set("Lambda-Runtime-Function-Error-Type", c.header)
			}
			if got := *readFunctionError(r); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestPool(t *testing.T) {
	t.Run("reuses a warm instance", func(t *testing.T) {
		fn, _ := testFunction(t, "warmfn")
		p := newPool(t, fn)
		first, second := pidOf(t, p), pidOf(t, p)
		if first != second {
			t.Errorf("second invocation ran in process %d, want the warm %d", second, first)
		}
		wantStarted(t, p, 1)
	})

	t.Run("runs concurrent invocations on at most MaxInstances instances", func(t *testing.T) {
		const invocations, maxInstances = 20, 4
		fn, _ := testFunction(t, "concurrentfn")
		fn.MaxInstances = maxInstances
		p := newPool(t, fn)

		// Each invocation connects here and waits for a byte. Holding the first
		// connections until maxInstances of them are open proves that many
		// invocations run at once; the pool bounds them to maxInstances.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		conns := make(chan net.Conn)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				conns <- c
			}
		}()

		type outcome struct {
			pid int
			err error
		}
		results := make(chan outcome, invocations)
		payload, _ := json.Marshal(map[string]string{"action": "barrier", "addr": ln.Addr().String()})
		for range invocations {
			go func() {
				resp, err := p.Invoke(context.Background(), payload)
				var pid int
				if err == nil {
					err = json.Unmarshal(resp, &pid)
				}
				results <- outcome{pid, err}
			}()
		}

		timeout := time.After(30 * time.Second)
		var held []net.Conn
		for len(held) < maxInstances {
			select {
			case c := <-conns:
				held = append(held, c)
			case <-timeout:
				t.Fatalf("only %d invocations running at once, want %d", len(held), maxInstances)
			}
		}
		release := func(c net.Conn) {
			_, _ = c.Write([]byte{1})
			_ = c.Close()
		}
		for _, c := range held {
			release(c)
		}

		pids := map[int]bool{}
		for done := 0; done < invocations; {
			select {
			case c := <-conns:
				release(c)
			case r := <-results:
				done++
				if r.err != nil {
					t.Errorf("invocation failed: %v", r.err)
				}
				pids[r.pid] = true
			case <-timeout:
				t.Fatalf("only %d of %d invocations finished", done, invocations)
			}
		}
		wantStarted(t, p, maxInstances)
		if got, want := len(pids), maxInstances; got != want {
			t.Errorf("invocations ran in %d processes, want %d", got, want)
		}
	})

	t.Run("Close kills the instances, is idempotent and fails later invocations", func(t *testing.T) {
		fn, _ := testFunction(t, "closedfn")
		checkClose(t, newPool(t, fn))
	})
}

// TestPoolRecovers: after a timeout, a crash or a panic the pool serves the
// next invocation on a fresh instance; an instance whose init fails frees
// its slot; an abandoned invocation keeps its instance, reused when it ends.
func TestPoolRecovers(t *testing.T) {
	t.Run("kills a timed out instance and recovers on a fresh one", func(t *testing.T) {
		fn, logs := testFunction(t, "timeoutfn")
		fn.Timeout = 300 * time.Millisecond
		p := newPool(t, fn)
		before := pidOf(t, p)

		begin := time.Now()
		err := call(t, p, map[string]string{"action": "sleep", "sleep": "30s"}, nil)
		errorsIs(t, err, ErrTimeout)
		if elapsed := time.Since(begin); elapsed > 5*time.Second {
			t.Errorf("timeout took %v, want about %v", elapsed, fn.Timeout)
		}
		if !processGone(before) {
			t.Errorf("timed out process %d still running", before)
		}
		if after := pidOf(t, p); after == before {
			t.Errorf("invocation after the timeout ran in the killed process %d", after)
		}
		wantStarted(t, p, 2)
		if err := p.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if got, want := logs.String(), "Task timed out after 0.30 seconds"; !strings.Contains(got, want) {
			t.Errorf("log %q does not contain %q", got, want)
		}
	})

	t.Run("discards a crashed instance and recovers on a fresh one", func(t *testing.T) {
		fn, _ := testFunction(t, "crashfn")
		p := newPool(t, fn)
		before := pidOf(t, p)

		err := call(t, p, map[string]any{"action": "exit", "code": 3}, nil)
		errorsIs(t, err, ErrExited)
		if got, want := err.Error(), "exit status 3"; !strings.Contains(got, want) {
			t.Errorf("error %q does not contain %q", got, want)
		}
		var fe *FunctionError
		if errors.As(err, &fe) {
			t.Errorf("a crash came back as function error %v", fe)
		}
		if after := pidOf(t, p); after == before {
			t.Errorf("invocation after the crash ran in the dead process %d", after)
		}
		wantStarted(t, p, 2)
	})

	t.Run("reports a panic as a function error and recovers from the exit that follows", func(t *testing.T) {
		fn, _ := testFunction(t, "panicfn")
		p := newPool(t, fn)
		err := call(t, p, map[string]string{"action": "panic", "value": "boom"}, nil)
		fe := functionError(t, err)
		if got, want := fe.Message, "boom"; got != want {
			t.Errorf("message = %q, want %q", got, want)
		}
		// aws-lambda-go exits after reporting a panic; the event must not be
		// lost to the dying instance.
		if err := call(t, p, map[string]string{"action": "echo"}, nil); err != nil {
			t.Fatalf("invoke after the panic: %v", err)
		}
		wantStarted(t, p, 2)
	})

	t.Run("frees the slot of an instance whose init fails", func(t *testing.T) {
		fn, _ := testFunction(t, "initfailfn")
		fn.Env = append(fn.Env, "TEST_INIT=exit")
		fn.MaxInstances = 1
		p := newPool(t, fn)
		for attempt := range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := p.Invoke(ctx, []byte(`{"action":"echo"}`))
			cancel()
			if !errors.Is(err, ErrExited) {
				t.Fatalf("attempt %d: got error %v, want one that is ErrExited", attempt, err)
			}
		}
		wantStarted(t, p, 0)
		if got, want := p.Live(), 0; got != want {
			t.Errorf("Live() = %d, want %d", got, want)
		}
	})

	t.Run("keeps the instance of an abandoned invocation and reuses it when it ends", func(t *testing.T) {
		fn, _ := testFunction(t, "abandonfn")
		fn.MaxInstances = 1
		p := newPool(t, fn)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()

		ctx, cancel := context.WithCancel(context.Background())
		abandoned := make(chan error, 1)
		go func() {
			_, err := p.Invoke(ctx, []byte(fmt.Sprintf(`{"action":"barrier","addr":%q}`, ln.Addr())))
			abandoned <- err
		}()
		conn, err := ln.Accept() // the invocation is running
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cancel()
		errorsIs(t, <-abandoned, context.Canceled)

		next := make(chan error, 1)
		go func() {
			_, err := p.Invoke(context.Background(), []byte(`{"action":"echo"}`))
			next <- err
		}()
		if _, err := conn.Write([]byte{1}); err != nil { // let the abandoned invocation end
			t.Fatal(err)
		}
		if err := <-next; err != nil {
			t.Fatalf("invoke after the abandoned one: %v", err)
		}
		wantStarted(t, p, 1)
	})
}
