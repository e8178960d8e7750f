package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/testkit/samtemplate"
)

// TestGeneratedFilesAreCurrent runs the generator into memory and compares
// what it writes with the files of the module: a change of template.yaml
// or events/ without `go generate ./...` (make generate) fails here.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root, files, err := generateHere()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./...)", name, err)
			continue
		}
		if !bytes.Equal(got, files[name]) {
			t.Errorf("%s is not what template.yaml and events/ make of it: run go generate ./... (make generate)\n got:\n%s\nwant:\n%s", name, got, files[name])
		}
	}
}

func TestFunctionDir(t *testing.T) {
	for id, want := range map[string]string{
		"CreateOrderFunction":     "create-order",
		"OpsFunction":             "ops",
		"StampDutyQuotesFunction": "stamp-duty-quotes",
		"Ping":                    "ping",
	} {
		if got := functionDir(id); got != want {
			t.Errorf("functionDir(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestGenerateFailsOnAStrayFunction: a function of the template without its
// directory, or a directory of functions/ without its function, is an error,
// not a build target that builds nothing.
func TestGenerateFailsOnAStrayFunction(t *testing.T) {
	root, err := samtemplate.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	tmpl, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("template.yaml", string(tmpl))
	// The module's events: a route whose path parameters the bench cannot
	// fill needs its own.
	events, err := filepath.Glob(filepath.Join(root, "events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		text, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join("events", filepath.Base(e)), string(text))
	}
	dirs, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		write(filepath.Join("functions", filepath.Base(filepath.Dir(d)), "main.go"), "package main\n")
	}
	if _, err := generate(tmp); err != nil {
		t.Fatalf("the module's functions: %v", err)
	}
	write("functions/stray/main.go", "package main\n")
	if _, err := generate(tmp); err == nil || !strings.Contains(err.Error(), "functions/stray is no function") {
		t.Errorf("a directory without a function: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(tmp, "functions", "stray")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(tmp, "functions", "create-order")); err != nil {
		t.Fatal(err)
	}
	if _, err := generate(tmp); err == nil || !strings.Contains(err.Error(), "has no functions/create-order/main.go") {
		t.Errorf("a function without a directory: %v", err)
	}
}
