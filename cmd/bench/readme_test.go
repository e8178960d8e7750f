package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestSplice(t *testing.T) {
	doc := "# Costs\n\nhand-written\n\n" + reportBegin + "\nold tables\n\n" + reportEnd + "\nmore by hand\n"
	t.Run("ReplacesOnlyWhatLiesBetweenTheMarks", func(t *testing.T) {
		got, err := splice([]byte(doc), []byte("Measured with `make bench`: now.\n\n#### 1. T\n\n| a |\n|---|\n| 1 |\n\n"))
		if err != nil {
			t.Fatal(err)
		}
		want := "# Costs\n\nhand-written\n\n" + reportBegin + "\nMeasured with `make bench`: now.\n\n#### 1. T\n\n| a |\n|---|\n| 1 |\n\n" + reportEnd + "\nmore by hand\n"
		if string(got) != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
		again, err := splice(got, []byte("Measured with `make bench`: now.\n\n#### 1. T\n\n| a |\n|---|\n| 1 |\n"))
		if err != nil || string(again) != want {
			t.Errorf("splicing the same report again gave\n%s\n%v, want it unchanged", again, err)
		}
	})
	t.Run("RefusesAFileWithoutTheMarks", func(t *testing.T) {
		for _, bad := range []string{"# Costs\n", "# Costs\n" + reportBegin + "tables\n", "# Costs\n" + reportEnd + reportBegin} {
			if got, err := splice([]byte(bad), []byte("x\n")); err == nil {
				t.Errorf("splice(%q) = %q, want an error", bad, got)
			}
		}
	})
}

// TestReadmeHoldsTheReport: cmd/bench/README.md, where make bench keeps its
// report, has the marks, and between them a report as the bench writes it
// (its heading line, then every section's tables in order), which splicing the
// same report back in leaves unchanged.
func TestReadmeHoldsTheReport(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", readmeFile))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(doc, []byte(reportBegin))
	report, _, ok2 := bytes.Cut(rest, []byte(reportEnd))
	if !ok || !ok2 {
		t.Fatalf("%s lacks the marks %q and %q around the report", readmeFile, reportBegin, reportEnd)
	}
	if !bytes.HasPrefix(report, []byte("\nMeasured with `make bench`: ")) {
		t.Errorf("the report does not start with the bench's heading line:\n%.200s", report)
	}
	var numbers []string
	for _, m := range regexp.MustCompile(`(?m)^#### (\d+)\. `).FindAllSubmatch(report, -1) {
		numbers = append(numbers, string(m[1]))
	}
	var want []string // 1 … the number of tables the sections print
	for _, sec := range (&bench{}).sections() {
		for range sec.tables {
			want = append(want, fmt.Sprint(len(want)+1))
		}
	}
	if got, want := strings.Join(numbers, " "), strings.Join(want, " "); got != want {
		t.Errorf("the report's sections are numbered %q, want %q", got, want)
	}
	if again, err := splice(doc, report); err != nil || !bytes.Equal(again, doc) {
		t.Errorf("splicing the report back in changed %s (%v): it is not laid out as make bench writes it", readmeFile, err)
	}
}
