// Package testkit is the root of the tooling tree, kept apart from the
// product: its packages serve the tests, the local stack, stampctl and the
// bench, never a Lambda function. TestNotLinkedIntoFunctions fails when a
// function's dependencies reach this tree or other tooling (cmd/,
// shared/apidoc, the OpenAPI and YAML libraries, the browser driver, the
// testing packages).
// syncbuf stands apart from functest so that the bench links no OpenAPI
// validator.
package testkit
