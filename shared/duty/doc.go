// Package duty computes stamp duty as the law does (duty-rules.md): rules
// as data on each article, evaluated exactly. It is pure Go, with no AWS
// imports: the domain's layer.
//
// This file set is the first increment of issue 34: the exact decimal
// values a rule is written in (money and rates, never a JSON number or a
// float) and the roundings of §5 and §6. The rule's types, validation,
// evaluation and explanation follow.
package duty
