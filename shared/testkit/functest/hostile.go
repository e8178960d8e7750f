package functest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/samtemplate"
)

// Forged is the log line issue 17's attacker wrote into the log through a
// path (`curl "$BASE/api/live-orders/x%0a%7B%22level%22...%7D%0a"`).
const Forged = `{"level":"INFO","msg":"FORGED"}`

// HostileSegments are path segments as API Gateway hands them to a
// function, percent-decoded: the forged line between newlines, and %00
// %01 %0d %7f.
var HostileSegments = []string{"x\n" + Forged + "\n", "evt_\x00", "x\x01", "x\r", "x\x7f"}

// CheckHostilePaths sends each of the function's routes with each path
// parameter (or the path's end) replaced by each of HostileSegments,
// without and with the dev token (signed on AWS_IAM routes, with a staff
// member's claims on JWT routes). Each must be
// answered strapi's 404 "Not Found" byte for byte, with no Lambda error,
// nothing printed to stdout or the standard log, and only the service's
// JSON log lines, none the forged one. It swaps os.Stdout: not for
// parallel tests.
func CheckHostilePaths(t *testing.T, s *Stack) {
	t.Helper()
	rec := httptest.NewRecorder()
	function.WriteError(rec, httptest.NewRequest(http.MethodGet, "/", nil), stampduty.Errorf(stampduty.ENOTFOUND, "Not Found"))
	want := rec.Body.String()
	routes := s.Function.Routes
	if len(routes) == 0 {
		t.Fatalf("%s has no route in template.yaml", s.Function.LogicalID)
	}
	for _, rt := range routes {
		method, pattern := rt.Method, rt.Path
		if rt.Path == samtemplate.DefaultRoute {
			method, pattern = "GET", "/api/{anything}"
		}
		for _, seg := range HostileSegments {
			path := hostilePath(pattern, seg)
			for _, token := range []bool{false, true} {
				headers := map[string]string{"content-type": "application/json"}
				if token {
					headers = maps.Clone(DevHeaders)
				}
				ev := Request(method, path, "", headers, "")
				ev.RouteKey, ev.RequestContext.RouteKey = rt.Key(), rt.Key()
				if rt.IAM {
					ev = AsOperator(ev, Operator)
				}
				if rt.Authorizer != "" {
					ev = AsStaff(ev, StaffClaims("admin@console.test", "admin"))
				}
				before := len(s.Logs.String())
				var out events.APIGatewayV2HTTPResponse
				var err error
				printed := Printed(t, func() { out, err = s.Lambda(context.Background(), ev) })
				name := rt.Key() + " " + strconv.Quote(path)
				if token {
					name += " with a token"
				}
				if err != nil {
					t.Errorf("%s: the Lambda handler returned %v", name, err)
				}
				if out.StatusCode != http.StatusNotFound || out.Body != want {
					t.Errorf("%s: %d %s, want 404 %s", name, out.StatusCode, out.Body, want)
				}
				if printed != "" {
					t.Errorf("%s: printed %q", name, printed)
				}
				CheckLogLines(t, s.Logs.String()[before:])
			}
		}
	}
}

// hostilePath is pattern with each {name} replaced by seg, or seg appended
// when it has none.
func hostilePath(pattern, seg string) string {
	if !strings.Contains(pattern, "{") {
		return pattern + "/" + seg
	}
	return pathParam.ReplaceAllLiteralString(pattern, seg)
}

var pathParam = regexp.MustCompile(`\{[^/]*\}`)

// CheckLogLines fails unless every line of logs is one of slog's JSON
// objects, none Forged.
func CheckLogLines(t testing.TB, logs string) {
	t.Helper()
	for line := range strings.Lines(logs) {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("log line %q is not one JSON object", line)
			continue
		}
		if entry["msg"] == "FORGED" || strings.TrimSpace(line) == Forged {
			t.Errorf("log line %q is the attacker's", line)
		}
		if _, ok := entry["time"]; !ok {
			t.Errorf("log line %q is not one of slog's", line)
		}
	}
}

// Printed runs f and returns what it wrote to standard output and through
// the standard log, which Lambda would turn into log lines besides the
// service's. It swaps os.Stdout and log's output: not for parallel tests.
func Printed(t testing.TB, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	stdout, logOut := os.Stdout, log.Writer()
	os.Stdout = w
	log.SetOutput(&logged)
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	func() {
		defer func() { os.Stdout = stdout; log.SetOutput(logOut) }()
		f()
	}()
	w.Close()
	out := <-done
	r.Close()
	return string(out) + logged.String()
}
