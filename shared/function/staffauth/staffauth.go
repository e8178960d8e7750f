// Package staffauth is the staff console's edge: who is signed in, from the
// claims of the staff pool's id token that API Gateway's JWT authorizer
// (ConsoleAuthorizer) verified, and the role a console route needs, checked
// again from the token's groups whatever the page shows (console.md). The
// console's two functions, ConsoleFunction (the operators' routes) and
// ConsoleAdminFunction (the admins'), serve their routes through it.
package staffauth

import (
	"net/http"
	"slices"
	"strings"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// The roles of the staff pool, as its groups are named.
const (
	Operator = "operator"
	Admin    = "admin"
)

// Member is the signed-in staff member: their email, who they are in the
// console (console.md: "The acting person ... is their email"), and the
// groups of the pool they are in (admin, operator; none for a person in
// neither, who may sign in and do nothing else).
type Member struct {
	Email  string   `json:"email"`
	Groups []string `json:"groups"`
}

// Is reports whether m is in the group role.
func (m Member) Is(role string) bool { return slices.Contains(m.Groups, role) }

// ErrNotStaff is the answer to a request without the claims of a staff
// pool's id token: one not sent through the JWT authorizer (a direct
// invocation), or with an access token, which carries no email. The
// console sends the id token.
var ErrNotStaff = stampduty.Errorf(stampduty.EUNAUTHORIZED, "Missing or invalid credentials")

// The answers to a signed-in person without the role a route needs.
var (
	errNotOperator = stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden: this needs the operator or admin role")
	errNotAdmin    = stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden: this needs the admin role")
)

// SignedIn returns the staff member whose id token API Gateway's JWT
// authorizer verified for r (requestContext.authorizer.jwt.claims). The
// request's log line names them by their pool's sub, an opaque id: an
// email is personal data, which no log line holds.
func SignedIn(r *http.Request) (Member, error) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.JWT == nil {
		return Member{}, ErrNotStaff
	}
	c := rc.Authorizer.JWT.Claims
	if c["token_use"] != "id" || c["email"] == "" || c["sub"] == "" {
		return Member{}, ErrNotStaff
	}
	function.SetCaller(r.Context(), "staff "+c["sub"])
	return Member{Email: c["email"], Groups: groups(c["cognito:groups"])}, nil
}

// groups reads the cognito:groups claim as API Gateway passes it, a list
// rendered as "[admin operator]" (none: "" or "[]"), into the group names.
func groups(claim string) []string {
	inner := strings.TrimSuffix(strings.TrimPrefix(claim, "["), "]")
	out := strings.Fields(inner)
	if out == nil {
		out = []string{}
	}
	return out
}

// Serve is a console route's work for the person acting, by their email.
type Serve func(r *http.Request, by string) (any, error)

// AsOperator serves a route for a signed-in member of the operator or admin
// group, checked before serve runs (so a refused request reads no table).
func AsOperator(serve Serve) func(r *http.Request) (any, error) {
	return as(serve, errNotOperator, Operator, Admin)
}

// AsAdmin serves a route for a signed-in member of the admin group.
func AsAdmin(serve Serve) func(r *http.Request) (any, error) {
	return as(serve, errNotAdmin, Admin)
}

// as serves r with serve for a signed-in member of one of roles, else
// ErrNotStaff (401) or refused (403).
func as(serve Serve, refused error, roles ...string) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		m, err := SignedIn(r)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(roles, m.Is) {
			return nil, refused
		}
		return serve(r, m.Email)
	}
}

// Sub returns the pool's sub of the staff member signed in for r (the
// opaque id their request's log line names them by), "" when none: what an
// admin's ledger entries record of them (accounts.md: "logged with the
// admin's sub").
func Sub(r *http.Request) string {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.JWT == nil {
		return ""
	}
	return rc.Authorizer.JWT.Claims["sub"]
}

// RequestID returns API Gateway's id of request r, "" when none.
func RequestID(r *http.Request) string {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok {
		return ""
	}
	return rc.RequestID
}
