package strapiquery

import (
	"fmt"
	"math/big"
	"strings"

	"stampduty/shared/stampduty"
)

// Kind is the type of a field, which decides how an operand is read.
type Kind int

// The kinds of fields.
const (
	// Int is a whole number (PostgreSQL integer/bigint).
	Int Kind = iota
	// Text is a string (varchar/text).
	Text
	// Bool is a boolean.
	Bool
	// Number is a decimal number (numeric).
	Number
)

// Expr is a filter as the query string gives it. Op is a logical operator
// ($and, $or, $not: Args are its operands) or an attribute operator ($eq,
// $in, ...: Field is the attribute, Values the operands as sent).
type Expr struct {
	Op     string
	Field  string
	Values []string
	Args   []Expr
}

// And returns the conjunction of args.
func And(args ...Expr) Expr { return Expr{Op: "$and", Args: args} }

// arrayOps take a list of operands; the other attribute operators take one,
// and several operands mean "any of them" (Strapi ORs them).
var arrayOps = map[string]bool{"$in": true, "$notIn": true, "$between": true}

// likeOps are the LIKE operators: pattern around the operand, negated,
// case-insensitive.
var likeOps = map[string]struct {
	prefix, suffix string
	not, fold      bool
}{
	"$eqi":          {"", "", false, true},
	"$nei":          {"", "", true, true},
	"$contains":     {"%", "%", false, false},
	"$notContains":  {"%", "%", true, false},
	"$containsi":    {"%", "%", false, true},
	"$notContainsi": {"%", "%", true, true},
	"$startsWith":   {"", "%", false, false},
	"$startsWithi":  {"", "%", false, true},
	"$endsWith":     {"%", "", false, false},
	"$endsWithi":    {"%", "", false, true},
}

func isLike(op string) bool {
	_, ok := likeOps[op]
	return ok
}

// compareOps are the comparisons, by the results of Compare they accept.
var compareOps = map[string]func(c int) bool{
	"$eq":  func(c int) bool { return c == 0 },
	"$ne":  func(c int) bool { return c != 0 },
	"$lt":  func(c int) bool { return c < 0 },
	"$lte": func(c int) bool { return c <= 0 },
	"$gt":  func(c int) bool { return c > 0 },
	"$gte": func(c int) bool { return c >= 0 },
}

// Value is a row's value of a field: NULL, or a value of the field's kind.
type Value struct {
	Null bool
	Text string   // Text
	Num  *big.Rat // Int, Number
	Bool bool     // Bool
}

// Row returns a row's value of a field Compile accepted.
type Row func(field string) Value

// Filter is a compiled Expr: ready to match rows.
type Filter struct {
	root node
}

// node is one compiled operator.
type node struct {
	op    string
	field string
	kind  Kind
	vals  []Value  // operands of an attribute operator, read as the field's kind
	pats  []string // LIKE patterns of a LIKE operator
	isNul bool     // $null/$notNull: match NULL (true) or NOT NULL (false)
	args  []node
}

// Compile checks e against the fields of a row type and reads its operands
// as their fields' kinds. An unknown field or operator is EINVALID
// "Invalid key <key>" (Strapi's message); an operand of the wrong type, or a
// $between without exactly two operands, is EINVALID naming the filter.
func Compile(e Expr, fields map[string]Kind) (*Filter, error) {
	n, err := compile(e, fields)
	if err != nil {
		return nil, err
	}
	return &Filter{root: n}, nil
}

func compile(e Expr, fields map[string]Kind) (node, error) {
	switch e.Op {
	case "$and", "$or", "$not":
		n := node{op: e.Op}
		for _, a := range e.Args {
			c, err := compile(a, fields)
			if err != nil {
				return node{}, err
			}
			n.args = append(n.args, c)
		}
		return n, nil
	}
	kind, ok := fields[e.Field]
	if !ok {
		return node{}, InvalidKey(e.Field)
	}
	n := node{op: e.Op, field: e.Field, kind: kind}
	switch {
	case e.Op == "$null" || e.Op == "$notNull":
		if len(e.Values) != 1 {
			return node{}, invalid(e, "takes one value")
		}
		n.isNul = castBool(e.Values[0]) == (e.Op == "$null")
		n.op = "$null"
	case isLike(e.Op):
		l := likeOps[e.Op]
		for _, v := range e.Values {
			p := l.prefix + v + l.suffix
			if l.fold {
				p = strings.ToLower(p)
			}
			n.pats = append(n.pats, p)
		}
	case compareOps[e.Op] != nil || arrayOps[e.Op]:
		for _, v := range e.Values {
			c, err := cast(kind, v)
			if err != nil {
				return node{}, invalid(e, err.Error())
			}
			n.vals = append(n.vals, c)
		}
		if e.Op == "$between" && len(n.vals) != 2 {
			return node{}, invalid(e, "takes two values, [0] and [1]")
		}
	default:
		return node{}, InvalidKey(e.Op)
	}
	if len(e.Values) == 0 {
		return node{}, invalid(e, "needs a value")
	}
	return n, nil
}

// InvalidKey is Strapi's error for a filter key it does not know.
func InvalidKey(key string) error {
	msg := "Invalid key " + key
	return &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "filters", Message: msg}}}
}

func invalid(e Expr, why string) error {
	path := fmt.Sprintf("filters[%s][%s]", e.Field, e.Op)
	msg := path + " " + why
	return &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: path, Message: msg}}}
}

// castBool reads a boolean as Strapi's boolean field does: true/t/1 and
// false/f/0, any other non-empty text true.
func castBool(s string) bool {
	switch strings.ToLower(s) {
	case "true", "t", "1":
		return true
	case "false", "f", "0", "":
		return false
	}
	return true
}

// cast reads an operand as a value of kind.
func cast(kind Kind, s string) (Value, error) {
	switch kind {
	case Text:
		return Value{Text: s}, nil
	case Bool:
		return Value{Bool: castBool(s)}, nil
	}
	s = strings.TrimSpace(s)
	if !plainNumber(s) {
		return Value{}, fmt.Errorf("must be a number")
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return Value{}, fmt.Errorf("must be a number")
	}
	if kind == Int && !r.IsInt() {
		return Value{}, fmt.Errorf("must be a whole number")
	}
	return Value{Num: r}, nil
}

// plainNumber reports whether s is a decimal number of at most 40
// characters: an optional sign, digits with an optional fraction, and an
// optional exponent of at most 3 digits. It keeps big.Rat from building a
// number like 1e100000000, and refuses hex, fractions and the empty string.
func plainNumber(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	mant = strings.TrimLeft(mant, "+-")
	whole, frac, _ := strings.Cut(mant, ".")
	digits := func(d string) bool { return strings.Trim(d, "0123456789") == "" }
	if whole+frac == "" || !digits(whole) || !digits(frac) {
		return false
	}
	if hasExp {
		exp = strings.TrimLeft(exp, "+-")
		return exp != "" && len(exp) <= 3 && digits(exp)
	}
	return true
}
