// Package localstack is what the local stack (cmd/local) and the benchmark
// (cmd/bench) share: building a function with its own Makefile target, and
// describing a function to the local Lambda runtime with the environment
// template.yaml gives it, tables named by their logical ids as `sam local`
// names them. (Seeding is localdb.Seed, which the tests use too.)
package localstack

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
)

// Build builds a function's bootstrap with its own Makefile target (the one
// `sam build` runs) into dir/<logicalID>/bootstrap and returns its path. For
// Lambda it is the release build for linux/arm64; otherwise the same build
// for this machine (only the target platform is overridden). When ctx ends,
// the build is killed, and what it wrote is all in dir, even go build's
// work folder.
func Build(ctx context.Context, root, dir, logicalID string, forLambda bool) (string, error) {
	out := filepath.Join(dir, logicalID)
	// go build has no interrupt handler: killed, it leaves its work folder
	// in GOTMPDIR (else TMPDIR), which is therefore within dir.
	work := filepath.Join(dir, logicalID+".gotmp")
	if err := os.MkdirAll(work, 0o700); err != nil {
		return "", fmt.Errorf("build %s: %w", logicalID, err)
	}
	defer os.RemoveAll(work)
	args := []string{"--no-print-directory", "-s", "build-" + logicalID, "ARTIFACTS_DIR=" + out}
	if !forLambda {
		args = append(args, "LAMBDA_ENV=CGO_ENABLED=0")
	}
	cmd := exec.CommandContext(ctx, "make", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOTMPDIR="+work)
	// make and the go build it runs are a process group of their own, ended
	// together when ctx ends: killing make alone would leave go build
	// running, writing into a folder its caller is removing.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", logicalID, err, b)
	}
	return filepath.Join(out, "bootstrap"), nil
}

// Engines are the addresses of the local DynamoDB and S3 a function uses.
type Engines struct{ DynamoDB, S3 string }

// BucketName is the local name of the bucket with the given logical id:
// the id in lower case, as bucket names must be.
func BucketName(logicalID string) string { return strings.ToLower(logicalID) }

// Env is a function's environment locally: the template's variables,
// resolved with tables named by their logical ids and buckets by
// BucketName, completed as a local Lambda runtime completes them
// (localdb.LocalRuntime: the local signal, the engines), plus the region
// and (local) credentials the Lambda service would set.
func Env(tmpl *samtemplate.Template, f samtemplate.Function, eng Engines) ([]string, error) {
	env := []string{
		"AWS_REGION=" + localdb.Region, "AWS_DEFAULT_REGION=" + localdb.Region,
		"AWS_ACCESS_KEY_ID=" + localdb.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + localdb.SecretAccessKey,
	}
	vars := map[string]string{}
	names := map[string]string{}
	for _, t := range tmpl.Tables {
		names[t.LogicalID] = t.LogicalID
	}
	for _, b := range tmpl.Buckets {
		names[b] = BucketName(b)
	}
	for name, v := range f.Env {
		val, err := tmpl.Resolve(v, localdb.Params(), names)
		if err != nil {
			return nil, fmt.Errorf("%s env %s: %w", f.LogicalID, name, err)
		}
		vars[name] = val
	}
	localdb.LocalRuntime(vars, eng.DynamoDB, eng.S3)
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, name+"="+vars[name])
	}
	return env, nil
}

// Function describes f, built at path, to the local Lambda runtime: its
// environment (Env), timeout and memory from the template, its log lines to log.
func Function(tmpl *samtemplate.Template, f samtemplate.Function, path string, eng Engines, log io.Writer) (runtimeapi.Function, error) {
	env, err := Env(tmpl, f, eng)
	if err != nil {
		return runtimeapi.Function{}, err
	}
	return runtimeapi.Function{Name: f.LogicalID, Path: path, Env: env, Timeout: time.Duration(f.Timeout) * time.Second,
		MemoryMB: f.MemorySize, Log: log}, nil
}
