package runtimeapi

// The test function, and how the tests see its processes. TestMain runs the
// function when this test binary is started as a function's bootstrap
// (AWS_LAMBDA_RUNTIME_API is set). Its event says what to do.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type event struct {
	Action string   `json:"action"`
	Sleep  string   `json:"sleep"`  // sleep: how long
	Lines  []string `json:"lines"`  // log: lines for stdout, then stderr
	Long   int      `json:"long"`   // log: length of an extra line of x
	Addr   string   `json:"addr"`   // barrier: where to wait
	Code   int      `json:"code"`   // exit: the status
	Value  string   `json:"value"`  // error: the message
	Result string   `json:"result"` // echo: ignored, echoed with the rest
}

// ValidationError is the error the "error" action returns; aws-lambda-go
// reports its type name as errorType.
type ValidationError struct{ msg string }

func (e *ValidationError) Error() string { return e.msg }

// invokeInfo is what the "context" action reports.
type invokeInfo struct {
	RequestID   string `json:"requestId"`
	FunctionARN string `json:"functionArn"`
	DeadlineMs  int64  `json:"deadlineMs"`
	TraceID     string `json:"traceId"`
	Cwd         string `json:"cwd"`
}

func handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var ev event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, err
	}
	switch ev.Action {
	case "echo":
		return raw, nil
	case "error":
		return nil, &ValidationError{msg: ev.Value}
	case "panic":
		panic(ev.Value)
	case "sleep":
		d, err := time.ParseDuration(ev.Sleep)
		if err != nil {
			return nil, err
		}
		time.Sleep(d)
		return "slept", nil
	case "exit":
		os.Exit(ev.Code)
	case "log":
		for _, l := range ev.Lines {
			fmt.Println("stdout: " + l)
			fmt.Fprintln(os.Stderr, "stderr: "+l)
		}
		if ev.Long > 0 {
			fmt.Println(strings.Repeat("x", ev.Long))
		}
		fmt.Print("unterminated")
		return "logged", nil
	case "env":
		return os.Environ(), nil
	case "pid":
		return os.Getpid(), nil
	case "spawn":
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return cmd.Process.Pid, nil
	case "context":
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		trace, _ := ctx.Value("x-amzn-trace-id").(string)
		cwd, _ := os.Getwd()
		return invokeInfo{RequestID: lc.AwsRequestID, FunctionARN: lc.InvokedFunctionArn, DeadlineMs: deadline.UnixMilli(), TraceID: trace, Cwd: cwd}, nil
	case "barrier":
		// Hold the invocation until the test, listening on ev.Addr, answers.
		conn, err := net.Dial("tcp", ev.Addr)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		var b [1]byte
		if _, err := conn.Read(b[:]); err != nil {
			return nil, err
		}
		return os.Getpid(), nil
	}
	return nil, fmt.Errorf("unknown action %q", ev.Action)
}

// functionMain is the test function's main; TEST_INIT in its environment
// changes how its init ends.
func functionMain() {
	switch os.Getenv("TEST_INIT") {
	case "exit":
		fmt.Fprintln(os.Stderr, "init: giving up")
		os.Exit(2)
	case "hang":
		select {}
	case "error":
		body := `{"errorMessage":"missing TABLE_NAME","errorType":"Runtime.ConfigError"}`
		url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
		resp, err := http.Post(url, "application/json", bytes.NewBufferString(body))
		if err == nil {
			resp.Body.Close()
		}
		os.Exit(1)
	}
	lambda.Start(handle)
}

// processesOf returns the live (not zombie) processes other than this one
// running the binary at path.
func processesOf(path string) []int {
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	var pids []int
	for _, exe := range exes {
		var pid int
		if _, err := fmt.Sscanf(exe, "/proc/%d/exe", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if target, err := os.Readlink(exe); err == nil && target == path && !processGone(pid) {
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
