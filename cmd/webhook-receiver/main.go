// Command webhook-receiver is the webhook receiver of the walk-through
// (README.md beside it: "Webhooks, step by step"), not part of the service:
// it listens on a loopback address, checks each delivery's
// Stampduty-Signature with the webhook's secret (webhooks.Verify, as a
// receiver written in Go would), and prints one line per delivery:
//
//	delivery=1 at=2026-11-23T16:50:01.123Z id=evt_… type=order.created order=k3v9… previous=- status=- seen=1 signature=ok answer=500
//
// seen counts the deliveries of that event id so far (a retry or a
// redelivery brings the same id again). It answers 204, 400 when the
// signature does not verify, or 500 to the first -fail deliveries.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"stampduty/shared/webhooks"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4567", "where to listen (keep it on loopback: the local stack delivers only there)")
	secret := flag.String("secret", os.Getenv("WEBHOOK_SECRET"), "the webhook's secret, whsec_… (default $WEBHOOK_SECRET)")
	fail := flag.Int("fail", 0, "answer 500 to the first `n` deliveries")
	logFile := flag.String("log", "", "also append each delivery's line to this `file`")
	save := flag.String("save", "", "keep each delivery's body and signature header as <n>.json and <n>.sig in this `folder`")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, &receiver{secret: *secret, fail: *fail, logFile: *logFile, save: *save, out: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(1)
	}
}

// run serves r on addr until ctx ends.
func run(ctx context.Context, addr string, r *receiver) error {
	if r.secret == "" {
		return errors.New("no secret: pass -secret whsec_… or set WEBHOOK_SECRET")
	}
	if r.save != "" {
		if err := os.MkdirAll(r.save, 0o700); err != nil {
			return fmt.Errorf("the -save folder: %w", err)
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Fprintf(r.out, "webhook-receiver: listening on http://%s, failing the first %d deliveries\n", l.Addr(), r.fail)
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// receiver answers deliveries and writes a line for each, to out and to the
// file logFile, and keeps each delivery in the folder save ("": none).
type receiver struct {
	secret, logFile, save string
	fail                  int
	out                   io.Writer
	now                   func() time.Time // nil means time.Now

	mu   sync.Mutex
	n    int
	seen map[string]int
}

// delivery is what a line shows of an event.
type delivery struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		Order struct {
			DocumentID string `json:"documentId"`
		} `json:"order"`
		PreviousStatus string `json:"previous_status"` // null reads as ""
		OrderStatus    string `json:"order_status"`
	} `json:"data"`
}

// ServeHTTP answers one delivery.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	if r.now != nil {
		at = r.now()
	}
	if req.Method != http.MethodPost {
		// Not a delivery (a reader's curl checking that it is up): not counted.
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "deliveries are POSTs", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20)) // an event is a few KiB
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	sig := req.Header.Get(webhooks.HeaderSignature)
	verified := "ok"
	if err := webhooks.Verify(sig, r.secret, body, at, 0); err != nil {
		verified = "bad"
		fmt.Fprintf(os.Stderr, "webhook-receiver: %v\n", err)
	}
	var d delivery
	if err := json.Unmarshal(body, &d); err != nil || d.ID == "" || d.ID != req.Header.Get(webhooks.HeaderEventID) {
		verified = "bad"
		fmt.Fprintln(os.Stderr, "webhook-receiver: the body is not an event with the id of the Stampduty-Event-Id header")
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.seen == nil {
		r.seen = map[string]int{}
	}
	r.seen[d.ID]++
	answer := http.StatusNoContent
	switch {
	case verified != "ok":
		answer = http.StatusBadRequest
	case r.n <= r.fail:
		answer = http.StatusInternalServerError
	}
	line := fmt.Sprintf("delivery=%d at=%s id=%s type=%s order=%s previous=%s status=%s seen=%d signature=%s answer=%d\n",
		r.n, at.UTC().Format("2006-01-02T15:04:05.000Z"), orDash(d.ID), orDash(d.Type), orDash(d.Data.Order.DocumentID),
		orDash(d.Data.PreviousStatus), orDash(d.Data.OrderStatus), r.seen[d.ID], verified, answer)
	fmt.Fprint(r.out, line)
	if err := r.keep(line, body, sig); err != nil {
		fmt.Fprintf(os.Stderr, "webhook-receiver: %v\n", err)
	}
	w.WriteHeader(answer)
}

// keep appends line to the log file and saves the delivery, as asked.
func (r *receiver) keep(line string, body []byte, sig string) error {
	if r.logFile != "" {
		f, err := os.OpenFile(r.logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, err = f.WriteString(line)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			return fmt.Errorf("log: %w", err)
		}
	}
	if r.save == "" {
		return nil
	}
	name := filepath.Join(r.save, strconv.Itoa(r.n))
	if err := errors.Join(os.WriteFile(name+".json", body, 0o600), os.WriteFile(name+".sig", []byte(sig), 0o600)); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	return nil
}

// orDash returns s, or "-" when it is empty, so a line's fields stay one word each.
func orDash(s string) string { return cmp.Or(s, "-") }
