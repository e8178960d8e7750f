package runtimeapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Instance is one process of a Function with the Runtime API endpoint it talks
// to. It runs one invocation at a time; concurrent Invoke calls wait for each
// other. An instance that crashed, timed out or failed its init is dead: every
// later Invoke fails.
type Instance struct {
	fn      Function
	addr    string // host:port of the Runtime API, as in AWS_LAMBDA_RUNTIME_API
	srv     *http.Server
	started time.Time

	ready     chan struct{} // closed on the first /invocation/next
	markReady func()        // records initDur and closes ready, once
	initDur   time.Duration // written before ready is closed

	dead   context.Context         // done once the instance is dead; its cause says why
	kill   context.CancelCauseFunc // marks it dead, which kills its process group
	exited chan struct{}           // closed once the process has been reaped
	pid    int                     // the process's id, once started
	close  func() error            // Close, run once

	events chan *invocation // hands an event to a waiting /invocation/next
	busy   chan struct{}    // holds a token while an invocation is in flight

	mu      sync.Mutex
	current *invocation // the invocation in flight, if any
}

// invocation is one event on its way through an instance.
type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	traceID  string
	result   chan result // buffered; receives the function's one answer
	answered bool        // guarded by Instance.mu
}

// result is the outcome of an invocation.
type result struct {
	body []byte
	err  error
	// invoked is set when the invocation reached the function's code (see
	// metrics.go): its event was handed over, or it timed out waiting.
	invoked bool
}

// Start starts one process of fn and returns once it has made its first
// /invocation/next call, that is once its init is over. It fails when the
// process exits or reports an init error first, when the init takes longer
// than fn.InitTimeout, or when ctx ends; the process is killed then.
func Start(ctx context.Context, fn Function) (*Instance, error) {
	fn, err := fn.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start %s: listen: %w", fn.Name, err)
	}
	dead, kill := context.WithCancelCause(context.Background())
	i := &Instance{fn: fn, addr: ln.Addr().String(), dead: dead, kill: kill, ready: make(chan struct{}),
		exited: make(chan struct{}), events: make(chan *invocation), busy: make(chan struct{}, 1)}
	i.markReady = sync.OnceFunc(func() { i.initDur = time.Since(i.started); close(i.ready) })
	i.srv = &http.Server{Handler: i.routes(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)} // connections of killed processes break
	i.close = sync.OnceValue(func() error {
		kill(ErrClosed)
		<-i.exited
		if err := i.srv.Close(); err != nil {
			return fmt.Errorf("close %s: %w", fn.Name, err)
		}
		return nil
	})

	// The process dies with i.dead, with its process group: the processes it
	// starts too.
	cmd := exec.CommandContext(dead, fn.Path)
	cmd.Env = fn.environ(i.addr, time.Now())
	cmd.Dir = filepath.Dir(fn.Path)
	stdout := &lineWriter{out: fn.Log, prefix: "[" + fn.Name + "] "}
	stderr := &lineWriter{out: fn.Log, prefix: stdout.prefix}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second // children that keep the output pipes open
	i.started = time.Now()
	if err := cmd.Start(); err != nil {
		_ = ln.Close()
		kill(err)
		return nil, fmt.Errorf("start %s: %w", fn.Name, err)
	}
	i.pid = cmd.Process.Pid
	// Serve only now: the process's first connection waits in the backlog.
	go func() { _ = i.srv.Serve(ln) }()
	go func() {
		err := cmd.Wait()
		stdout.flush()
		stderr.flush()
		kill(fmt.Errorf("%w: %v", ErrExited, cmp.Or(err, errors.New("exit status 0"))))
		close(i.exited)
	}()

	ctx, cancel := context.WithTimeoutCause(ctx, fn.InitTimeout, fmt.Errorf("init: %w after %s", ErrTimeout, fn.InitTimeout))
	defer cancel()
	select {
	case <-i.ready:
		return i, nil
	case <-dead.Done():
		err = context.Cause(dead)
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	_ = i.Close()
	return nil, fmt.Errorf("start %s: %w", fn.Name, err)
}

// InitDuration returns the time from process start until its first
// /invocation/next: Lambda's "Init Duration".
func (i *Instance) InitDuration() time.Duration {
	<-i.ready // closed before Start returns an Instance
	return i.initDur
}

