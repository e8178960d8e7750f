package main

// stampctl quote: the explained quote of duty-rules.md §8 as a table,
// priced by the public quote's own code (orders.Quoter over the articles
// table), for operators and for checking a rule against a schedule.

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"stampduty/shared/duty"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// inputFlags collects the repeated --input NAME=VALUE.
type inputFlags []string

func (f *inputFlags) String() string { return strings.Join(*f, " ") }

func (f *inputFlags) Set(s string) error {
	*f = append(*f, s)
	return nil
}

// quote prints the explained quote of an article: `quote --purpose P
// --state S [--date D] [--quantity N] [NAME=VALUE ...]`. The inputs of
// duty-rules §3 are NAME=VALUE arguments or --input NAME=VALUE flags,
// sent as the API's query parameters of those names; the article is read
// from the articles table (as stored now, retired ones not found) and
// quoted by orders.Quoter, the quote's own workflow. A refused quote
// prints each failing input with its message and exits 1.
func (c *cli) quote(fs *flag.FlagSet, args []string) error {
	purpose := fs.String("purpose", "", "the article's purpose_name (required)")
	state := fs.String("state", "", "the article's state (required)")
	date := fs.String("date", "", "the instrument date, YYYY-MM-DD (default today in India)")
	quantity := fs.String("quantity", "", "the number of papers (default 1)")
	var inputs inputFlags
	fs.Var(&inputs, "input", "an input of the duty rule, NAME=VALUE (repeatable; the same as a NAME=VALUE argument)")
	rest, err := parse(fs, args, 0, math.MaxInt)
	if err != nil {
		return err
	}
	if *purpose == "" || *state == "" {
		return usagef("quote: --purpose and --state are required")
	}
	q := stampduty.QuoteQuery{Purpose: []string{*purpose}, State: []string{*state}, Inputs: map[string][]string{}}
	if *date != "" {
		q.InstrumentDate = []string{*date}
	}
	if *quantity != "" {
		q.Quantity = []string{*quantity}
	}
	for _, kv := range append(inputs, rest...) {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !slices.Contains(duty.InputNames(), name) {
			return usagef("quote: %s is not NAME=VALUE with NAME one of: %s", strconv.Quote(kv), strings.Join(duty.InputNames(), ", "))
		}
		switch name {
		case "amount":
			q.Amount = append(q.Amount, value)
		case "considerationPrice":
			q.ConsiderationPrice = append(q.ConsiderationPrice, value)
		default:
			q.Inputs[name] = append(q.Inputs[name], value)
		}
	}
	db, ts, err := c.open(articlesSpec)
	if err != nil {
		return err
	}
	quoter := orders.Quoter{Articles: db.Articles(ts[0].name), Now: c.now}
	got, err := quoter.Quote(c.ctx, q)
	var e *stampduty.Error
	switch {
	case errors.As(err, &e) && e.Code == stampduty.EINVALID:
		for _, f := range e.Fields {
			fmt.Fprintf(c.stderr, "%s: %s\n", cmp.Or(f.Path, "query"), f.Message)
		}
		if r := e.DutyRule; r != nil {
			fmt.Fprintf(c.stderr, "the duty rule: %s\n", ruleName(*r))
		}
		return errors.New("the quote is refused (each failing input above)")
	case stampduty.ErrorCode(err) == stampduty.ENOTFOUND:
		return err
	case err != nil:
		return storeErr("quote", err, ts...)
	}
	return printQuote(c.stdout, got, cmp.Or(*date, duty.TodayInIndia(c.now())))
}

// ruleName names a rule version: its citation, period and hash, and the
// article's version that holds it.
func ruleName(r duty.RuleRef) string {
	s := "(no citation)"
	if r.Citation != nil {
		s = r.Citation.Text + " <" + r.Citation.URL + ">"
	}
	return fmt.Sprintf("%s, %s, %s, article %s version %d", s, period(r.EffectiveFrom, r.EffectiveTo), r.Hash, r.Article, r.ArticleVersion)
}

// period writes a version's period as its fields say it:
// "effectiveFrom 2022-04-01, effectiveTo null" (null: since before the
// catalogue knew, or open).
func period(from, to *string) string {
	v := func(s *string) string {
		if s == nil {
			return "null"
		}
		return *s
	}
	return "effectiveFrom " + v(from) + ", effectiveTo " + v(to)
}

