// Command console-pages is the Lambda function that serves the staff
// console's pages at /console/: one HTML shell, its stylesheet, its one
// ES module and its icon, built into the binary (go:embed), and the small
// config.json that tells the page where to sign in (the staff pool's
// Cognito endpoint, region and app client). It reads no table: the pages
// are public shells; the data is behind the JWT authorizer, on
// ConsoleFunction's /api/console/... routes.
package main

import (
	"net/http"

	"stampduty/shared/function"
)

func main() { function.Main(wire) }

// wire serves the pages with the sign-in settings of the environment.
func wire(d function.Deps) http.Handler { return pages(signInConfig(d.Env)) }
