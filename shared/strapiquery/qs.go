package strapiquery

import (
	"slices"
	"strconv"
	"strings"
)

// MaxParamDepth is the most bracket segments a parameter key may have
// (filters[$or][0][$and][1][state][$in][0] has 7).
const MaxParamDepth = 16

// qsNode is the value of a bracketed parameter as the qs library reads
// filters[state][$in][0]=Goa: a leaf (the values sent for one key, several
// when the key repeats), or an object of named children, which is a list
// when every name is an index ([0], [1], ...) or empty ([]).
type qsNode struct {
	values []string
	kids   map[string]*qsNode
}

// tree reads every parameter under the top-level name top into one node:
// the children of the result are its first bracket segments. A key whose
// brackets do not pair up, nests deeper than MaxParamDepth, or that makes
// one node both a value and an object is EINVALID.
func (q Query) tree(top string) (*qsNode, bool, error) {
	root := &qsNode{}
	found := false
	keys := make([]string, 0, len(q.values))
	for k := range q.values {
		if topLevel(k) == top {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		segs, ok := segments(k[len(top):])
		if !ok || len(segs) > MaxParamDepth {
			return nil, false, paramError(top, "Invalid key "+k)
		}
		n := root
		for _, s := range segs {
			if n.kids == nil {
				n.kids = map[string]*qsNode{}
			}
			if n.kids[s] == nil {
				n.kids[s] = &qsNode{}
			}
			n = n.kids[s]
		}
		n.values = append(n.values, q.values[k]...)
		found = true
	}
	if err := root.check(top); err != nil {
		return nil, false, err
	}
	return root, found, nil
}

// check refuses a node that is both a value and an object.
func (n *qsNode) check(path string) error {
	if len(n.values) > 0 && len(n.kids) > 0 {
		return paramError(path, path+" is given both a value and keys")
	}
	for k, c := range n.kids {
		if err := c.check(path + "[" + k + "]"); err != nil {
			return err
		}
	}
	return nil
}

// topLevel is the name of a parameter: its key up to the first [.
func topLevel(key string) string {
	name, _, _ := strings.Cut(key, "[")
	return name
}

// segments splits "[a][b][]" into a, b and the empty name; ok is false when
// the text is not a run of bracketed names.
func segments(s string) (segs []string, ok bool) {
	for s != "" {
		if s[0] != '[' {
			return nil, false
		}
		end := strings.IndexByte(s, ']')
		if end < 0 || strings.ContainsRune(s[1:end], '[') {
			return nil, false
		}
		segs = append(segs, s[1:end])
		s = s[end+1:]
	}
	return segs, true
}

// list returns the items of a node that is a list: its children in index
// order ([] items last, in the order sent), or its values when it is a
// leaf. ok is false for an object with a named key.
func (n *qsNode) list() (items []*qsNode, ok bool) {
	if n.kids == nil {
		for _, v := range n.values {
			items = append(items, &qsNode{values: []string{v}})
		}
		return items, true
	}
	type item struct {
		i int
		n *qsNode
	}
	var indexed []item
	var pushed []*qsNode
	for k, c := range n.kids {
		if k == "" {
			for _, v := range c.values {
				pushed = append(pushed, &qsNode{values: []string{v}})
			}
			if c.kids != nil {
				pushed = append(pushed, c)
			}
			continue
		}
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || strconv.Itoa(i) != k {
			return nil, false
		}
		indexed = append(indexed, item{i, c})
	}
	slices.SortFunc(indexed, func(a, b item) int { return a.i - b.i })
	for _, it := range indexed {
		items = append(items, it.n)
	}
	return append(items, pushed...), true
}

// names returns the keys of an object node, sorted.
func (n *qsNode) names() []string {
	out := make([]string, 0, len(n.kids))
	for k := range n.kids {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
