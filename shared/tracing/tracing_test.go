package tracing_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/tracing"
)

// xrayPackage is the tracing build's subsegment writer.
const xrayPackage = "stampduty/shared/tracing/xray"

// tracingPackage reports whether pkg is tracing code: package xray, the
// X-Ray SDK, OpenTelemetry, or what the X-Ray SDK brings with it (gRPC,
// fasthttp, the AWS SDK v1).
func tracingPackage(pkg string) bool {
	for _, p := range []string{xrayPackage, "github.com/aws/aws-xray-sdk-go", "go.opentelemetry.io/", "google.golang.org/grpc",
		"github.com/valyala/fasthttp", "github.com/aws/aws-sdk-go/"} {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return false
}

// functionDeps returns each function's packages as the Makefile builds it
// (linux/arm64, no cgo), with the build tags given.
func functionDeps(t *testing.T, tags string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", tags, "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./functions/...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -tags %s ./functions/...: %v", tags, err)
	}
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) > 0 {
			deps[strings.TrimPrefix(f[0], "stampduty/")] = f[1:]
		}
	}
	if len(deps) < 10 {
		t.Fatalf("go list ./functions/... listed %d functions", len(deps))
	}
	return deps
}

// TestBuilds: a function built as `make build` builds it by default
// (-tags lambda.norpc) links no tracing package at all, only this package's
// no-op; built with TRACING=on (-tags lambda.norpc,tracing) every function
// links package xray through this package.
func TestBuilds(t *testing.T) {
	t.Run("OffLinksNoTracing", func(t *testing.T) {
		for fn, deps := range functionDeps(t, "lambda.norpc") {
			if i := slices.IndexFunc(deps, tracingPackage); i >= 0 {
				t.Errorf("%s built without tracing links %s", fn, deps[i])
			}
		}
	})
	t.Run("OnLinksXRay", func(t *testing.T) {
		for fn, deps := range functionDeps(t, "lambda.norpc,tracing") {
			if !slices.Contains(deps, xrayPackage) {
				t.Errorf("%s built with tracing does not link %s", fn, xrayPackage)
			}
		}
	})
}

// TestTracingBuild runs this package's tests of the tracing build
// (xray_test.go, -tags tracing) from the default one, so that `go test`
// and make test run them: they need dynalite and the local S3 server.
func TestTracingBuild(t *testing.T) {
	if tracing.Enabled {
		t.Skip("this is the tracing build: its tests run here")
	}
	if testing.Short() {
		t.Skip("-short: builds the package again with -tags tracing")
	}
	cmd := exec.Command("go", "test", "-tags", "tracing", "-count=1", "-run", "^TestTraced", "-v", ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -tags tracing: %v\n%s", err, out)
	}
	for _, name := range []string{"TestTracedCalls"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("go test -tags tracing did not pass %s:\n%s", name, out)
		}
	}
}
