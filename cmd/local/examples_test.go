package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"stampduty/shared/testkit/localdb"
)

// checkExamples runs against s the examples of every document that has
// some (README.md first), but the walk-through's, which runs as one script
// (startWalkthrough).
func checkExamples(t *testing.T, s *stack) {
	type example struct{ doc, want, code string }
	var examples []example
	for _, d := range exampleDocs(t) {
		if d == walkthroughDoc {
			continue
		}
		for _, ex := range readmeExamples(doc(t, d)) {
			examples = append(examples, example{d, ex[0], ex[1]})
		}
	}
	if len(examples) < 8 {
		t.Fatalf("found %d examples with an expectation, want at least 8", len(examples))
	}
	t.Logf("running %d examples of %v", len(examples), exampleDocs(t))
	root := moduleRoot(t)
	env := exampleEnv(s, t.TempDir())
	for _, ex := range examples {
		// As a reader runs them: from the repository's top, with API, DB
		// and WORK set as the README says, to this stack (on ports
		// that are not the defaults) and a folder of the test's. The
		// examples are run as written: nothing in them is replaced.
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", ex.code)
		cmd.Dir, cmd.Env = root, env
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("an example of %s failed: %v\n%s\n%s", ex.doc, err, ex.code, got)
			continue
		}
		if !strings.Contains(string(got), ex.want) {
			t.Errorf("an example of %s answered\n%s\nwant it to contain %s\n(example: %s)", ex.doc, got, ex.want, ex.code)
		}
	}
}

// exampleEnv is the environment the examples run in: this
// process's, with API, DB and WORK set, as the README's API section has a
// reader set them, to the stack s and the folder work.
func exampleEnv(s *stack, work string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "API", "DB", "WORK", "HOOK_ADDR", "DYNAMODB_ENDPOINT", "STAMPDUTY_API_URL":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "API="+s.URL, "DB="+s.Endpoint, "WORK="+work)
}

// checkStrapiClient checks the API as Strapi's official client sees it:
// cmd/local/strapiclient's node --test suite (installed by `make
// strapiclient`, which make test runs) against s, with the dev token.
func checkStrapiClient(t *testing.T, s *stack) {
	dir := filepath.Join(moduleRoot(t), "cmd", "local", "strapiclient")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@strapi", "client", "package.json")); err != nil {
		t.Fatalf("@strapi/client is not installed (run make strapiclient): %v", err)
	}
	cmd := exec.Command("node", "--test", "--test-reporter=spec", "client.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STAMPDUTY_API_URL="+s.URL, "STAMPDUTY_TOKEN="+localdb.DevToken, "NO_COLOR=1")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test client.test.js: %v\n%s", err, got)
	}
	// The spec reporter's summary: every test ran and none failed.
	tests := 0
	if m := regexp.MustCompile(`(?m)^ℹ tests (\d+)$`).FindSubmatch(got); m != nil {
		tests, _ = strconv.Atoi(string(m[1]))
	}
	if tests < 10 || !regexp.MustCompile(`(?m)^ℹ fail 0$`).Match(got) {
		t.Errorf("node --test client.test.js: want at least 10 tests and none failing:\n%s", got)
	}
}
