package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoOpenAPIValidator: make bench compiles cmd/bench before it measures
// anything, on a fresh machine for minutes, so it links no package it does
// not use. The OpenAPI validator (through functest) alone was five times
// the rest of its build: 317 of 366 s of CPU with an empty Go cache.
func TestLinksNoOpenAPIValidator(t *testing.T) {
	for _, pkg := range deps(t, ".") {
		// The validator's modules, and the project's test kit and OpenAPI
		// package wherever they live.
		last := pkg[strings.LastIndex(pkg, "/")+1:]
		if validator(pkg) || strings.HasPrefix(pkg, "stampduty/") && last == "functest" {
			t.Errorf("cmd/bench links %s", pkg)
		}
	}
}

// TestGoBenchmarksLinkNoOpenAPIValidator: section 3 compiles the test
// binaries of goBenchmarks' packages, whose tests check every answer against
// openapi.yaml; built with the benchmarks tag, as runGoBenchmarks builds
// them, they leave the validator out.
func TestGoBenchmarksLinkNoOpenAPIValidator(t *testing.T) {
	args := []string{"-tags", "benchmarks", "-test"}
	for _, g := range goBenchmarks {
		args = append(args, g.Pkg)
	}
	for _, pkg := range deps(t, args...) {
		if validator(pkg) {
			t.Errorf("section 3's go test -bench links %s", pkg)
		}
	}
}

// deps returns go list -deps of args, run in the module root.
func deps(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, args...)...)
	if args[len(args)-1] != "." {
		cmd.Dir = "../.."
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", args, err, out)
	}
	return strings.Fields(string(out))
}

// validator reports whether pkg is the OpenAPI validator: pb33f's modules or
// the project's openapi package.
func validator(pkg string) bool {
	return strings.HasPrefix(pkg, "github.com/pb33f/") || strings.HasPrefix(pkg, "stampduty/") && strings.HasSuffix(pkg, "/openapi")
}
