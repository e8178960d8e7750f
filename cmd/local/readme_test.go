package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stampduty/shared/samtemplate"
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
