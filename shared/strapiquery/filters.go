package strapiquery

import (
	"strings"
)

// Filters reads the filters parameter, in qs's forms
// (filters[state][$eq]=Goa, filters[$or][0][state][$eq]=Goa,
// filters[state][$in][0]=Goa, filters[state]=Goa for $eq), into one
// $and of everything it says: the fields and operators are checked later,
// against a row type (Compile). No filters is an empty $and, which
// every row satisfies.
func (q Query) Filters() (Expr, error) {
	root, found, err := q.tree("filters")
	if err != nil || !found {
		return And(), err
	}
	if root.kids == nil {
		return Expr{}, paramError("filters", "filters must be an object, such as filters[field][$eq]=value")
	}
	args, err := where(root, "filters")
	return And(args...), err
}

// where reads an object of conditions: logical operators and fields.
func where(n *qsNode, path string) ([]Expr, error) {
	var out []Expr
	for _, k := range n.names() {
		c, at := n.kids[k], path+"["+k+"]"
		switch k {
		case "$and", "$or":
			items, ok := c.list()
			if !ok || c.kids == nil {
				return nil, paramError(at, at+" must be a list of conditions, such as "+at+"[0][field][$eq]=value")
			}
			e := Expr{Op: k}
			for _, it := range items {
				if it.kids == nil {
					return nil, paramError(at, at+" must be a list of conditions, such as "+at+"[0][field][$eq]=value")
				}
				sub, err := where(it, at)
				if err != nil {
					return nil, err
				}
				e.Args = append(e.Args, And(sub...))
			}
			out = append(out, e)
		case "$not":
			if c.kids == nil {
				return nil, paramError(at, at+" must be an object of conditions")
			}
			sub, err := where(c, at)
			if err != nil {
				return nil, err
			}
			out = append(out, Expr{Op: "$not", Args: sub})
		default:
			if strings.HasPrefix(k, "$") {
				return nil, InvalidKey(k)
			}
			sub, err := attribute(k, c, at)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	return out, nil
}

// attribute reads the conditions on one field: a value ($eq), a list of
// values ($in), or an object of operators, $not among them.
func attribute(field string, n *qsNode, path string) ([]Expr, error) {
	if n.kids == nil || isList(n) {
		vals, err := leaves(n, path)
		if err != nil {
			return nil, err
		}
		op := "$eq"
		if len(vals) > 1 || n.kids != nil {
			op = "$in"
		}
		return []Expr{{Op: op, Field: field, Values: vals}}, nil
	}
	var out []Expr
	for _, op := range n.names() {
		c, at := n.kids[op], path+"["+op+"]"
		if op == "$not" {
			sub, err := attribute(field, c, at)
			if err != nil {
				return nil, err
			}
			out = append(out, Expr{Op: "$not", Args: sub})
			continue
		}
		if !strings.HasPrefix(op, "$") {
			return nil, InvalidKey(op)
		}
		vals, err := leaves(c, at)
		if err != nil {
			return nil, err
		}
		out = append(out, Expr{Op: op, Field: field, Values: vals})
	}
	return out, nil
}

// isList reports whether n is an object whose keys are all indexes.
func isList(n *qsNode) bool {
	_, ok := n.list()
	return ok
}

// leaves returns the values of a leaf or of a list of leaves.
func leaves(n *qsNode, path string) ([]string, error) {
	items, ok := n.list()
	if !ok {
		return nil, paramError(path, path+" must be a value or a list of values")
	}
	var vals []string
	for _, it := range items {
		if it.kids != nil {
			return nil, paramError(path, path+" must be a value or a list of values")
		}
		vals = append(vals, it.values...)
	}
	return vals, nil
}
