package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readme returns README.md.
func readme(t *testing.T) string {
	t.Helper()
	return doc(t, "README.md")
}

// doc returns the document at path, relative to the module root.
func doc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// walkthroughDoc is the webhooks walk-through, which
// TestLocalStack/WebhooksWalkthrough runs as one script (its blocks share a
// shell), apart from the other examples.
const walkthroughDoc = "cmd/webhook-receiver/README.md"

// exampleDocs returns the Markdown documents of the module (paths relative
// to its root, README.md first, then in lexical order) that hold an
// example: a ```sh block whose first line is "# expect: …". They are found,
// not listed, so an example runs wherever it is written.
func exampleDocs(t *testing.T) []string {
	t.Helper()
	root := moduleRoot(t)
	var docs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".build", ".git", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(readmeExamples(string(b))) > 0 {
			rel, _ := filepath.Rel(root, path)
			docs = append(docs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(docs, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "README.md":
			return -1
		case b == "README.md":
			return 1
		}
		return strings.Compare(a, b)
	})
	return docs
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

// TestExampleDocs: the examples are found where they are written: the
// README's, the route-by-route API's and the webhooks walk-through's, and
// no document of tooling (node_modules) or test data.
func TestExampleDocs(t *testing.T) {
	docs := exampleDocs(t)
	for _, want := range []string{"README.md", "shared/apidoc/api.md", walkthroughDoc} {
		if !slices.Contains(docs, want) {
			t.Errorf("%s holds no example that says # expect: (found %v)", want, docs)
		}
	}
	if docs[0] != "README.md" {
		t.Errorf("the README's examples do not run first: %v", docs)
	}
	for _, d := range docs {
		if strings.Contains(d, "node_modules") || strings.Contains(d, "testdata") {
			t.Errorf("examples found in %s", d)
		}
	}
}

// shellBlocks returns the code of the ```sh blocks of text that a reader
// runs against `make local`: all but the README's deploy recipe and its
// `sam local` section's, which are about AWS and Docker.
func shellBlocks(text string) []string {
	deploy := strings.Index(text, "\n## Deploy with SAM\n")
	end := -1
	if deploy >= 0 {
		if n := strings.Index(text[deploy+1:], "\n## "); n >= 0 {
			end = deploy + 1 + n
		}
	}
	var blocks []string
	at := 0
	for _, block := range strings.Split(text, "```sh\n")[1:] {
		at = strings.Index(text[at:], "```sh\n"+block) + at + 1
		if deploy >= 0 && at > deploy && (end < 0 || at < end) {
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
// that are not the defaults). Every document with examples is checked.
func TestReadmeExamplesUseVariables(t *testing.T) {
	var blocks []string
	for _, d := range exampleDocs(t) {
		blocks = append(blocks, shellBlocks(doc(t, d))...)
	}
	if len(blocks) < 20 {
		t.Fatalf("found %d shell blocks in the documents, want at least 20", len(blocks))
	}
	defaults := regexp.MustCompile(`\$\{[A-Z_]+:-[^}]*\}`) // ${API:-http://127.0.0.1:3000}
	for _, code := range blocks {
		if strings.HasPrefix(code, "make local ") {
			continue // Set up's first block names the defaults it starts
		}
		rest := defaults.ReplaceAllString(code, "")
		for _, fixed := range []string{"127.0.0.1:3000", "127.0.0.1:8000", "127.0.0.1:9000", "localhost:", "/tmp/", "127.0.0.1:4567"} {
			if strings.Contains(rest, fixed) {
				t.Errorf("an example uses %s other than as a variable's default; use $API, $DB, $WORK (or $HOOK_ADDR):\n%s", fixed, code)
			}
		}
	}
	// The README's API section sets the variables once, each with its default.
	_, api, _ := strings.Cut(readme(t), "\n## API\n")
	intro, _, _ := strings.Cut(api, "\n### ")
	for _, want := range []string{"API=${API:-http://127.0.0.1:3000}", "DB=${DB:-http://127.0.0.1:8000}", "WORK=${WORK:-$(mktemp -d)}"} {
		if !strings.Contains(intro, want) {
			t.Errorf("the README's API section does not set %s", want)
		}
	}
}

// TestReadmeSecondStack: the sample message for a taken address in
// cmd/local/README.md is the one the stack prints when all three of its
// addresses are taken, and its recipe for a second stack moves every one of
// the three; the README's own recipe is the same.
func TestReadmeSecondStack(t *testing.T) {
	text := doc(t, "cmd/local/README.md")
	_, after, ok := strings.Cut(text, "If an address is taken")
	if !ok {
		t.Fatal(`cmd/local/README.md has no "If an address is taken"`)
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
		t.Errorf("the sample message is\n%s\nthe stack prints\n%s", sample, want)
	}

	// "`VAR=value … make local` then runs a second stack beside the first"
	m := regexp.MustCompile("`((?:[A-Z_]+=\\S+ )+)make local`\\s+then runs a second stack").FindStringSubmatch(after)
	if m == nil {
		t.Fatal("cmd/local/README.md has no recipe `VAR=value make local` for a second stack")
	}
	recipes := []string{m[1]}
	// The README's Set up: "a second stack beside the first (`VAR=value make local`)".
	if m := regexp.MustCompile("second stack beside the first \\(`((?:[A-Z_]+=\\S+ )+)make local`\\)").FindStringSubmatch(readme(t)); m != nil {
		recipes = append(recipes, m[1])
	} else {
		t.Error("the README's Set up has no recipe `VAR=value make local` for a second stack beside the first")
	}
	for _, recipe := range recipes {
		env := vars{}
		for _, kv := range strings.Fields(recipe) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		second, err := localAddrs(env.getenv)
		if err != nil {
			t.Fatalf("the recipe %q: %v", recipe, err)
		}
		for _, pair := range [][2]string{{defaults.api, second.api}, {defaults.db, second.db}, {defaults.s3, second.s3}, {defaults.cognito, second.cognito}} {
			if pair[0] == pair[1] {
				t.Errorf("the recipe %q leaves %s where the first stack listens", recipe, pair[0])
			}
		}
	}
}
