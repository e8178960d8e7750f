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
package duty
