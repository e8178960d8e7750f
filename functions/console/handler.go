package main

import (
	"net/http"
	"strings"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// staff is the signed-in staff member: their email, who they are in the
// console (console.md: "The acting person ... is their email"), and the
// groups of the pool they are in (admin, operator; none for a person in
// neither, who may sign in and do nothing else).
type staff struct {
	Email  string   `json:"email"`
	Groups []string `json:"groups"`
}

// meResponse is the body of GET /api/console/me: {"data": <staff>, "meta": {}}.
type meResponse struct {
	Data staff    `json:"data"`
	Meta struct{} `json:"meta"`
}

// handler is the console's JSON endpoints.
type handler struct {
	orders work
	count  counter
}

// routes answers the console's routes.
func (h *handler) routes() http.Handler {
	return function.Routes(append(h.orderRoutes(),
		function.Path{Method: http.MethodGet, Pattern: "/api/console/me", Serve: func(r *http.Request) (any, error) {
			s, err := signedIn(r)
			return meResponse{Data: s}, err
		}},
	)...)
}

// errNotStaff is the answer to a request without the claims of a staff
// pool's id token: one not sent through the JWT authorizer (a direct
// invocation), or with an access token, which carries no email. The
// console sends the id token.
var errNotStaff = stampduty.Errorf(stampduty.EUNAUTHORIZED, "Missing or invalid credentials")

// signedIn returns the staff member whose id token API Gateway's JWT
// authorizer verified for r (requestContext.authorizer.jwt.claims). The
// request's log line names them by their pool's sub, an opaque id: an
// email is personal data, which no log line holds.
func signedIn(r *http.Request) (staff, error) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.JWT == nil {
		return staff{}, errNotStaff
	}
	c := rc.Authorizer.JWT.Claims
	if c["token_use"] != "id" || c["email"] == "" || c["sub"] == "" {
		return staff{}, errNotStaff
	}
	function.SetCaller(r.Context(), "staff "+c["sub"])
	return staff{Email: c["email"], Groups: groups(c["cognito:groups"])}, nil
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
