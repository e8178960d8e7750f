package stampduty

// FullOrderBody is a typical full create-order body, for the tests of
// package rules_test.
var FullOrderBody = buildBody(fullMembers)
