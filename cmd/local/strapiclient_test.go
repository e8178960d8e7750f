package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/localserver"
)

// checkStrapiClient checks the API as Strapi's official client sees it:
// cmd/local/strapiclient's node --test suite (installed by `make
// strapiclient`, which make test runs) against s, with the dev token.
func checkStrapiClient(t *testing.T, s *stack) {
	dir := filepath.Join(moduleRoot(t), "cmd", "local", "strapiclient")
	_, err := localserver.Find(moduleRoot(t), "cmd/local/strapiclient/node_modules/@strapi/client/package.json", "@strapi/client", "strapiclient")
	localserver.Require(t, err) // skipped without it, but in CI
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
