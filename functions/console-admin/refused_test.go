package main

import (
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
)

// TestCallerTokensRefused: every admin route refuses a caller's test
// token, and its live one, when no staff id token's claims came with it
// (the function's own check behind API Gateway's JWT authorizer): 401, no
// DynamoDB call, though each route is sent what would issue or revoke a
// token, create a caller, change the catalogue or invite a person.
func TestCallerTokensRefused(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	s.CheckCallerTokensRefused(t, localdb.DevOwner, 401,
		map[string]string{"{owner}": localdb.DevOwner, "{id}": localdb.Hasher().Hash(localdb.DevToken)[:12], "{documentId}": "x"},
		func(r samtemplate.Route) string {
			switch {
			case r.Method == "GET":
				return ""
			case strings.HasSuffix(r.Path, "/tokens"):
				return `{"test":true}`
			case r.Path == "/api/console/callers":
				return `{"owner":"sneaky"}`
			case strings.HasPrefix(r.Path, "/api/console/staff"):
				return `{"email":"sneaky@console.local","role":"admin"}`
			}
			return `{}`
		})
}