// printQuote writes q as the explained quote: a header (the article, the
// instrument date, the rule version: citation, period, hash, the
// article's version), the inputs and bases, then one row per line of
// the explanation (LINE, LABEL, BASE, RATE, EXACT, ROUNDING, AMOUNT) and
// the TOTAL; for more than one paper, what they cost together. A range
// article asked without an amount has no duty: it says so.
func printQuote(out io.Writer, q stampduty.Quote, date string) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "purpose:\t%s\n", q.PurposeName)
	fmt.Fprintf(w, "state:\t%s\n", q.State)
	d := q.Duty
	if d == nil {
		fmt.Fprintf(w, "instrument date:\t%s\n", date)
		fmt.Fprintf(w, "rule:\t%s (amount in [%d, %d])\n", q.Rule, q.Min, q.Max)
		if err := w.Flush(); err != nil {
			return err
		}
		_, err := fmt.Fprintf(out, "no duty: a range article quotes the amount it is given (amount=N, from %d to %d)\n", q.Min, q.Max)
		return err
	}
	fmt.Fprintf(w, "instrument date:\t%s\n", d.InstrumentDate)
	fmt.Fprintf(w, "rule:\t%s\n", q.Rule)
	if c := d.Rule.Citation; c != nil {
		fmt.Fprintf(w, "citation:\t%s <%s>\n", c.Text, c.URL)
	}
	fmt.Fprintf(w, "period:\t%s\n", period(d.Rule.EffectiveFrom, d.Rule.EffectiveTo))
	fmt.Fprintf(w, "hash:\t%s\n", d.Rule.Hash)
	fmt.Fprintf(w, "article:\t%s, version %d\n", d.Rule.Article, d.Rule.ArticleVersion)
	names := slices.SortedFunc(maps.Keys(d.Inputs), func(a, b string) int { return cmp.Compare(duty.InputRank(a), duty.InputRank(b)) })
	var in []string
	for _, n := range names {
		in = append(in, fmt.Sprintf("%s=%v", n, d.Inputs[n]))
	}
	fmt.Fprintf(w, "inputs:\t%s\n", orNone(in))
	if len(d.IgnoredInputs) > 0 {
		fmt.Fprintf(w, "ignored inputs:\t%s\n", strings.Join(d.IgnoredInputs, ", "))
	}
	var bases []string
	for _, b := range d.Bases {
		bases = append(bases, b.Name+" = "+b.Amount)
	}
	if len(bases) > 0 {
		fmt.Fprintf(w, "bases:\t%s\n", strings.Join(bases, ", "))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	width := max(len("AMOUNT"), len(d.Total))
	for _, l := range d.Lines {
		width = max(width, len(l.Amount))
	}
	amount := func(s string) string { return strings.Repeat(" ", width-len(s)) + s }
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "LINE\tLABEL\tBASE\tRATE\tEXACT\tROUNDING\t%s\n", amount("AMOUNT"))
	for _, l := range d.Lines {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.ID, l.Label, lineBase(l), lineRate(l), dash(l.Exact), lineRounding(l), amount(l.Amount))
	}
	fmt.Fprintf(w, "TOTAL\t\t\t\t\t\t%s\n", amount(d.Total))
	if err := w.Flush(); err != nil {
		return err
	}
	if q.Quantity > 1 && q.TotalAmount != nil {
		_, err := fmt.Fprintf(out, "%d papers: total_amount %d (amount %d each)\n", q.Quantity, *q.TotalAmount, *q.Amount)
		return err
	}
	return nil
}

// lineBase is what a line's rate applies to: the base or the components
// it is a share of, with the value used; the band a slab fell in.
func lineBase(l duty.Line) string {
	var s string
	switch {
	case l.Base != "":
		s = strings.TrimSpace(l.Base + " " + l.BaseAmount)
	case len(l.Of) > 0:
		s = strings.TrimSpace("of " + strings.Join(l.Of, "+") + " " + l.BaseAmount)
	default:
		s = l.BaseAmount
	}
	if b := l.Band; b != nil {
		upTo := "and above"
		if b.UpTo != nil {
			upTo = "up to " + *b.UpTo
		}
		s = strings.TrimSpace(fmt.Sprintf("%s, band %d (%s)", s, b.Index, upTo))
	}
	return dash(s)
}

// lineRate is a line's rate, or its units for a perUnit component.
func lineRate(l duty.Line) string {
	if l.Units != "" {
		return l.Units + " units of " + l.Unit
	}
	return dash(l.Rate)
}

// lineRounding is how a line's value was rounded and limited, when it was.
func lineRounding(l duty.Line) string {
	var parts []string
	if l.Rounding != "" {
		parts = append(parts, l.Rounding)
	}
	if l.Limit != "" {
		parts = append(parts, "limited to its "+l.Limit)
	}
	return dash(strings.Join(parts, "; "))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}
