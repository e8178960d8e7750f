package runtimeapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// routes returns the instance's Runtime API.
func (i *Instance) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", i.handleNext)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/{kind}", i.handleAnswer)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", i.handleInitError)
	return mux
}

// handleNext blocks until there is an event for the instance and sends it. The
// first call ends the init phase.
func (i *Instance) handleNext(w http.ResponseWriter, r *http.Request) {
	i.markReady()
	select {
	case inv := <-i.events:
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", i.fn.arn())
		h.Set("Lambda-Runtime-Trace-Id", inv.traceID)
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(inv.payload) // on failure the invocation times out
	case <-i.dead.Done():
		writeError(w, http.StatusInternalServerError, "Runtime.Stopped", "The instance is shutting down.")
	case <-r.Context().Done():
	}
}

// handleAnswer takes the function's response to an invocation, or the error
// it reports for it.
func (i *Instance) handleAnswer(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("kind")
	if kind != "response" && kind != "error" {
		http.NotFound(w, r)
		return
	}
	// The invocation in flight, if it has that request id and no answer yet.
	i.mu.Lock()
	inv := i.current
	claimed := inv != nil && inv.id == r.PathValue("id") && !inv.answered
	if claimed {
		inv.answered = true
	}
	i.mu.Unlock()
	if !claimed {
		writeError(w, http.StatusBadRequest, "InvalidRequestID", "Invalid request ID")
		return
	}
	if kind == "error" {
		inv.result <- result{err: readFunctionError(r)}
		writeAccepted(w)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPayload+1))
	switch {
	case err != nil:
		inv.result <- result{err: fmt.Errorf("read the function's response: %w", err)}
		writeError(w, http.StatusBadRequest, "InvalidRequest", err.Error())
	case len(body) > MaxPayload:
		fe := &FunctionError{Type: "Function.ResponseSizeTooLarge",
			Message: fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", MaxPayload)}
		inv.result <- result{err: fe}
		writeError(w, http.StatusRequestEntityTooLarge, fe.Type, fe.Message)
	default:
		inv.result <- result{body: body}
		writeAccepted(w)
	}
}

// handleInitError takes the error a function reports during its init and
// fails the instance.
func (i *Instance) handleInitError(w http.ResponseWriter, r *http.Request) {
	fe := readFunctionError(r)
	writeAccepted(w)
	i.kill(fmt.Errorf("init error: %w", fe))
}

// readFunctionError decodes an error report: a JSON body with errorType and
// errorMessage, the type possibly in the Lambda-Runtime-Function-Error-Type
// header instead.
func readFunctionError(r *http.Request) *FunctionError {
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxPayload))
	var fe FunctionError
	if err := json.Unmarshal(body, &fe); err != nil {
		fe = FunctionError{Message: strings.TrimSpace(string(body))}
	}
	if fe.Type == "" {
		fe.Type = cmp.Or(r.Header.Get("Lambda-Runtime-Function-Error-Type"), "Unhandled")
	}
	return &fe
}

func writeAccepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, `{"status":"OK"}`)
}

// writeError answers with the Runtime API's error body.
func writeError(w http.ResponseWriter, status int, errType, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(FunctionError{Type: errType, Message: msg})
}
