package main

import (
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
)

// TestCallerTokensRefused: every console route of the operators refuses a
// caller's test token, and its live one, when no staff id token's claims
// came with it (the function's own check behind API Gateway's JWT
// authorizer): 401, no DynamoDB call, though each route is sent what
// would move or cancel the caller's own test order. test-mode.md: a test
// token on operator paths.
func TestCallerTokensRefused(t *testing.T) {
	s := functest.New(t, "ConsoleFunction", wire)
	o := functest.AddOrders(t, s.Env, stampduty.TestOwnerOf(localdb.DevOwner), 1)[0]
	s.CheckCallerTokensRefused(t, localdb.DevOwner, 401,
		map[string]string{"{documentId}": o.DocumentID, "{fulfillmentDocumentId}": o.Fulfillments[0].DocumentID},
		func(r samtemplate.Route) string {
			switch {
			case r.Method == "PATCH":
				return `{"order_status":"Created","unique_doc_ref":"SUBIN-REFUSED-1"}`
			case strings.HasSuffix(r.Path, "/cancel"):
				return `{"reason":"Refused token"}`
			case strings.HasSuffix(r.Path, "/upload"):
				return `{"mime":"application/pdf","size":2048}`
			}
			return ""
		})
}
