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
// notes printed under it. The first TextCols columns (at least 1) are text,
// the others figures.
type table struct {
	Title    string
	Header   []string
	Rows     [][]string
	Notes    []string
	TextCols int
}

// add appends a row.
func (t *table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// note appends a note line.
func (t *table) note(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// isText reports whether column i is text (left aligned).
func (t *table) isText(i int) bool { return i < max(1, t.TextCols) }

// writeText writes t as an aligned text table: the text columns left
// aligned, the others right aligned.
func (t *table) writeText(w io.Writer) {
	rows := append([][]string{t.Header}, t.Rows...)
	widths := make([]int, len(t.Header))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	fmt.Fprintf(w, "%s\n%s\n", t.Title, strings.Repeat("=", utf8.RuneCountInString(t.Title)))
	for k, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if cells[i] = pad + c; t.isText(i) {
				cells[i] = c + pad
			}
		}
		line := strings.Join(cells, "  ")
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		if k == 0 {
			fmt.Fprintln(w, strings.Repeat("-", utf8.RuneCountInString(line)))
		}
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "  "+n)
	}
	fmt.Fprintln(w)
}

// writeMarkdown writes t as a Markdown table under a level-4 heading, with
// the notes as a list below it.
func (t *table) writeMarkdown(w io.Writer) {
	line := func(cells []string) {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
	}
	fmt.Fprintf(w, "#### %s\n\n", t.Title)
	line(t.Header)
	align := make([]string, len(t.Header))
	for i := range align {
		if align[i] = "--:"; t.isText(i) {
			align[i] = "---"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
	for _, row := range t.Rows {
		line(row)
	}
	if len(t.Notes) > 0 {
		fmt.Fprintf(w, "\n- %s\n", strings.Join(t.Notes, "\n- "))
	}
	fmt.Fprintln(w)
}

// durations is a sample of durations.
type durations []time.Duration

// stats returns the median (the mean of the two middle values for an even
// count), the minimum and the 90th percentile by the nearest-rank method;
// zeros for an empty sample. d keeps its order.
func (d durations) stats() (median, least, p90 time.Duration) {
	s := slices.Sorted(slices.Values(d))
	n := len(s)
	if n == 0 {
		return 0, 0, 0
	}
	return (s[(n-1)/2] + s[n/2]) / 2, s[0], s[int(math.Ceil(0.9*float64(n)))-1]
}

// median returns the median of stats.
func (d durations) median() time.Duration {
	m, _, _ := d.stats()
	return m
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

// ratio formats v/of with two decimals, "—" when of is 0.
func ratio(v, of float64) string {
	if of == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", v/of)
}

// dollars formats an amount of US dollars with four decimals.
func dollars(v float64) string { return fmt.Sprintf("$%.4f", v) }
