// Package strapiquery is Strapi v5's REST query language, as the qs library
// writes it: it reads a list endpoint's raw query string (sort, pagination,
// fields, filters, status) into what the list asks for, checked, and
// evaluates the filters over rows. It knows no HTTP beyond the query string
// and no AWS; how its errors are answered is package function's.
//
//   - query.go: Query, a parsed query string of plain parameters (Parse);
//   - list.go: ParseList, a list endpoint's parameters under its ListSpec;
//   - qs.go: bracketed keys (filters[$or][0][state][$eq]) read into a tree;
//   - page.go: pagination by page or by offset, the pagination block, PageOf;
//   - sort.go: sort keys; fields.go: field selection (Select);
//   - filters.go: the filters parameter read into an Expr;
//   - filter.go: Compile, which checks an Expr against a row type's fields
//     and reads its operands as their fields' kinds;
//   - eval.go: Filter.Match, with the meaning Strapi gives filters on
//     PostgreSQL: SQL's three-valued logic for NULLs, LIKE patterns for the
//     text operators, LOWER() for the case-insensitive ones;
//   - articles.go: the article's filterable fields, and the order list's
//     documentId filter.
//
// Every error is an EINVALID *stampduty.Error naming the parameter, in
// Strapi's words where Strapi has them ("Invalid key <key>"). Where
// strapi-compat.md is silent, DECISIONS.md beside this file says what the
// package decides.
package strapiquery
