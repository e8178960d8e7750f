// Package localserver runs a local stand-in of an AWS service (dynalite,
// Versity's S3 gateway) as a child process on a loopback port: it starts
// it, waits until it listens and answers, and stops it.
package localserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ErrAddrInUse is returned by Start when something else listens on the
// address it was given (another local stack's engine, say).
var ErrAddrInUse = errors.New("address in use")

const (
	readyTimeout = 15 * time.Second // for a server to listen and answer
	maxOutput    = 50               // lines of a server's output kept for errors
)

// Spec says how to run one kind of server: its Name in log lines and
// errors, the Command that serves on host:port, the text of the output
// line by which it says it Listening (its start, or anywhere in it when
// ListeningAnywhere, for a server that prefixes its lines with a time;
// with "", a server that fails to listen can be taken for another
// answering on its address), a Probe
// making one bounded request (nil once it answers as the server does),
// the Log its output goes to, prefixed with its name (nil: discarded), and
// Dir, a folder of the server's own (its data; "" for none), which Stop
// removes, as does a Start that fails.
type Spec struct {
	Name              string
	Command           func(host, port string) *exec.Cmd
	Listening         string
	ListeningAnywhere bool
	Probe             func(ctx context.Context, endpoint string) error
	Log               io.Writer
	Dir               string
}

// Server is a running server process at Endpoint (http://127.0.0.1:PORT).
type Server struct {
	Endpoint string
	name     string
	cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited
	output   []string      // its first lines of output, for errors; read once done
	waitErr  error         // how it exited; read once done
	dir      string        // Spec.Dir, removed once it has stopped
}

// Start starts the server on a free loopback port (or on addr when not
// empty and not port 0) and returns once it answers. The server dies with
// this process.
//
// Start never hands back a server it did not start: when addr is in use,
// or the server could not listen on it, it returns an error wrapping
// ErrAddrInUse, and whatever listens there is left alone.
func Start(ctx context.Context, addr string, spec Spec) (*Server, error) {
	s, err := start(ctx, addr, spec)
	if err != nil {
		if spec.Dir != "" {
			os.RemoveAll(spec.Dir)
		}
		return nil, err
	}
	s.dir = spec.Dir
	return s, nil
}

// start is Start but for spec.Dir, which it neither keeps nor removes.
func start(ctx context.Context, addr string, spec Spec) (*Server, error) {
	if addr != "" && !strings.HasSuffix(addr, ":0") {
		if err := CheckFree(addr); err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
		return spawn(ctx, addr, spec)
	}
	// Another process can take the free port between here and the server
	// listening on it; then another port will do.
	for attempt := 1; ; attempt++ {
		free, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		s, err := spawn(ctx, free, spec)
		if errors.Is(err, ErrAddrInUse) && attempt < 3 {
			continue
		}
		return s, err
	}
}

// FreeAddr returns a loopback address nothing listens on now (another
// process may take it before it is used).
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// CheckFree reports whether a TCP listener could be opened on addr now;
// when something listens there already, the error wraps ErrAddrInUse.
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

// spawn starts the server on addr and returns once it answers. It takes
// what answers for its server only once the server has said it listens,
// and while it still runs: one that could not listen exits, and another
// process may be answering on addr.
func spawn(ctx context.Context, addr string, spec Spec) (*Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s address %q: %w", spec.Name, addr, err)
	}
	cmd := spec.Command(host, port)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	s := &Server{Endpoint: "http://" + net.JoinHostPort(host, port), name: spec.Name, cmd: cmd, done: make(chan struct{})}
	listening := make(chan struct{})
	go func() {
		said := spec.Listening == ""
		if said {
			close(listening)
		}
		for sc := bufio.NewScanner(out); sc.Scan(); {
			line := sc.Text()
			if !said && (strings.HasPrefix(line, spec.Listening) || spec.ListeningAnywhere && strings.Contains(line, spec.Listening)) {
				close(listening)
				said = true
			}
			if len(s.output) < maxOutput {
				s.output = append(s.output, line)
			}
			if spec.Log != nil {
				fmt.Fprintf(spec.Log, "[%s] %s\n", spec.Name, line)
			}
		}
		s.waitErr = cmd.Wait()
		close(s.done)
	}()

	ctx, cancel := context.WithTimeoutCause(ctx, readyTimeout, fmt.Errorf("not ready within %v", readyTimeout))
	defer cancel()
	// ready returns nil once ch is closed, and otherwise why the server will
	// not be ready: it exited, or ctx ended before it would do what.
	ready := func(ch <-chan struct{}, what string) error {
		select {
		case <-ch:
			return nil
		case <-s.done:
			return s.exitError(addr)
		case <-ctx.Done():
			s.Stop()
			return fmt.Errorf("%s did not %s on %s: %w", spec.Name, what, addr, context.Cause(ctx))
		}
	}
	if err := ready(listening, "listen"); err != nil {
		return nil, err
	}
	for {
		// Each attempt is bounded: a server that accepts and never
		// answers must not hold Start forever.
		actx, cancel := context.WithTimeout(ctx, time.Second)
		err := spec.Probe(actx, s.Endpoint)
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
		if err := ready(pause, fmt.Sprintf("answer (%v)", err)); err != nil {
			return nil, err
		}
	}
}

// exitError says why the server exited before it was ready, from its
// output: the address in use (as Node or Go says it), an "Error..." line,
// else its last line. Call it once s.done is closed.
func (s *Server) exitError(addr string) error {
	why := ""
	for _, line := range s.output {
		if strings.Contains(line, "EADDRINUSE") || strings.Contains(line, "address already in use") {
			return fmt.Errorf("%s could not listen on %s: %w", s.name, addr, ErrAddrInUse)
		}
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(why, "Error") {
			why = line
		}
	}
	return fmt.Errorf("%s exited (%v): %s", s.name, s.waitErr, why)
}

// Stop kills the server, waits for it to exit and removes its folder
// (Spec.Dir).
func (s *Server) Stop() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }
