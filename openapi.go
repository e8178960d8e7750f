// Package stampduty is the module's root: beside template.yaml (the
// functions, routes, tables and grants), openapi.yaml is the API's OpenAPI
// 3.1 description, the contract's answers as a machine reads them. Both
// are documents a newcomer edits to add an endpoint; this package only
// embeds the second for the tests' answer checker (shared/testkit/openapi). No
// function imports it (TestNotLinkedIntoFunctions fails if one does).
package stampduty

import _ "embed"

// OpenAPI is openapi.yaml, the API's OpenAPI 3.1 description.
//
//go:embed openapi.yaml
var OpenAPI []byte
