// Package testkit is the root of the tooling tree, kept apart from the
// product: the packages below it serve the tests, the local stack
// (cmd/local), stampctl's local defaults and the bench, never a Lambda
// function.
//
//   - functest drives a function through its Lambda entry point and checks
//     every answer against openapi.yaml (with openapi, the checker).
//   - storetest starts dynalite and the local S3 server per test binary,
//     with fresh tables and a bucket per test, and its Proxy records,
//     meters and breaks DynamoDB calls.
//   - localdb and locals3 start and seed the local engines; localserver
//     runs either as a child process.
//   - fake holds in-memory stand-ins of the store interfaces.
//   - samtemplate reads template.yaml.
//   - syncbuf is the log buffer of concurrent writers that functest and
//     the bench share (apart, so the bench links no OpenAPI validator).
//
// TestNotLinkedIntoFunctions fails when a function's dependencies reach
// this tree or any other tooling: cmd/, shared/apidoc (which embeds
// openapi.yaml), pb33f's OpenAPI libraries, a YAML library or the testing
// packages of the standard library.
package testkit
