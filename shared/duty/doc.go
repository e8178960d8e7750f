// Package duty computes stamp duty as the law does (duty-rules.md): rules
// as data on each article, in dated versions, evaluated exactly and
// explained line by line. It is pure Go, with no AWS imports: the
// domain's layer.
//
//   - decimal.go, rounding.go: the exact values a rule is written in
//     (money and rates as strings, never a float) and its roundings.
//   - tree.go, parse.go, components.go: reading a rule's JSON, every
//     problem at once with its path (§2–§5, §11).
//   - check.go: the enum combinations and the probe (§11).
//   - eval.go, explain.go: evaluation (§6) and the explained quote (§8).
//   - canonical.go: a version's canonical JSON and hash (§7).
//   - dates.go: dates in India and the version in force on one.
//   - legacy.go: the migration of today's articles (§9).
//
// What it costs (§15), for the largest rule §2–§5 allow (bench_test.go's
// largestRule: 32 components, slabs of 16 bands, 4,096 enum combinations),
// measured with `GOMAXPROCS=1 go test -run '^$' -bench Largest -benchmem
// -count 4 ./shared/duty` on this 2-core shared machine (2026-12-07):
//
//	Evaluate (a quote or a create)      91–144 µs/op   43 KB   1,402 allocs
//	ValidateRules (a save: §11 whole)    39–51 ms/op   19 MB   546,889 allocs
//
// An article's rules are parsed when its item is read (store.Articles),
// which the functions keep in their caches, not per evaluation.
package duty
