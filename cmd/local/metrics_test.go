package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/metrics"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localdb"
)

// metricLines reads the functions' metric records in out, the stack's
// output, where each function's lines are "[LogicalId] <line>", and fails
// t for each metric that is not as shared/metrics declares it: a name not
// in metrics.Defs, another unit, other dimensions than exactly the
// declared ones, a FunctionName other than the function's, a namespace
// other than the local stack's (StampDuty/stampduty-local, as the
// template's StampDuty/${AWS::StackName} resolves locally), or no value.
// The local runtime's twin of Lambda's own metrics (AWS/Lambda Invocations
// and Errors, cmd/internal/runtimeapi) is read apart. It returns each
// metric's sum by function and dimension values ("CreateOrderFunction
// OrdersCreated State=KA", "CreateOrderFunction AWS/Lambda Invocations").
func metricLines(t *testing.T, out string) map[string]float64 {
	t.Helper()
	namespace := "StampDuty/" + localdb.StackName
	sums := map[string]float64{}
	for line := range strings.Lines(out) {
		fn, rest, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "] ")
		if !ok || !strings.HasPrefix(fn, "[") {
			continue
		}
		fn = fn[1:]
		points, isRecord, err := metrics.Read([]byte(rest))
		if err != nil {
			t.Errorf("%s wrote a metric record that does not read: %v\n%s", fn, err, rest)
			continue
		}
		if !isRecord {
			continue
		}
		if len(points) == 0 {
			t.Errorf("%s wrote a metric record with no metric: %s", fn, rest)
		}
		for _, p := range points {
			if p.Namespace == runtimeapi.LambdaNamespace { // the local runtime's twin of Lambda's own
				if p.Name != "Invocations" && p.Name != "Errors" || p.Unit != metrics.Count || len(p.Dimensions) != 1 ||
					p.Dimensions[metrics.FunctionName] != fn || len(p.Values) == 0 {
					t.Errorf("the runtime wrote for %s %s %s %v, want Invocations or Errors counted for its FunctionName: %s", fn, p.Namespace, p.Name, p.Dimensions, rest)
				}
				for _, v := range p.Values {
					sums[fn+" "+p.Namespace+" "+string(p.Name)] += v
				}
				continue
			}
			def, declared := metrics.Lookup(p.Name)
			switch {
			case !declared:
				t.Errorf("%s emits %s, which metrics.Defs does not declare: %s", fn, p.Name, rest)
				continue
			case p.Namespace != namespace:
				t.Errorf("%s emits %s in namespace %q, want %q", fn, p.Name, p.Namespace, namespace)
			case p.Unit != def.Unit:
				t.Errorf("%s emits %s in %q, declared in %q", fn, p.Name, p.Unit, def.Unit)
			case !slices.Equal(slices.Sorted(maps.Keys(p.Dimensions)), slices.Sorted(slices.Values(def.Dimensions))):
				t.Errorf("%s emits %s with dimensions %v, declared with exactly %v", fn, p.Name, p.Dimensions, def.Dimensions)
			case slices.Contains(def.Dimensions, metrics.FunctionName) && p.Dimensions[metrics.FunctionName] != fn:
				t.Errorf("%s emits %s for FunctionName %q, want its own name", fn, p.Name, p.Dimensions[metrics.FunctionName])
			case len(p.Values) == 0:
				t.Errorf("%s emits %s with no value", fn, p.Name)
			}
			key := fn + " " + string(p.Name)
			for _, d := range def.Dimensions {
				if d != metrics.FunctionName {
					key += " " + d + "=" + p.Dimensions[d]
				}
			}
			for _, v := range p.Values {
				sums[key] += v
			}
		}
	}
	return sums
}

// checkMetricsDeclared: every metric the functions wrote while the other
// subtests drove them is one metrics.Defs declares, as declared.
func checkMetricsDeclared(t *testing.T, out *functest.SyncBuffer) {
	time.Sleep(200 * time.Millisecond) // the functions' last lines
	if got := metricLines(t, out.String()); len(got) == 0 {
		t.Error("the functions wrote no metric record")
	}
}

