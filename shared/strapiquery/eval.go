package strapiquery

import (
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Truth is a truth value of SQL: true, false or unknown (NULL).
type Truth int8

// The truth values.
const (
	False Truth = iota
	Unknown
	True
)

// Match reports whether the row is selected: whether the filter is true
// for it (unknown is not true, as in a WHERE clause).
func (f *Filter) Match(row Row) bool { return f == nil || f.root.eval(row) == True }

func (n node) eval(row Row) Truth {
	switch n.op {
	case "$and":
		t := True
		for _, a := range n.args {
			t = min(t, a.eval(row))
		}
		return t
	case "$or":
		t := False
		for _, a := range n.args {
			t = max(t, a.eval(row))
		}
		return t
	case "$not":
		t := True
		for _, a := range n.args {
			t = min(t, a.eval(row))
		}
		return True - t
	}
	v := row(n.field)
	if n.op == "$null" {
		return truth(v.Null == n.isNul)
	}
	if v.Null {
		return Unknown
	}
	if l, ok := likeOps[n.op]; ok {
		s := text(n.kind, v)
		if l.fold {
			s = strings.ToLower(s)
		}
		t := False
		for _, p := range n.pats {
			t = max(t, truth(Like(s, p)))
		}
		if l.not {
			return True - t
		}
		return t
	}
	switch n.op {
	case "$in", "$notIn":
		in := slices.ContainsFunc(n.vals, func(o Value) bool { return compare(n.kind, v, o) == 0 })
		return truth(in == (n.op == "$in"))
	case "$between":
		return truth(compare(n.kind, v, n.vals[0]) >= 0 && compare(n.kind, v, n.vals[1]) <= 0)
	}
	ok := compareOps[n.op]
	return truth(slices.ContainsFunc(n.vals, func(o Value) bool { return ok(compare(n.kind, v, o)) }))
}

func truth(b bool) Truth {
	if b {
		return True
	}
	return False
}

// compare orders two values of kind: text byte-wise, false before true.
func compare(kind Kind, a, b Value) int {
	switch kind {
	case Text:
		return strings.Compare(a.Text, b.Text)
	case Bool:
		switch {
		case a.Bool == b.Bool:
			return 0
		case a.Bool:
			return 1
		}
		return -1
	}
	return a.Num.Cmp(b.Num)
}

// text is a value as CAST(… AS VARCHAR) writes it.
func text(kind Kind, v Value) string {
	switch kind {
	case Text:
		return v.Text
	case Bool:
		return strconv.FormatBool(v.Bool)
	case Int:
		return v.Num.RatString()
	}
	return v.Num.FloatString(decimals(v.Num))
}

// decimals is how many fractional digits r needs (r is a finite decimal).
func decimals(r *big.Rat) int {
	d := new(big.Int).Set(r.Denom())
	n := 0
	for d.Cmp(big.NewInt(1)) > 0 && n < 40 {
		d.Quo(d, big.NewInt(10))
		n++
	}
	return n
}

// Like reports whether s matches the SQL LIKE pattern p: % any run of
// characters, _ one character, \ makes the next character literal
// (PostgreSQL's default escape).
func Like(s, p string) bool {
	sr, pr := []rune(s), []rune(p)
	// match[i] is whether sr[i:] matches the rest of the pattern; walk the
	// pattern from its end.
	type tok struct {
		r   rune
		any bool // %
		one bool // _
	}
	var toks []tok
	for i := 0; i < len(pr); i++ {
		switch c := pr[i]; {
		case c == '\\' && i+1 < len(pr):
			i++
			toks = append(toks, tok{r: pr[i]})
		case c == '%':
			toks = append(toks, tok{any: true})
		case c == '_':
			toks = append(toks, tok{one: true})
		default:
			toks = append(toks, tok{r: c})
		}
	}
	next := make([]bool, len(sr)+1)
	next[len(sr)] = true
	for k := len(toks) - 1; k >= 0; k-- {
		cur := make([]bool, len(sr)+1)
		t := toks[k]
		for i := len(sr); i >= 0; i-- {
			switch {
			case t.any:
				cur[i] = next[i] || (i < len(sr) && cur[i+1])
			case i < len(sr) && (t.one || sr[i] == t.r):
				cur[i] = next[i+1]
			}
		}
		next = cur
	}
	return next[0]
}
