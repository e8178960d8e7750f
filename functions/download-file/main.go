// Command download-file is the Lambda function behind GET
// /api/files/{token}: it sends the client of one of the service's download
// links on to a fresh pre-signed S3 address of the file.
package main

import (
	"net/http"

	"stampduty/shared/files"
	"stampduty/shared/function"
)

func main() { function.Main(wire) }

// wire follows the links signed under FILES_LINK_KEY to the files of
// FILES_BUCKET.
func wire(d function.Deps) http.Handler {
	return (&handler{files: files.Open(d.Env).WithLinks(files.Links(d.Env))}).routes()
}
