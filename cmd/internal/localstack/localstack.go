// Package localstack is what the local stack (cmd/local) and the benchmark
// (cmd/bench) share: building a function with its own Makefile target,
// creating the template's buckets, and describing a function to the local
// Lambda runtime with the environment template.yaml gives it, tables named
// by their logical ids as `sam local` names them.
package localstack

import (
	"cmp"
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
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/samtemplate"
)

// Build builds a function's bootstrap with its own Makefile target (the one
// `sam build` runs) into dir/<logicalID>/bootstrap and returns its path: the
// release build for linux/arm64 forLambda, else the same for this machine.
// When ctx ends the build is killed, and what it wrote, go build's work
// folder included, is all in dir.
func Build(ctx context.Context, root, dir, logicalID string, forLambda bool) (string, error) {
	out := filepath.Join(dir, logicalID)
	// go build, killed, leaves its work folder in GOTMPDIR: within dir.
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
	cmd.Dir, cmd.Env = root, append(os.Environ(), "GOTMPDIR="+work)
	// make and its go build are a process group, killed together: killing
	// make alone would leave go build writing into a folder being removed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", logicalID, err, b)
	}
	return filepath.Join(out, "bootstrap"), nil
}

// Engines are the addresses of the local DynamoDB and S3 a function uses,
// and its tables' names by logical id when they are not the logical ids.
type Engines struct {
	DynamoDB, S3 string
	Tables       map[string]string
	// Cognito is the local Cognito's endpoint ("" without one), and Names
	// the local ids of the other resources a setting may name (the staff
	// pool's app client).
	Cognito string
	Names   map[string]string
}

// BucketName is the local name of the bucket with the given logical id:
// the id in lower case, as bucket names must be.
func BucketName(logicalID string) string { return strings.ToLower(logicalID) }

// Buckets creates the template's buckets, named by BucketName, in the S3
// server at endpoint.
func Buckets(ctx context.Context, endpoint string, tmpl *samtemplate.Template) error {
	client := locals3.Client(endpoint, localdb.AccessKeyID, localdb.SecretAccessKey, localdb.Region)
	for _, b := range tmpl.Buckets {
		if err := locals3.CreateBucket(ctx, client, BucketName(b)); err != nil {
			return fmt.Errorf("S3 at %s: %w", endpoint, err)
		}
	}
	return nil
}

// Env is a function's environment locally: the template's variables,
// resolved with tables named by their logical ids (or eng.Tables) and buckets by
// BucketName, completed as a local Lambda runtime completes them
// (localdb.LocalRuntime), plus the region and local credentials the Lambda
// service would set.
func Env(tmpl *samtemplate.Template, f samtemplate.Function, eng Engines) ([]string, error) {
	names, vars := map[string]string{}, map[string]string{}
	for _, t := range tmpl.Tables {
		names[t.LogicalID] = cmp.Or(eng.Tables[t.LogicalID], t.LogicalID)
	}
	for _, b := range tmpl.Buckets {
		names[b] = BucketName(b)
	}
	// An app client or a user pool is named by its logical id, as sam local names a
	// resource it cannot create, unless the stack's Cognito made it.
	for _, c := range tmpl.UserPoolClients {
		names[c.LogicalID] = c.LogicalID
	}
	for _, p := range tmpl.UserPools {
		names[p.LogicalID] = p.LogicalID
	}
	maps.Copy(names, eng.Names)
	for name, v := range f.Env {
		val, err := tmpl.Resolve(v, localdb.Params(), names)
		if err != nil {
			return nil, fmt.Errorf("%s env %s: %w", f.LogicalID, name, err)
		}
		vars[name] = val
	}
	localdb.LocalRuntime(vars, eng.DynamoDB, eng.S3, eng.Cognito)
	env := []string{"AWS_REGION=" + localdb.Region, "AWS_DEFAULT_REGION=" + localdb.Region,
		"AWS_ACCESS_KEY_ID=" + localdb.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + localdb.SecretAccessKey}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, name+"="+vars[name])
	}
	return env, nil
}

// Function describes f, built at path, to the local Lambda runtime: its
// environment (Env), timeout and memory from the template, its log lines to log.
func Function(tmpl *samtemplate.Template, f samtemplate.Function, path string, eng Engines, log io.Writer) (runtimeapi.Function, error) {
	env, err := Env(tmpl, f, eng)
	return runtimeapi.Function{Name: f.LogicalID, Path: path, Env: env, Timeout: time.Duration(f.Timeout) * time.Second,
		MemoryMB: f.MemorySize, Log: log}, err
}
