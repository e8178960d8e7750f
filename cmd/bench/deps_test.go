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
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// The validator's modules, and the project's test kit and OpenAPI
		// package wherever they live.
		last := pkg[strings.LastIndex(pkg, "/")+1:]
		if strings.HasPrefix(pkg, "github.com/pb33f/") || strings.HasPrefix(pkg, "stampduty/") && (last == "functest" || last == "openapi") {
			t.Errorf("cmd/bench links %s", pkg)
		}
	}
}
