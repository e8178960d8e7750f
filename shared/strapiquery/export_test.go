package strapiquery

import "slices"

// Operators returns every attribute operator, sorted: the fuzzer's
// random filters (filter_test) draw from it, so a new operator is fuzzed
// as soon as compile knows it.
func Operators() []string {
	ops := []string{"$in", "$notIn", "$between", "$null", "$notNull"}
	for op := range likeOps {
		ops = append(ops, op)
	}
	for op := range compareOps {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return ops
}
