// Package duty computes stamp duty as the law does (duty-rules.md): rules
// as data on each article, evaluated exactly. It is pure Go, with no AWS
// imports: the domain's layer.
//
// So far (issue 34 is built in increments): the exact decimal values a
// rule is written in (money and rates, never a JSON number or a float),
// the roundings of §5 and §6, and a version's canonical JSON and hash
// (§7), dates in India and the version in force on one. The rule's types,
// validation, evaluation and explanation follow.
package duty