// TestFunctionMetrics drives every API function of the local stack (the
// binaries as Lambda runs them, on the local engines) through real
// requests, then reads their log lines: every metric they emit is as
// metrics.Defs declares it (metricLines), each API function counted its
// requests, and the business metrics count what was done: a live order of
// two papers and a batch row in KA (a refused row, a dry run and a test
// order counting nothing), its papers moved by an operator, a document and
// a certificate attached, and a quote.
func TestFunctionMetrics(t *testing.T) {
	s, out, stop := startStack(t, nil)
	ctx := context.Background()
	pdf := []byte("%PDF-1.7\nmetrics\n%%EOF\n")
	do := func(token, method, path, contentType string, body []byte, sign bool) (int, []byte) {
		t.Helper()
		url := path
		if !strings.HasPrefix(url, "http") {
			url = s.URL + path
		}
		req, err := http.NewRequest(method, url, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if sign {
			sum := sha256.Sum256(body)
			if err := v4.NewSigner().SignHTTP(ctx, s.IAM.Credentials, req, hex.EncodeToString(sum[:]), "execute-api", s.IAM.Region, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	want := func(status int, b []byte, code int, what string) {
		t.Helper()
		if status != code {
			t.Fatalf("%s: %d %s, want %d", what, status, b, code)
		}
	}
	const order = `{"amount":20,"considerationPrice":0,"purpose":"Affidavit","state":"Karnataka","paidBy":"First Party","firstPartyMobileNumber":"9876543210","firstPartyName":"Metrics Party","secondPartyName":"B"`
	dev := localdb.DevToken

	// The caller's side.
	status, b := do("", "GET", "/api/stamp-duty-datas", "", nil, false)
	want(status, b, 200, "the articles")
	status, b = do("", "GET", "/api/stamp-duty-quotes?purpose=Affidavit&state=Karnataka", "", nil, false)
	want(status, b, 200, "a quote")
	doc := createOrderWith(t, s, dev, 2)
	status, b = do(dev, "POST", "/api/live-orders/batch", "application/json", []byte(`{"data":[`+order+`},`+order+`,"amount":7}]}`), false)
	want(status, b, 200, "a batch of a row and a refused row")
	status, b = do(dev, "POST", "/api/live-orders/batch?dryRun=true", "application/json", []byte(`{"data":[`+order+`}]}`), false)
	want(status, b, 200, "a dry run")
	status, b = do(dev, "PUT", "/api/live-orders/"+doc+"/document", "application/pdf", pdf, false)
	want(status, b, 200, "a document")
	status, b = do(dev, "GET", "/api/live-orders/"+doc, "", nil, false)
	want(status, b, 200, "the order")
	var got struct {
		Data struct {
			Papers []struct {
				DocumentID string `json:"documentId"`
			} `json:"live_order_fulfillments"`
			StampDuty struct {
				Document struct{ URL string } `json:"uploaded_document"`
			} `json:"stamp_duty"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &got); err != nil || len(got.Data.Papers) != 2 || got.Data.StampDuty.Document.URL == "" {
		t.Fatalf("the order: %v %s", err, b)
	}
	status, b = do("", "GET", got.Data.StampDuty.Document.URL, "", nil, false)
	want(status, b, 200, "the document's download")
	status, b = do(dev, "GET", "/api/live-orders", "", nil, false)
	want(status, b, 200, "the orders")
	status, b = do(dev, "GET", "/api/webhooks", "", nil, false)
	want(status, b, 200, "the webhooks")
	status, b = do(dev, "DELETE", "/api/live-orders/"+createOrderWith(t, s, dev, 1), "", nil, false)
	want(status, b, 204, "a cancel")
	status, b = do(dev, "GET", "/api/nothing-here", "", nil, false)
	want(status, b, 404, "no route")

	// The operator's: the first paper moved to Procured and certified.
	paper := "/api/ops/live-orders/" + doc + "/fulfillments/" + got.Data.Papers[0].DocumentID
	status, b = do("", "PATCH", paper, "application/json", []byte(`{"order_status":"Created","unique_doc_ref":"SUBIN-METRICS-1"}`), true)
	want(status, b, 200, "a move to Created")
	status, b = do("", "PATCH", paper, "application/json", []byte(`{"order_status":"Procured","certificate_number":"IN-KA00000000000001M"}`), true)
	want(status, b, 200, "a move to Procured")
	status, b = do("", "PUT", paper+"/certificate?name=cert.pdf", "application/pdf", pdf, true)
	want(status, b, 200, "a certificate")

	// The staff's console, and a test token's order (which counts nothing).
	staff, err := localcognito.SignIn(ctx, localcognito.Client(s.Cognito.Endpoint), s.Cognito.ClientID, s.Cognito.Staff[0].Email, s.Cognito.Staff[0].Password)
	if err != nil {
		t.Fatal(err)
	}
	status, b = do(staff.ID, "GET", "/api/console/me", "", nil, false)
	want(status, b, 200, "the console's me")
	owner := "metrics-" + time.Now().UTC().Format("150405")
	status, b = do(staff.ID, "POST", "/api/console/callers", "application/json", []byte(`{"owner":"`+owner+`"}`), false)
	want(status, b, 201, "a caller")
	status, b = do(staff.ID, "POST", "/api/console/callers/"+owner+"/tokens", "application/json", []byte(`{"test":true}`), false)
	var issued struct {
		Data struct{ Token string } `json:"data"`
	}
	if err := json.Unmarshal(b, &issued); err != nil || status/100 != 2 || issued.Data.Token == "" {
		t.Fatalf("a test token: %d %s", status, b)
	}
	createOrderWith(t, s, issued.Data.Token, 3)
	status, b = do("", "GET", "/console", "", nil, false)
	want(status, b, 200, "the console's page")

	stop() // every line written
	sums := metricLines(t, out.String())
	for _, fn := range []string{"ListArticlesFunction", "StampDutyQuotesFunction", "CreateOrderFunction", "UploadDocumentFunction",
		"GetOrderFunction", "DownloadFileFunction", "ListOrdersFunction", "WebhooksFunction", "CancelOrderFunction", "NotFoundFunction",
		"OpsFunction", "ConsoleFunction", "ConsoleAdminFunction", "ConsolePagesFunction"} {
		if sums[fn+" Requests"] == 0 || sums[fn+" Faults"] != 0 {
			t.Errorf("%s counted %v requests and %v faults, want some and none", fn, sums[fn+" Requests"], sums[fn+" Faults"])
		}
		// Lambda's own: one invocation per request, no error.
		lambda := fn + " " + runtimeapi.LambdaNamespace + " "
		if sums[lambda+"Invocations"] != sums[fn+" Requests"] || sums[lambda+"Errors"] != 0 {
			t.Errorf("%s: AWS/Lambda Invocations %v, Errors %v; want one invocation per request (%v) and no error",
				fn, sums[lambda+"Invocations"], sums[lambda+"Errors"], sums[fn+" Requests"])
		}
	}
	for key, n := range map[string]float64{
		// The create of 2 papers, the batch's row and the cancelled order;
		// not the refused row, the dry run or the test order of 3.
		"CreateOrderFunction OrdersCreated State=KA":         3,
		"CreateOrderFunction PapersOrdered State=KA":         4,
		"StampDutyQuotesFunction Quotes":                     1,
		"UploadDocumentFunction FilesAttached Kind=document": 1,
		"OpsFunction PapersMoved Status=Created":             1,
		"OpsFunction PapersMoved Status=Procured":            1,
		"OpsFunction FilesAttached Kind=certificate":         1,
	} {
		if sums[key] != n {
			t.Errorf("%s = %v, want %v", key, sums[key], n)
		}
	}
	if t.Failed() {
		t.Logf("the metrics read: %v", sums)
	}
}