// Invoke runs one invocation with payload as the event and returns the
// function's response. A function error (the function called
// /invocation/{id}/error) comes back as a *FunctionError, unwrapped. A crash
// (the process exited mid-invocation) returns an error for which
// errors.Is(err, ErrExited), a timeout one for which errors.Is(err,
// ErrTimeout); the instance is dead after both. When ctx ends before the
// function answers, Invoke returns ctx's error while the invocation runs on to
// its end or its timeout, and the instance stays busy meanwhile.
func (i *Instance) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	out, err := i.invoke(ctx, payload, func() {})
	return out, i.wrap(err)
}

// wrap adds the function's name to an invocation error, except to a
// *FunctionError, which callers expect as is.
func (i *Instance) wrap(err error) error {
	if _, ok := err.(*FunctionError); ok || err == nil {
		return err
	}
	return fmt.Errorf("invoke %s: %w", i.fn.Name, err)
}

// invoke runs one invocation like Invoke and calls free once the invocation
// is over and the instance free again, which is after the return when ctx
// ended first.
func (i *Instance) invoke(ctx context.Context, payload []byte, free func()) ([]byte, error) {
	if len(payload) > MaxPayload {
		free()
		return nil, fmt.Errorf("request payload of %d bytes exceeds the limit of %d bytes", len(payload), MaxPayload)
	}
	select {
	case i.busy <- struct{}{}: // a dead instance fails the event in run
	case <-ctx.Done():
		free()
		return nil, ctx.Err()
	}

	now := time.Now()
	inv := &invocation{id: newRequestID(), payload: payload, deadline: now.Add(i.fn.Timeout), result: make(chan result, 1),
		traceID: fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", now.Unix(), randomHex(12), randomHex(8))}
	i.mu.Lock()
	i.current = inv
	i.mu.Unlock()

	outcome := make(chan result, 1)
	go func() {
		res := i.run(ctx, inv)
		if res.invoked {
			i.fn.record(res.err != nil, time.Now())
		}
		i.mu.Lock()
		i.current = nil
		i.mu.Unlock()
		<-i.busy
		free()
		outcome <- res
	}()

	select {
	case res := <-outcome:
		return res.body, res.err
	case <-ctx.Done():
		select {
		case res := <-outcome: // finished at the same moment: report it
			return res.body, res.err
		default:
			return nil, ctx.Err()
		}
	}
}

// run hands inv to the process's /invocation/next and waits for its answer,
// for the process's death or for the deadline. ctx only matters until the
// event is delivered: once the function has it, the invocation runs to its end.
func (i *Instance) run(ctx context.Context, inv *invocation) result {
	timer := time.NewTimer(time.Until(inv.deadline))
	defer timer.Stop()

	select {
	case i.events <- inv:
	case <-i.dead.Done():
		return result{err: fmt.Errorf("%w: %w", errNotDelivered, context.Cause(i.dead))}
	case <-ctx.Done():
		return result{err: ctx.Err()}
	case <-timer.C:
		return i.timedOut(inv)
	}
	res := i.await(inv, timer)
	res.invoked = true
	return res
}

// await waits for the answer to inv, which the function has, for the
// process's death or for timer (the deadline).
func (i *Instance) await(inv *invocation, timer *time.Timer) result {
	select {
	case res := <-inv.result:
		return res
	case <-i.dead.Done():
	case <-timer.C:
	}
	select {
	case res := <-inv.result: // answered, then died or timed out
		return res
	default:
	}
	if i.dead.Err() != nil {
		return result{err: context.Cause(i.dead)}
	}
	return i.timedOut(inv)
}

// timedOut kills the instance for the expired invocation inv.
func (i *Instance) timedOut(inv *invocation) result {
	err := fmt.Errorf("%w after %.2f seconds", ErrTimeout, i.fn.Timeout.Seconds())
	_, _ = fmt.Fprintf(i.fn.Log, "[%s] %s %s Task timed out after %.2f seconds\n",
		i.fn.Name, time.Now().UTC().Format(time.RFC3339Nano), inv.id, i.fn.Timeout.Seconds())
	i.kill(err)
	return result{err: err, invoked: true}
}

// PeakRSS returns the process's peak resident set size since it started,
// in bytes (VmHWM of /proc/<pid>/status): call it before Close. It is 0
// where there is no /proc (not Linux) or once the process is gone.
func (i *Instance) PeakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", i.pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// Close kills the process and its children, waits for it to be reaped and
// closes the Runtime API listener. An invocation in flight fails. Close is
// idempotent.
func (i *Instance) Close() error { return i.close() }
