package localserver

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// httpProbe answers nil when anything serves HTTP at endpoint.
func httpProbe(ctx context.Context, endpoint string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// shell returns a Command running script with sh, HOST and PORT set.
func shell(script string) func(host, port string) *exec.Cmd {
	return func(host, port string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = append(cmd.Environ(), "HOST="+host, "PORT="+port)
		return cmd
	}
}

// freeAddr returns a loopback address no one listens on now (FreeAddr).
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestStart(t *testing.T) {
	ctx := context.Background()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer other.Close()
	otherAddr := strings.TrimPrefix(other.URL, "http://")

	// The address check comes first, but another process can take the
	// address after it: then the server cannot listen, and whatever answers
	// there must not be taken for it.
	t.Run("DoesNotTakeAnotherServerForItsOwn", func(t *testing.T) {
		for name, spec := range map[string]Spec{
			"NodeStyle": {Name: "fake", Command: shell(`echo "Error: listen EADDRINUSE: address already in use $HOST:$PORT"; exit 1`),
				Listening: "listening", Probe: httpProbe},
			"DiesBeforeListening": {Name: "fake", Command: shell(`echo "bind: address already in use"; exit 1`), Listening: "listening",
				Probe: httpProbe},
		} {
			t.Run(name, func(t *testing.T) {
				s, err := spawn(ctx, otherAddr, spec)
				if err == nil {
					s.Stop()
					t.Fatal("spawn succeeded while another server held the address")
				}
				if !errors.Is(err, ErrAddrInUse) {
					t.Errorf("spawn = %v, want ErrAddrInUse", err)
				}
			})
		}
	})
	t.Run("ErrAddressTaken", func(t *testing.T) {
		_, err := Start(ctx, otherAddr, Spec{Name: "fake", Command: shell(`sleep 5`), Probe: httpProbe})
		if !errors.Is(err, ErrAddrInUse) {
			t.Errorf("Start on a taken address = %v, want ErrAddrInUse", err)
		}
	})
	t.Run("ErrExitReported", func(t *testing.T) {
		_, err := Start(ctx, "", Spec{Name: "fake", Command: shell(`echo starting; echo "Error: no config"; exit 3`), Probe: httpProbe})
		if err == nil || !strings.Contains(err.Error(), "Error: no config") {
			t.Errorf("Start of a server that exits = %v, want its error line", err)
		}
	})
	t.Run("ListeningAnywhere", func(t *testing.T) {
		// A server that says it listens after a timestamp (cognito-local's
		// "[<time>] INFO: ... Cognito Local running on ..."): found with
		// ListeningAnywhere, and not taken as said without it.
		for _, anywhere := range []bool{true, false} {
			addr := freeAddr(t)
			var srv *http.Server
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			s, err := Start(ctx, addr, Spec{Name: "fake",
				Command: func(host, port string) *exec.Cmd {
					srv = &http.Server{Addr: net.JoinHostPort(host, port)}
					go srv.ListenAndServe()
					return shell(`echo "[1795746998105] INFO: running on $HOST:$PORT"; sleep 30`)(host, port)
				}, Listening: "running on", ListeningAnywhere: anywhere, Probe: httpProbe})
			cancel()
			if err == nil {
				s.Stop()
			}
			if got, want := err == nil, anywhere; got != want {
				t.Errorf("ListeningAnywhere %v: Start = %v, want started %v", anywhere, err, want)
			}
			srv.Close()
		}
	})
	t.Run("ServesOnAFreePort", func(t *testing.T) {
		// A server made of this test's own HTTP listener, started by the
		// command and probed for real.
		addr := freeAddr(t)
		var srv *http.Server
		s, err := Start(ctx, addr, Spec{Name: "fake",
			Command: func(host, port string) *exec.Cmd {
				srv = &http.Server{Addr: net.JoinHostPort(host, port)}
				go srv.ListenAndServe()
				return exec.Command("sleep", "30")
			}, Probe: httpProbe})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		if got, want := s.Endpoint, "http://"+addr; got != want {
			t.Errorf("Endpoint = %s, want %s", got, want)
		}
		s.Stop()
	})
	t.Run("ItsDirGoesWhenItStopsOrFailsToStart", func(t *testing.T) {
		gone := func(t *testing.T, dir string) {
			t.Helper()
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s after the server: %v, want it removed", dir, err)
			}
		}
		failed := t.TempDir()
		if _, err := Start(ctx, "", Spec{Name: "fake", Command: shell(`exit 3`), Probe: httpProbe, Dir: failed}); err == nil {
			t.Fatal("Start of a server that exits succeeded")
		}
		gone(t, failed)

		// The server is this test's own HTTP listener, started by the
		// command (as in ServesOnAFreePort): one listening before Start
		// would make the address taken.
		stopped := t.TempDir()
		var srv *http.Server
		s, err := Start(ctx, freeAddr(t), Spec{Name: "fake",
			Command: func(host, port string) *exec.Cmd {
				srv = &http.Server{Addr: net.JoinHostPort(host, port)}
				go srv.ListenAndServe()
				return exec.Command("sleep", "30")
			}, Probe: httpProbe, Dir: stopped})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		if _, err := os.Stat(stopped); err != nil {
			t.Fatalf("the running server's dir: %v", err)
		}
		s.Stop()
		gone(t, stopped)
	})
}
