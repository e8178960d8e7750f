package openapi

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"stampduty/shared/apidoc"
)

// maxOperationLines is the most lines one operation of openapi.yaml may
// take (DECISIONS.md): what every operation repeats, its error answers,
// parameters and bodies, lives under components and is named by $ref.
const maxOperationLines = 40

// operationLength is one operation of the document and how many lines it
// takes as written.
type operationLength struct {
	method, path string
	line, lines  int // its first line, from 1, and its length
}

func (o operationLength) String() string {
	return fmt.Sprintf("%s %s (line %d): %d lines", strings.ToUpper(o.method), o.path, o.line, o.lines)
}

// operation is one operation of a YAML OpenAPI document as parsed: its
// method's key and its value.
type operation struct {
	path     string
	key, val *yaml.Node
}

// operations returns the operations of doc, a YAML OpenAPI document, in
// the order written.
func operations(doc []byte) ([]operation, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		return nil, fmt.Errorf("not one YAML document")
	}
	paths := mappingValue(root.Content[0], "paths")
	if paths == nil {
		return nil, fmt.Errorf("no paths")
	}
	var out []operation
	for i := 0; i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i], paths.Content[i+1]
		if item.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			if key := item.Content[j]; slices.Contains(methods, key.Value) {
				out = append(out, operation{path: path.Value, key: key, val: item.Content[j+1]})
			}
		}
	}
	return out, nil
}

// operationLengths measures each operation of doc, a YAML OpenAPI
// document, in lines of its text: from the line of its method's key to
// its last line of content, the line before the next key indented as
// much as the method's or less, blank and comment lines at its end left
// out.
func operationLengths(doc []byte) ([]operationLength, error) {
	ops, err := operations(doc)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(bytes.TrimSuffix(doc, []byte("\n"))), "\n")
	var out []operationLength
	for _, op := range ops {
		out = append(out, operationLength{method: op.key.Value, path: op.path, line: op.key.Line, lines: blockLength(lines, op.key.Line, op.key.Column)})
	}
	return out, nil
}

// methods are the keys of a path item that are operations.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// mappingValue returns the value of key in the mapping node m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// blockLength is how many lines the block of the key at line and column
// (both from 1) takes in lines: up to the last line of content before the
// next line indented no deeper than the key. Lines inside the block's
// block scalars are indented deeper than the key, so they count.
func blockLength(lines []string, line, column int) int {
	last := line
	for n := line + 1; n <= len(lines); n++ {
		text := lines[n-1]
		trimmed := strings.TrimLeft(text, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if len(text)-len(trimmed) < column {
			break
		}
		last = n
	}
	return last - line + 1
}

// TestNoOperationIsLongerThan40Lines keeps each operation of openapi.yaml
// readable at a glance: an operation longer than 40 lines repeats what
// belongs under components (an error answer, a parameter, a body) and
// fails, named with its length.
func TestNoOperationIsLongerThan40Lines(t *testing.T) {
	ops, err := operationLengths(apidoc.OpenAPI)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if len(ops) == 0 {
		t.Fatal("openapi.yaml: no operations found")
	}
	longest := slices.MaxFunc(ops, func(a, b operationLength) int { return a.lines - b.lines })
	var long []string
	for _, o := range ops {
		if o.lines > maxOperationLines {
			long = append(long, o.String())
		}
	}
	if len(long) > 0 {
		t.Errorf("%d of openapi.yaml's %d operations are longer than %d lines (move what they repeat, or a long parameter, body or answer, under components and $ref it):\n  %s",
			len(long), len(ops), maxOperationLines, strings.Join(long, "\n  "))
	}
	t.Logf("%d operations; the longest is %v", len(ops), longest)
}

// TestOperationLengths shows how an operation is measured: from its
// method's key to its last line of content, its block scalars' lines
// (blank ones too) counted, the blank and comment lines after it not.
func TestOperationLengths(t *testing.T) {
	doc := []byte(`openapi: 3.1.0
paths:
  /a:
    parameters: []
    get:
      summary: one
      description: |
        two

        four

    # a comment about post
    post: {summary: one line}
  /b:
    delete:
      responses:
        "204": {description: gone}
components: {}
`)
	ops, err := operationLengths(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range ops {
		got = append(got, o.String())
	}
	want := []string{"GET /a (line 5): 6 lines", "POST /a (line 13): 1 lines", "DELETE /b (line 15): 3 lines"}
	if !slices.Equal(got, want) {
		t.Errorf("operationLengths = %q, want %q", got, want)
	}
}

// TestErrorAnswersAreShared keeps the error answers in one place: each
// 4xx or 5xx answer of an operation is a $ref to components/responses, so
// that the same status is described the same way everywhere, and an
// operation lists its errors one line each.
func TestErrorAnswersAreShared(t *testing.T) {
	ops, err := operations(apidoc.OpenAPI)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	for _, op := range ops {
		responses := mappingValue(op.val, "responses")
		if responses == nil {
			t.Errorf("%s %s (line %d) has no responses", strings.ToUpper(op.key.Value), op.path, op.key.Line)
			continue
		}
		for i := 0; i+1 < len(responses.Content); i += 2 {
			code, answer := responses.Content[i], responses.Content[i+1]
			if !strings.HasPrefix(code.Value, "4") && !strings.HasPrefix(code.Value, "5") {
				continue
			}
			ref := mappingValue(answer, "$ref")
			if ref == nil || len(answer.Content) != 2 || !strings.HasPrefix(ref.Value, "#/components/responses/") {
				t.Errorf("%s %s answers %s (line %d) written out: make it a $ref to components/responses",
					strings.ToUpper(op.key.Value), op.path, code.Value, code.Line)
			}
		}
	}
}
