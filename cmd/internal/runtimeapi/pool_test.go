package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func TestPool(t *testing.T) {
	t.Run("reuses a warm instance", func(t *testing.T) {
		fn, _ := testFunction(t, "warmfn")
		p := newPool(t, fn)
		first, second := pidOf(t, p), pidOf(t, p)
		if first != second {
			t.Errorf("second invocation ran in process %d, want the warm %d", second, first)
		}
		if got, want := p.Started(), 1; got != want {
			t.Errorf("Started() = %d, want %d", got, want)
		}
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
		if got, want := p.Started(), maxInstances; got != want {
			t.Errorf("Started() = %d, want %d", got, want)
		}
		if got, want := len(pids), maxInstances; got != want {
			t.Errorf("invocations ran in %d processes, want %d", got, want)
		}
	})

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
		if got, want := p.Started(), 2; got != want {
			t.Errorf("Started() = %d, want %d", got, want)
		}
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
		if got, want := p.Started(), 2; got != want {
			t.Errorf("Started() = %d, want %d", got, want)
		}
	})

	t.Run("reports a panic as a function error and recovers from the exit that follows", func(t *testing.T) {
		fn, _ := testFunction(t, "panicfn")
		p := newPool(t, fn)
		err := call(t, p, map[string]string{"action": "panic", "value": "boom"}, nil)
		fe, ok := err.(*FunctionError)
		if !ok {
			t.Fatalf("got error %v, want a *FunctionError", err)
		}
		if got, want := fe.Message, "boom"; got != want {
			t.Errorf("message = %q, want %q", got, want)
		}
		// aws-lambda-go exits after reporting a panic; the event must not be
		// lost to the dying instance.
		if err := call(t, p, map[string]string{"action": "echo"}, nil); err != nil {
			t.Fatalf("invoke after the panic: %v", err)
		}
		if got, want := p.Started(), 2; got != want {
			t.Errorf("Started() = %d, want %d", got, want)
		}
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
		if got, want := p.Started(), 0; got != want {
			t.Errorf("Started() = %d, want %d", got, want)
		}
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
		if got, want := p.Started(), 1; got != want {
			t.Errorf("Started() = %d, want %d", got, want)
		}
	})

	t.Run("fails invocations after Close", func(t *testing.T) {
		fn, _ := testFunction(t, "closedfn")
		p := newPool(t, fn)
		pid := pidOf(t, p)
		if err := p.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if !processGone(pid) {
			t.Errorf("process %d still running after Close", pid)
		}
		_, err := p.Invoke(context.Background(), []byte(`{"action":"echo"}`))
		errorsIs(t, err, ErrClosed)
	})
}
