package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// table is one section of the report: a title, a header, rows of cells and
// notes printed under it. The first column is text, the others figures.
type table struct {
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
	// TextCols is how many leading columns are text (left aligned); at least 1.
	TextCols int
}

// add appends a row.
func (t *table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// note appends a note line.
func (t *table) note(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// writeText writes t as an aligned text table: the text columns left
// aligned, the others right aligned.
func (t *table) writeText(w io.Writer) {
	widths := make([]int, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range row {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
	}
	line := func(row []string) {
		var b strings.Builder
		for i := range widths {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < max(1, t.TextCols) {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	fmt.Fprintln(w, t.Title)
	fmt.Fprintln(w, strings.Repeat("=", utf8.RuneCountInString(t.Title)))
	line(t.Header)
	total := 0
	for _, wd := range widths {
		total += wd
	}
	fmt.Fprintln(w, strings.Repeat("-", total+2*(len(widths)-1)))
	for _, row := range t.Rows {
		line(row)
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "  "+n)
	}
	fmt.Fprintln(w)
}

// writeMarkdown writes t as a Markdown table under a level-4 heading, with
// the notes as a list below it.
func (t *table) writeMarkdown(w io.Writer) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	fmt.Fprintf(w, "#### %s\n\n", t.Title)
	cells := make([]string, len(t.Header))
	for i, h := range t.Header {
		cells[i] = esc(h)
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	for i := range cells {
		cells[i] = "--:"
		if i < max(1, t.TextCols) {
			cells[i] = "---"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(cells, "|"))
	for _, row := range t.Rows {
		out := make([]string, len(t.Header))
		for i := range out {
			if i < len(row) {
				out[i] = esc(row[i])
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(out, " | "))
	}
	if len(t.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range t.Notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
	fmt.Fprintln(w)
}

// durations summarises a sample of durations.
type durations []time.Duration

// sorted returns a sorted copy.
func (d durations) sorted() []time.Duration {
	s := slices.Clone([]time.Duration(d))
	slices.Sort(s)
	return s
}

// median returns the middle value (the mean of the two middle ones for an
// even count); 0 for an empty sample.
func (d durations) median() time.Duration {
	s := d.sorted()
	switch {
	case len(s) == 0:
		return 0
	case len(s)%2 == 1:
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// min returns the smallest value; 0 for an empty sample.
func (d durations) min() time.Duration {
	if len(d) == 0 {
		return 0
	}
	return slices.Min(d)
}

// p90 returns the 90th percentile by the nearest-rank method; 0 for an
// empty sample.
func (d durations) p90() time.Duration {
	s := d.sorted()
	if len(s) == 0 {
		return 0
	}
	return s[int(math.Ceil(0.9*float64(len(s))))-1]
}

// ms formats a duration in milliseconds with two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

// num formats a float with up to prec decimals, trailing zeros dropped.
func num(v float64, prec int) string {
	s := fmt.Sprintf("%.*f", prec, v)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// dollars formats an amount of US dollars with four decimals.
func dollars(v float64) string { return fmt.Sprintf("$%.4f", v) }
