package duty

import (
	"fmt"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a rule (§11) or with the inputs of a
// quote (§10): where, and what. Path holds names (string) and indexes
// (int) from the article's duty_rules down, e.g. [1 "components" 2
// "rate"]; a caller puts "duty_rules" (and, in a file, the article's
// place) before it.
type Problem struct {
	Path    []any
	Message string
}

// String writes the problem as a person reads it: the path, then the message.
func (p Problem) String() string {
	return PathString(p.Path) + ": " + p.Message
}

// PathString writes a path as JSON's dotted form: components[2].rate.
func PathString(path []any) string {
	var b strings.Builder
	for _, e := range path {
		switch e := e.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(e) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, e)
		}
	}
	return b.String()
}

// problems gathers the problems of one rule as it is read, each at the
// path of the value it is about.
type problems struct {
	list []Problem
}

// add records a problem at path (copied: callers reuse their slices).
func (ps *problems) add(path []any, format string, args ...any) {
	ps.list = append(ps.list, Problem{Path: append([]any(nil), path...), Message: fmt.Sprintf(format, args...)})
}

// at returns path with more elements, in a new slice.
func at(path []any, more ...any) []any {
	return append(append(make([]any, 0, len(path)+len(more)), path...), more...)
}

// lastName is the name a message starts with: the path's last name, with
// the indexes after it ("bands[2]").
func lastName(path []any) string {
	for i := len(path) - 1; i >= 0; i-- {
		if _, ok := path[i].(string); ok {
			return PathString(path[i:])
		}
	}
	return "the rule"
}
