package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/cmd/internal/apigw"
	"stampduty/cmd/internal/localmetrics"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/metrics"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// startStack runs the local stack as `make local` does, with env as its
// environment (free ports unless env says otherwise). stop ends it and
// waits; it also runs when the test ends.
func startStack(t *testing.T, env map[string]string) (s *stack, out *functest.SyncBuffer, stop func()) {
	t.Helper()
	if env == nil {
		env = map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0"}
	}
	out = &functest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *stack, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, options{getenv: func(k string) string { return env[k] }, out: out, ready: func(s *stack) { ready <- s }})
	}()
	select {
	case s = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("local stack did not start: %v\n%s", err, out)
	case <-time.After(3 * time.Minute):
		cancel()
		t.Fatalf("local stack did not start in time\n%s", out)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s, out, stop
}

// TestLocalStack starts one stack and checks, against it, what a reader of
// the README does with it: its examples, the webhooks walk-through, Strapi's
// client, warm reuse, a burst of creates, hostile requests and the logs,
// and, last, where issue 33 found it unlike AWS (checkFidelity).
func TestLocalStack(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed to run the README's examples")
	}
	s, out, _ := startStack(t, nil)

	t.Run("NoSchedulesWithoutScheduleEvents", func(t *testing.T) { checkSchedules(t, s) })
	t.Run("StaffSignIn", func(t *testing.T) { checkStaffSignIn(t, s, out) })
	// Before the subtests that create many orders: the operator finds
	// the new order on the queue's first page (oldest first, 25).
	t.Run("Console", func(t *testing.T) { checkConsole(t, s) })
	// The webhooks walk-through waits about 30 s for a retry: it runs
	// beside the other examples, under its own caller.
	walk := startWalkthrough(t, s)
	t.Run("ReadmeExamples", func(t *testing.T) { checkExamples(t, s) })
	t.Run("WebhooksWalkthrough", walk.check)
	t.Run("StrapiClient", func(t *testing.T) { checkStrapiClient(t, s) })
	t.Run("RequestsRunWarm", func(t *testing.T) { checkRunsWarm(t, s) })
	t.Run("ConcurrentCreates", func(t *testing.T) { checkConcurrentCreates(t, s) })
	t.Run("HostileRequests", func(t *testing.T) { checkHostile(t, s, out) })
	t.Run("FunctionLogsShown", func(t *testing.T) { checkFunctionLogs(t, s, out) })
	t.Run("MetricsSummarised", func(t *testing.T) { checkMetrics(t, s, out) })
	t.Run("FunctionMetricsDeclared", func(t *testing.T) { checkMetricsDeclared(t, out) })
	t.Run("LocalFidelity", func(t *testing.T) { checkFidelity(t, s, out) })
}

// checkMetrics: the functions' metric lines are shown with their logs, and
// the stack sums the last minutes of them as the dashboard would: the
// creates and lists the subtests above sent are counted by function, with
// their latencies.
func checkMetrics(t *testing.T, s *stack, out *functest.SyncBuffer) {
	shown := false
	for line := range strings.Lines(out.String()) {
		rest, ok := strings.CutPrefix(line, "[CreateOrderFunction] ")
		if _, isEMF, _ := metrics.Read([]byte(rest)); ok && isEMF {
			shown = true
			break
		}
	}
	if !shown {
		t.Error("the output shows no metric line of CreateOrderFunction")
	}
	resp, err := http.Get(s.URL + localmetrics.Path + "?minutes=60")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Data []localmetrics.Row }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", localmetrics.Path, resp.StatusCode, err)
	}
	rows := map[string]localmetrics.Row{}
	for _, r := range body.Data {
		rows[r.Namespace+" "+r.Metric+" "+r.Dims()] = r
		// The stack's own, and the local twins of Lambda's and API Gateway's own.
		if r.Namespace != "StampDuty/"+localdb.StackName && r.Namespace != runtimeapi.LambdaNamespace && r.Namespace != apigw.ApiNamespace {
			t.Errorf("%s %s is in namespace %q; want the stack's, StampDuty/%s, %s or %s", r.Metric, r.Dims(), r.Namespace, localdb.StackName,
				runtimeapi.LambdaNamespace, apigw.ApiNamespace)
		}
	}
	ns := "StampDuty/" + localdb.StackName + " "
	for _, fn := range []string{"CreateOrderFunction", "ListOrdersFunction", "ListArticlesFunction"} {
		req, lat := rows[ns+"Requests FunctionName="+fn], rows[ns+"Latency FunctionName="+fn]
		if req.Sum < 1 || lat.Samples != int(req.Sum) || lat.Max <= 0 {
			t.Errorf("%s: Requests %+v, Latency %+v; want each request counted with its latency", fn, req, lat)
		}
		// Each request is one invocation of Lambda's (a 5xx answer is no Lambda error).
		if inv := rows[runtimeapi.LambdaNamespace+" Invocations FunctionName="+fn]; inv.Sum != req.Sum {
			t.Errorf("%s: AWS/Lambda Invocations %+v; want one per request (%v)", fn, inv, req.Sum)
		}
	}
}

// checkSchedules: the stack runs a schedule for each Schedule event of the
// template, and none when it has none.
func checkSchedules(t *testing.T, s *stack) {
	n := 0
	for _, f := range s.tmpl.Functions {
		n += len(f.Schedules)
	}
	if n == 0 && (len(s.schedules) != 0 || s.stopSchedules != nil) {
		t.Errorf("the template has no Schedule events, yet the stack runs %d schedules", len(s.schedules))
	}
	if n > 0 && len(s.schedules) == 0 {
		t.Errorf("the template has %d Schedule events, yet the stack runs none", n)
	}
}

// checkRunsWarm: sequential requests to a function reuse one warm instance.
func checkRunsWarm(t *testing.T, s *stack) {
	pool := s.pools["ListArticlesFunction"]
	for i := 0; i < 5; i++ {
		resp, err := http.Get(s.URL + "/api/stamp-duty-datas")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if got := pool.Started(); got != 1 {
		t.Errorf("5 sequential requests started %d instances, want 1 (warm reuse)", got)
	}
}

// checkFunctionLogs: the stack's output shows the functions' request lines
// and the banner, and no personal data sent by the examples and creates.
func checkFunctionLogs(t *testing.T, s *stack, out *functest.SyncBuffer) {
	logs := out.String()
	for _, want := range []string{`[CreateOrderFunction] {"time"`, `"msg":"request"`, `"route":"POST /api/live-orders"`, `"caller":"dev"`, "Dev token", "GET  " + s.URL + "/api/live-orders -> ListOrdersFunction"} {
		if !strings.Contains(logs, want) {
			t.Errorf("output lacks %s", want)
		}
	}
	// The README examples and the creates above sent these; the
	// functions' log lines (the output after the banner) hold none.
	_, functionLogs, _ := strings.Cut(logs, "Ctrl-C stops everything.")
	for _, personal := range []string{"ABCDE1234F", "9876543210", "Asha Rao", "Vikram Shah", "MG Road", "Rent for flat 4B", "Party 1", localdb.DevToken} {
		if strings.Contains(functionLogs, personal) {
			t.Errorf("function logs contain %q", personal)
		}
	}
	for _, route := range []string{`"route":"POST /api/live-orders"`, `"route":"GET /api/live-orders"`, `"route":"GET /api/stamp-duty-datas"`} {
		if !strings.Contains(functionLogs, route) {
			t.Errorf("function logs lack %s", route)
		}
	}
}
