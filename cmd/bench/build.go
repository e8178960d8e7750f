package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"stampduty/cmd/internal/localstack"
)

// helloID is the name the hello-world Lambda goes by in the report.
const helloID = "HelloWorld"

// helloPkg is the hello-world Lambda: aws-lambda-go and
// aws-lambda-go-api-proxy with one handler, the floor every function is
// compared with.
const helloPkg = "./cmd/bench/testdata/hello"

// platform is what a build targets.
type platform int

const (
	// host is this machine, as the local stack builds for it.
	host platform = iota
	// lambdaARM64 is provided.al2023 on arm64, as SAM builds for it.
	lambdaARM64
)

// buildHello builds the hello-world Lambda into dir/HelloWorld/bootstrap with
// the release flags of the Makefile (CGO_ENABLED=0, -tags lambda.norpc
// -trimpath -ldflags "-s -w") and returns its path.
func buildHello(ctx context.Context, root, dir string, p platform) (string, error) {
	out := filepath.Join(dir, helloID, "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", out, helloPkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if p == lambdaARM64 {
		cmd.Env = append(cmd.Env, "GOOS=linux", "GOARCH=arm64")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", helloID, err, b)
	}
	return out, nil
}

// buildAll builds every function of ids and the hello-world Lambda for p
// into dir and returns their paths by logical id (HelloWorld for hello).
func buildAll(ctx context.Context, root, dir string, ids []string, p platform) (map[string]string, error) {
	bins := map[string]string{}
	for _, id := range ids {
		path, err := localstack.Build(ctx, root, dir, id, p == lambdaARM64)
		if err != nil {
			return nil, err
		}
		bins[id] = path
	}
	path, err := buildHello(ctx, root, dir, p)
	if err != nil {
		return nil, err
	}
	bins[helloID] = path
	return bins, nil
}
