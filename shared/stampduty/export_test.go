package stampduty

// FullOrderBody is a typical full create-order body, for the tests of
// package stampduty_test.
var FullOrderBody = buildBody(fullMembers)

// DecodeFields decodes a JSON object, nested no deeper than maxDepth, into
// the fields the edge hands the domain. This package's tests read their
// JSON bodies with it. The external test package sets it (decode_test.go)
// to the edge's own reading, jsonobj.Members then stampjson.Fields, which
// these tests cannot import: stampjson imports this package.
var DecodeFields func(body []byte, maxDepth int) ([]Field, error)
