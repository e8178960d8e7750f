package localstack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/cmd/internal/apigw"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/metrics"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/testkit/syncbuf"
)

// sums adds up the values of the EMF records in the log lines of the
// function name: by namespace and metric name.
func sums(t *testing.T, logs, name string) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for line := range strings.Lines(logs) {
		rest, ok := strings.CutPrefix(line, "["+name+"] ")
		if !ok {
			continue
		}
		ps, ok, err := metrics.Read([]byte(rest))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if !ok {
			continue
		}
		for _, p := range ps {
			if fn := p.Dimensions[metrics.FunctionName]; fn != "" && fn != name {
				t.Errorf("%s's line names FunctionName %s: %s", name, fn, line)
			}
			for _, v := range p.Values {
				got[p.Namespace+" "+string(p.Name)] += v
			}
		}
	}
	return got
}

// TestAlarmMetrics drives, on the local engines and the local Lambda
// runtime with the functions' real builds, the failures the stack's alarms
// watch, and reads the metric each alarm watches as CloudWatch would: a
// dispatcher or a file sweeper whose tables are unreachable (the proxy
// refuses every connection) ends its run with an error, which the runtime
// counts in AWS/Lambda Errors for its FunctionName (the alarms on the
// scheduled functions' errors); an API function whose table throttles
// answers 503, which it counts in Faults for its FunctionName (its 5xx
// alarm) and its throttled calls in DynamoDBThrottles (the throttles
// alarm), while Lambda counts no error (the function answered) and the
// local API Gateway counts a 5xx (Api5xxAlarm). The dispatcher's own
// alarms (the oldest due delivery, events given up) are driven in package
// webhooks' tests.
func TestAlarmMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two functions")
	}
	env := storetest.New(t)
	functest.Seed(t, env)
	proxy := env.NewProxy()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir, logs := t.TempDir(), &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the functions' log:\n%s", logs)
		}
	})
	pool := func(logicalID string, timeout time.Duration) *runtimeapi.Pool {
		t.Helper()
		bin, err := Build(context.Background(), root, dir, logicalID, false)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := env.Template.Function(logicalID)
		fn, err := Function(env.Template, f, bin, Engines{DynamoDB: proxy.URL, S3: env.S3Endpoint, Tables: env.Names, Names: env.Names}, logs)
		if err != nil {
			t.Fatal(err)
		}
		fn.Timeout = timeout
		p := runtimeapi.NewPool(fn)
		t.Cleanup(func() { p.Close() })
		return p
	}

	t.Run("AFailingDispatcherIsALambdaError", func(t *testing.T) {
		const name = "WebhookDispatchFunction"
		// The run polls for 3 s: its timeout less the 12 s it keeps for a delivery.
		p := pool(name, 15*time.Second)
		proxy.Refuse(true)
		defer proxy.Refuse(false)
		_, err := p.Invoke(context.Background(), []byte(`{}`))
		if err == nil {
			t.Fatal("the dispatcher's run succeeded with its tables unreachable")
		}
		p.Close() // its output copied
		got := sums(t, logs.String(), name)
		if got["AWS/Lambda Invocations"] != 1 || got["AWS/Lambda Errors"] != 1 {
			t.Errorf("AWS/Lambda for %s: %v; want 1 invocation, 1 error", name, got)
		}
		t.Logf("%s's run: %v; its metrics: %v", name, err, got)
	})

	t.Run("AThrottledTableIsAFaultOfTheAPIFunction", func(t *testing.T) {
		const name = "ListOrdersFunction"
		p := pool(name, 10*time.Second)
		list := func() int {
			ev, _ := json.Marshal(functest.Request("GET", "/api/live-orders", "", functest.DevHeaders, ""))
			out, err := p.Invoke(context.Background(), ev)
			if err != nil {
				t.Fatalf("invoke: %v", err)
			}
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode
		}
		if got := list(); got != 200 {
			t.Fatalf("a list with DynamoDB up answered %d", got)
		}
		proxy.SetFault(func(storetest.ProxyCall) *storetest.Fault {
			return &storetest.Fault{Status: 400, Type: "ProvisionedThroughputExceededException"}
		})
		got5xx := list()
		proxy.SetFault(nil)
		if got5xx < 500 {
			t.Fatalf("a list with its table throttled answered %d, want a 5xx", got5xx)
		}
		p.Close()
		ns := "StampDuty/stampduty-local"
		got := sums(t, logs.String(), name)
		if got[ns+" Requests"] != 2 || got[ns+" Faults"] != 1 {
			t.Errorf("%s's metrics: %v; want 2 requests, 1 fault in %s", name, got, ns)
		}
		if got["AWS/Lambda Invocations"] != 2 || got["AWS/Lambda Errors"] != 0 {
			t.Errorf("AWS/Lambda for %s: %v; want 2 invocations and no error (a 5xx answer is no Lambda error)", name, got)
		}
		t.Logf("%s answered %d; its metrics: %v", name, got5xx, got)
	})

	t.Run("AThrottledTableIsA5xxOfTheAPIAndAThrottleOfDynamoDB", func(t *testing.T) {
		const name = "ListOrdersFunction"
		before := len(logs.String()) // the lines of the subtest above left out
		var api syncbuf.Buffer
		p := pool(name, 10*time.Second)
		srv := httptest.NewServer(apigw.NewHandler([]apigw.Route{{Method: "GET", Path: "/api/live-orders", Target: p}},
			apigw.Options{Metrics: &api, ApiID: "Api"}))
		defer srv.Close()
		proxy.SetFault(func(storetest.ProxyCall) *storetest.Fault {
			return &storetest.Fault{Status: 400, Type: "ProvisionedThroughputExceededException"}
		})
		req, _ := http.NewRequest("GET", srv.URL+"/api/live-orders", nil)
		req.Header.Set("Authorization", "Bearer "+localdb.DevToken)
		resp, err := http.DefaultClient.Do(req)
		proxy.SetFault(nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		p.Close()
		// Api5xxAlarm watches API Gateway's 5xx; DynamoDBThrottlesAlarm
		// the functions' DynamoDBThrottles.
		five := 0.0
		for line := range strings.Lines(api.String()) {
			ps, _, _ := metrics.Read([]byte(line))
			for _, pt := range ps {
				if pt.Namespace == apigw.ApiNamespace && pt.Name == "5xx" && pt.Dimensions["ApiId"] == "Api" {
					five += pt.Values[0]
				}
			}
		}
		if resp.StatusCode < 500 || five != 1 {
			t.Errorf("the API answered %d and counted %v in AWS/ApiGateway 5xx; want a 5xx, counted once", resp.StatusCode, five)
		}
		got := sums(t, logs.String()[before:], name)
		if got["StampDuty/stampduty-local DynamoDBThrottles"] < 1 {
			t.Errorf("%s's metrics: %v; want its throttled calls counted in DynamoDBThrottles", name, got)
		}
	})

	t.Run("AFailingSweeperIsALambdaError", func(t *testing.T) {
		const name = "FileSweeperFunction"
		p := pool(name, 30*time.Second)
		proxy.Refuse(true)
		defer proxy.Refuse(false)
		if _, err := p.Invoke(context.Background(), []byte(`{}`)); err == nil {
			t.Fatal("the sweeper's run succeeded with its tables unreachable")
		}
		p.Close()
		if got := sums(t, logs.String(), name); got["AWS/Lambda Invocations"] != 1 || got["AWS/Lambda Errors"] != 1 {
			t.Errorf("AWS/Lambda for %s: %v; want 1 invocation, 1 error", name, got)
		}
	})
}
