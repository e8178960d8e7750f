// Command account is the Lambda function behind the caller's account
// (accounts.md, Caller endpoints): GET and PUT /api/account, GET
// /api/account/entries, GET /api/account/entries.csv, GET
// /api/account/statements/{month} and POST /api/account/test-credits, for
// the owner of the bearer token each request carries (a test token acts on
// its test principal's own account).
package main

import (
	"net/http"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/files"
	"stampduty/shared/function"
)

func main() { function.Main(wire) }

// wire serves the caller's account over the ledger table, and its CSV
// exports through the files bucket (written under files.ExportPrefix,
// handed out by a pre-signed address).
func wire(d function.Deps) http.Handler {
	ledger := d.Ledger(d.Require("LEDGER_TABLE"))
	caller := &accounts.Caller{Ledger: &accounts.Ledger{Store: ledger, Now: time.Now}, Reads: ledger}
	return (&handler{auth: d.Authenticator(), accounts: caller, files: files.Open(d.Env), newKey: newKey}).routes()
}
