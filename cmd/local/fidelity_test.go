package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/cmd/internal/apigw"
	"stampduty/cmd/internal/localmetrics"
	"stampduty/shared/metrics"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localdb"
)

// checkFidelity: where issue 33 found the local stack unlike AWS, it is
// like AWS now. Its output holds no query value or Authorization header
// of any request; a client that hangs up while its create runs is logged
// with the function's status and counted in neither API Gateway's 5xx nor
// the function's Faults; and the stack's Cognito refuses SignUp to the
// staff pool as Cognito does.
func checkFidelity(t *testing.T, s *stack, out *functest.SyncBuffer) {
	t.Run("QueryValuesNotLogged", func(t *testing.T) { checkQueryNotLogged(t, s, out) })
	t.Run("ClientHangsUp", func(t *testing.T) { checkClientHangsUp(t, s, out) })
	t.Run("SignUpRefused", func(t *testing.T) {
		localcognito.WantSignUpRefused(t, s.Cognito.Endpoint, s.Cognito.PoolID, s.Cognito.ClientID)
	})
}

// checkQueryNotLogged sends issue 33's request, a token, a PAN and a
// mobile number in the query, to routes of every kind (answered, refused
// by the function, by AWS_IAM, by the JWT authorizer, by no route) with
// a bearer token, and finds none of them in the stack's output, where
// each request's access line names its route and status.
func checkQueryNotLogged(t *testing.T, s *stack, out *functest.SyncBuffer) {
	const (
		token  = "sdt_QUERYxTOKENxSENTxINxTHExQUERYxSTRINGx0000"
		pan    = "QWERT9876Z"
		mobile = "9123456780"
		bearer = "sdt_NOTxAxVALIDxBEARERxTOKENxFORxTHISxTEST00"
	)
	query := "?access_token=" + token + "&pan=" + pan + "&mobile=" + mobile
	from := len(out.String())
	sent := map[string]string{} // the access line's start, by request id
	for _, r := range []struct {
		path, auth, want string
	}{
		{"/api/live-orders", localdb.DevToken, "GET /api/live-orders 200 "},
		{"/api/live-orders", bearer, "GET /api/live-orders 401 "},
		{"/api/stamp-duty-datas", "", "GET /api/stamp-duty-datas 200 "},
		{"/api/ops/live-orders", localdb.DevToken, "GET /api/ops/live-orders 403 "},
		{"/api/console/me", bearer, "GET /api/console/me 401 "},
		{"/api/files/" + token, "", "GET /api/files/{token} "},
		{"/api/" + mobile, localdb.DevToken, "$default 404 "},
	} {
		req, err := http.NewRequest("GET", s.URL+r.path+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.auth != "" {
			req.Header.Set("Authorization", "Bearer "+r.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sent[resp.Header.Get("Apigw-Requestid")] = r.want
	}
	time.Sleep(200 * time.Millisecond) // the access lines and the functions' last lines
	logged := out.String()[from:]
	var missing, held []string
	for id, want := range sent {
		found := false
		for line := range strings.Lines(logged) {
			found = found || strings.HasPrefix(line, want) && strings.Contains(line, " "+id)
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%q… %s", want, id))
		}
	}
	for _, secret := range []string{token, pan, mobile, bearer, localdb.DevToken, "access_token"} {
		if strings.Contains(logged, secret) {
			held = append(held, secret)
		}
	}
	if len(missing) > 0 || len(held) > 0 {
		t.Errorf("the stack's output lacks the access lines %v and holds %q:\n%s", missing, held, logged)
	}
}

// checkClientHangsUp creates an order of 20 papers and hangs up a few
// milliseconds after the request is sent, while the function runs (again
// with another pause when the answer came first): its access line is the
// function's 200 with client=closed and no error, and neither API
// Gateway's 5xx nor CreateOrderFunction's Faults grows.
func checkClientHangsUp(t *testing.T, s *stack, out *functest.SyncBuffer) {
	const order = `{"amount":20,"considerationPrice":0,"purpose":"Affidavit","state":"Karnataka","paidBy":"First Party",` +
		`"firstPartyMobileNumber":"9876543210","firstPartyName":"Hangup Party","secondPartyName":"B","quantity":20}`
	sums := func() (api5xx, faults float64) {
		rows := summary(t, s)
		return rows[apigw.ApiNamespace+" 5xx ApiId=Api"].Sum, rows["StampDuty/"+localdb.StackName+" "+string(metrics.Faults)+" FunctionName=CreateOrderFunction"].Sum
	}
	api5xx, faults := sums()
	hungUp := false
	for attempt, wait := range []time.Duration{3, 1, 5, 0, 8, 2} {
		from := len(out.String())
		ctx, cancel := context.WithCancel(t.Context())
		body := &sentReader{r: strings.NewReader(order), sent: make(chan struct{})}
		req, err := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/live-orders", body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(len(order))
		req.Header.Set("Authorization", "Bearer "+localdb.DevToken)
		req.Header.Set("Content-Type", "application/json")
		done := make(chan error, 1)
		answer := make(chan string, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answer <- resp.Status + " " + string(b)
			}
			done <- err
		}()
		select { // the whole request is on its way: the gateway has it at once
		case <-body.sent:
		case <-time.After(10 * time.Second):
			t.Fatal("the request was not sent within 10 s")
		}
		time.Sleep(wait * time.Millisecond)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Logf("attempt %d: the answer came before the hang-up: %s", attempt+1, <-answer)
			continue
		}
		hungUp = true
		var line string
		for deadline := time.Now().Add(10 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			for l := range strings.Lines(out.String()[from:]) {
				// Another create may log beside it (the walk-through's).
				if strings.HasPrefix(l, "POST /api/live-orders ") && (line == "" || strings.Contains(l, " client=closed")) {
					line = l
				}
			}
		}
		if !strings.HasPrefix(line, "POST /api/live-orders 200 ") || !strings.Contains(line, " client=closed") || strings.Contains(line, "error=") {
			t.Errorf("access line %q of the hang-up, want the create's 200 with client=closed and no error:\n%s", line, out.String()[from:])
		}
		break
	}
	if !hungUp {
		t.Fatal("every answer came before the hang-up")
	}
	time.Sleep(200 * time.Millisecond) // the function's metric line
	if a, f := sums(); a != api5xx || f != faults {
		t.Errorf("after the hang-up API Gateway's 5xx went %v → %v and CreateOrderFunction's Faults %v → %v; want neither to grow", api5xx, a, faults, f)
	}
}

// summary reads the stack's metrics of the last hour by "namespace
// metric dimensions".
func summary(t *testing.T, s *stack) map[string]localmetrics.Row {
	t.Helper()
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
	}
	return rows
}

// sentReader is a request body that says when the client has read all
// of it to send.
type sentReader struct {
	r    io.Reader
	sent chan struct{}
	once sync.Once
}

func (b *sentReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.once.Do(func() { close(b.sent) })
	}
	return n, err
}
