// Package apidoc holds the API's documents: openapi.yaml, its OpenAPI 3.1
// description (the contract's answers as a machine reads them), and api.md,
// every route's rules with runnable examples (the README's example runner
// runs them). With template.yaml, openapi.yaml is what a newcomer edits to
// add an endpoint. This package only embeds it for the tests' answer
// checker (shared/testkit/openapi); no function imports it
// (TestNotLinkedIntoFunctions fails if one does).
package apidoc

import _ "embed"

// OpenAPI is openapi.yaml, the API's OpenAPI 3.1 description.
//
//go:embed openapi.yaml
var OpenAPI []byte
