// Command not-found is the Lambda function behind the HTTP API's $default
// route: every request no route of template.yaml takes gets the Strapi
// envelope — 405 MethodNotAllowedError for a path the API has with another
// method, 404 NotFoundError otherwise — instead of API Gateway's bare
// {"message":"Not Found"}.
package main

import (
	"net/http"

	"stampduty/shared/function"
)

// wire serves the routes of the template (routes.go, generated from
// template.yaml); it needs no table and no setting.
func wire(function.Deps) http.Handler {
	return (&handler{routes: templateRoutes()}).serve()
}

func main() { function.Main(wire) }
