package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"stampduty/shared/testkit/samtemplate"
)

// readme returns README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readmeExamples returns the shell examples of text that say what they
// expect: each ```sh block whose first line is "# expect: <text>".
func readmeExamples(text string) [][2]string {
	var examples [][2]string
	for _, block := range strings.Split(text, "```sh\n")[1:] {
		code, _, _ := strings.Cut(block, "```")
		first, rest, _ := strings.Cut(code, "\n")
		if want, ok := strings.CutPrefix(first, "# expect: "); ok {
			examples = append(examples, [2]string{want, rest})
		}
	}
	return examples
}

// TestReadmeDocumentsEveryRoute checks step 7 of the README's "Adding an
// endpoint": each route of template.yaml has a "### METHOD /path" heading
// in the README's API section, with an example under it that says
// "# expect:" (which TestLocalStack/ReadmeExamples runs).
func TestReadmeDocumentsEveryRoute(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join(moduleRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, api, _ := strings.Cut(readme(t), "\n## API\n")
	api, _, _ = strings.Cut(api, "\n## ")
	sections := map[string]string{} // by "METHOD /path"
	for _, section := range strings.Split(api, "\n### ")[1:] {
		heading, body, _ := strings.Cut(section, "\n")
		switch f := strings.Fields(heading); {
		case len(f) >= 1 && f[0] == samtemplate.DefaultRoute:
			sections[f[0]] = body
		case len(f) >= 2:
			sections[f[0]+" "+f[1]] = body
		}
	}
	for _, f := range tmpl.Functions {
		for _, r := range f.Routes {
			route := r.Key()
			body, ok := sections[route]
			switch {
			case !ok:
				t.Errorf("README's API section has no heading ### %s (route of %s)", route, f.LogicalID)
			case len(readmeExamples(body)) == 0:
				t.Errorf("README's ### %s has no example that says # expect:", route)
			}
		}
	}
}

// readmeShellBlocks returns the code of the README's ```sh blocks that a
// reader runs against `make local`: all but the deploy recipe and the
// `sam local` section's, which are about AWS and Docker.
func readmeShellBlocks(text string) []string {
	deploy := strings.Index(text, "\n## Deploy with SAM\n")
	tables := strings.Index(text, "\n## Table design\n")
	var blocks []string
	at := 0
	for _, block := range strings.Split(text, "```sh\n")[1:] {
		at = strings.Index(text[at:], "```sh\n"+block) + at + 1
		if deploy >= 0 && tables > deploy && at > deploy && at < tables {
			continue
		}
		code, _, _ := strings.Cut(block, "```")
		blocks = append(blocks, code)
	}
	return blocks
}

// TestReadmeExamplesUseVariables: no example is tied to one machine. The
// API is $API, the local DynamoDB $DB and files go under $WORK (set once,
// in the README's API section): a stack moved to other ports, or a reader
// without /tmp, runs them unchanged (TestLocalStack runs them on ports
// that are not the defaults).
func TestReadmeExamplesUseVariables(t *testing.T) {
	text := readme(t)
	blocks := readmeShellBlocks(text)
	if len(blocks) < 20 {
		t.Fatalf("found %d shell blocks in the README, want at least 20", len(blocks))
	}
	defaults := regexp.MustCompile(`\$\{[A-Z_]+:-[^}]*\}`) // ${API:-http://127.0.0.1:3000}
	for _, code := range blocks {
		if strings.HasPrefix(code, "make local ") {
			continue // Set up's first block names the defaults it starts
		}
		rest := defaults.ReplaceAllString(code, "")
		for _, fixed := range []string{"127.0.0.1:3000", "127.0.0.1:8000", "127.0.0.1:9000", "localhost:", "/tmp/", "127.0.0.1:4567"} {
			if strings.Contains(rest, fixed) {
				t.Errorf("a README example uses %s other than as a variable's default; use $API, $DB, $WORK (or $HOOK_ADDR):\n%s", fixed, code)
			}
		}
	}
	// The API section sets the variables once, each with its default.
	_, api, _ := strings.Cut(text, "\n## API\n")
	intro, _, _ := strings.Cut(api, "\n### ")
	for _, want := range []string{"API=${API:-http://127.0.0.1:3000}", "DB=${DB:-http://127.0.0.1:8000}", "WORK=${WORK:-$(mktemp -d)}"} {
		if !strings.Contains(intro, want) {
			t.Errorf("the README's API section does not set %s", want)
		}
	}
}

// TestReadmeSecondStack: the README's sample message for a taken address is
// the one the stack prints when all three of its addresses are taken, and
// its recipe for a second stack moves every one of the three.
func TestReadmeSecondStack(t *testing.T) {
	text := readme(t)
	_, after, ok := strings.Cut(text, "If an address is taken")
	if !ok {
		t.Fatal(`the README has no "If an address is taken"`)
	}
	_, sample, _ := strings.Cut(after, "```text\n")
	sample, _, _ = strings.Cut(sample, "```")

	defaults, err := localAddrs(vars{}.getenv)
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{apiAddr: defaults.api, dbAddr: defaults.db, s3Addr: defaults.s3}
	want := "local: " + s.inUse(s.apiBusy(), s.dbBusy(), s.s3Busy()).Error() + "\n"
	if sample != want {
		t.Errorf("the README's sample message is\n%s\nthe stack prints\n%s", sample, want)
	}

	// "`VAR=value … make local` then runs a second stack beside the first"
	m := regexp.MustCompile("`((?:[A-Z_]+=\\S+ )+)make local`\\s+then runs a second stack").FindStringSubmatch(after)
	if m == nil {
		t.Fatal("the README has no recipe `VAR=value make local` for a second stack")
	}
	env := vars{}
	for _, kv := range strings.Fields(m[1]) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	second, err := localAddrs(env.getenv)
	if err != nil {
		t.Fatalf("the recipe %q: %v", m[1], err)
	}
	for _, pair := range [][2]string{{defaults.api, second.api}, {defaults.db, second.db}, {defaults.s3, second.s3}} {
		if pair[0] == pair[1] {
			t.Errorf("the recipe %q leaves %s where the first stack listens", m[1], pair[0])
		}
	}
}
