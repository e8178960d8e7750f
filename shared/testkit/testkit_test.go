package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// tooling reports whether pkg is tooling that no Lambda function may link,
// and why.
func tooling(pkg string) (string, bool) {
	switch {
	case pkg == "stampduty/shared/testkit" || strings.HasPrefix(pkg, "stampduty/shared/testkit/"):
		return "the test kit", true
	case strings.HasPrefix(pkg, "stampduty/cmd/"):
		return "a tool of cmd/", true
	case pkg == "stampduty/shared/apidoc":
		return "the API's documents (apidoc embeds openapi.yaml)", true
	case strings.HasPrefix(pkg, "github.com/golang-jwt/") || strings.HasPrefix(pkg, "github.com/MicahParks/"):
		return "a JWT library (API Gateway's JWT authorizer checks the staff's tokens, not a function)", true
	case strings.HasPrefix(pkg, "github.com/pb33f/"):
		return "the OpenAPI validator", true
	case strings.HasPrefix(pkg, "github.com/chromedp/"):
		return "the browser driver of the browser tests", true
	case strings.Contains(pkg, "yaml"):
		return "a YAML library", true
	case pkg == "testing" || strings.HasPrefix(pkg, "testing/") || pkg == "net/http/httptest":
		return "a testing package of the standard library", true
	}
	return "", false
}

// confined are libraries a function may link only through one package of
// ours, and only the functions named may link that package.
var confined = []struct {
	prefix, via string
	functions   []string
	why         string
}{{
	prefix:    "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider",
	via:       "stampduty/shared/staff",
	functions: []string{"stampduty/functions/console-admin"},
	why: "Cognito's admin API: only the staff workflows (shared/staff) call it, " +
		"and only the console's admin function, whose role is granted them, runs them",
}}

// confinedImport returns why p may not import q (a confined library
// imported other than through its package), or "".
func confinedImport(p, q string) string {
	for _, c := range confined {
		if strings.HasPrefix(q, c.prefix) && !strings.HasPrefix(p, c.prefix) && p != c.via {
			return fmt.Sprintf("imports %s: only %s may (%s)", q, c.via, c.why)
		}
	}
	return ""
}

// TestNotLinkedIntoFunctions keeps tooling out of the Lambda binaries: no
// package a function links, as the Makefile builds it (linux/arm64, no
// cgo, -tags lambda.norpc), may be one tooling reports. A failure names
// the function and the chain of imports that reaches the package. A
// confined library is linked only through its package, by the functions
// named.
func TestNotLinkedIntoFunctions(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc",
		"-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./functions/...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./functions/...: %v", err)
	}
	imports := map[string][]string{}
	var functions []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		imports[fields[0]] = fields[1:]
		if strings.HasPrefix(fields[0], "stampduty/functions/") {
			functions = append(functions, fields[0])
		}
	}
	if len(functions) < 10 || len(imports) < 100 {
		t.Fatalf("go list -deps ./functions/... listed %d functions and %d packages", len(functions), len(imports))
	}
	slices.Sort(functions)
	for _, fn := range functions {
		// Breadth first from the function: via[p] is the package that
		// first imported p, so the chain to each package is its shortest.
		via := map[string]string{fn: ""}
		queue := []string{fn}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if why, ok := tooling(p); ok {
				chain := []string{p}
				for q := via[p]; q != ""; q = via[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				t.Errorf("%s links %s, %s: %s", strings.TrimPrefix(fn, "stampduty/"), p, why, strings.Join(chain, " → "))
				continue
			}
			for _, c := range confined {
				if p == c.via && !slices.Contains(c.functions, fn) {
					t.Errorf("%s links %s: only %s may (%s)", strings.TrimPrefix(fn, "stampduty/"), p, strings.Join(c.functions, ", "), c.why)
				}
			}
			for _, q := range imports[p] {
				if why := confinedImport(p, q); why != "" {
					t.Errorf("%s links %s, which %s", strings.TrimPrefix(fn, "stampduty/"), p, why)
				}
				if _, seen := via[q]; !seen {
					via[q] = p
					queue = append(queue, q)
				}
			}
		}
		if _, ok := via["stampduty/shared/function"]; !ok {
			t.Errorf("%s does not link stampduty/shared/function: the import graph is not what go list gave", fn)
		}
	}
}

// TestCognitoOnlyThroughStaff: no package of the product (shared/, not the
// test kit) imports a confined library other than through its package,
// whether or not a function links it yet.
func TestCognitoOnlyThroughStaff(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./shared/...")
	cmd.Dir = "../.."
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./shared/...: %v", err)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		n++
		if _, ok := tooling(fields[0]); ok {
			continue
		}
		for _, q := range fields[1:] {
			if why := confinedImport(fields[0], q); why != "" {
				t.Errorf("%s %s", fields[0], why)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list ./shared/... listed %d packages", n)
	}
}
