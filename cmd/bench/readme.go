package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// readmeFile is where make bench keeps its report, relative to the module
// root: the tables of cmd/bench/README.md between its two marks.
const readmeFile = "cmd/bench/README.md"

// The marks around the report in readmeFile. What lies between them is
// the bench's; the text around them is written by hand.
const (
	reportBegin = "<!-- make bench writes from here -->\n"
	reportEnd   = "<!-- make bench writes to here -->\n"
)

// splice returns doc with what lies between its marks replaced by report,
// set off by a blank line on each side.
func splice(doc, report []byte) ([]byte, error) {
	before, rest, ok := bytes.Cut(doc, []byte(reportBegin))
	if !ok {
		return nil, fmt.Errorf("no line %q", bytes.TrimSpace([]byte(reportBegin)))
	}
	_, after, ok := bytes.Cut(rest, []byte(reportEnd))
	if !ok {
		return nil, fmt.Errorf("no line %q after %q", bytes.TrimSpace([]byte(reportEnd)), bytes.TrimSpace([]byte(reportBegin)))
	}
	var b bytes.Buffer
	b.Write(before)
	b.WriteString(reportBegin + "\n")
	b.Write(bytes.Trim(report, "\n"))
	b.WriteString("\n\n" + reportEnd)
	b.Write(after)
	return b.Bytes(), nil
}

// writeReadme puts report between the marks of the file path (relative to
// root unless absolute), leaving the rest of the file as it is.
func writeReadme(root, path string, report []byte) error {
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err = splice(doc, report)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, doc, 0o644)
}
