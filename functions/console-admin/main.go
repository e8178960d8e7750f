// Command console-admin is the Lambda function behind the staff console's
// admin routes (console.md: callers and their tokens, the catalogue, staff
// accounts; accounts.md: the callers' accounts), which API Gateway's JWT
// authorizer (ConsoleAuthorizer) lets through only with a valid token of
// the staff pool, and which serve only a member of the admin group. A function apart from ConsoleFunction, so that
// the operators' routes hold no grant to write tokens, articles or accounts.
package main

import (
	"fmt"
	"net/http"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/auth"
	"stampduty/shared/callers"
	"stampduty/shared/function"
	"stampduty/shared/webhooks"
)

// wire serves the admin routes over the callers' workflows (the tokens
// table, the orders table to count a caller's orders, and the token
// hashing key to issue tokens), the catalogue's (catalogueWorkflows), the
// staff's (the Cognito user pool, staffPool) and the accounts'
// (accountWorkflows).
func wire(d function.Deps) http.Handler { return newHandler(d).routes() }

// newHandler builds the admin routes' handler: wire's.
func newHandler(d function.Deps) *handler {
	return &handler{
		callers: &callers.Admin{Tokens: d.Tokens(d.Require("TOKENS_TABLE")), Orders: d.Orders(d.Require("ORDERS_TABLE")),
			Hasher: auth.HasherFromEnv(d.Env), Now: time.Now},
		catalogue: catalogueWorkflows(d),
		staff:     staffPool(d.Env),
		accounts:  accountWorkflows(d),
	}
}

// accountWorkflows returns the admins' workflows on the callers' accounts
// over the ledger table LEDGER_TABLE names, new callers' accounts opened
// with DEFAULT_CREDIT_LIMIT (the stack's DefaultCreditLimit: "unlimited"
// or money, "0.00"; anything else stops the function at init), telling
// the account events to the caller's webhooks (WEBHOOKS_TABLE) as delivery
// jobs (DELIVERIES_TABLE).
func accountWorkflows(d function.Deps) staffLedger {
	ledger := d.Ledger(d.Require("LEDGER_TABLE"))
	limit, err := accounts.ParseLimit("DEFAULT_CREDIT_LIMIT", d.Require("DEFAULT_CREDIT_LIMIT"))
	if err != nil {
		d.Env.Fail(fmt.Errorf("DEFAULT_CREDIT_LIMIT: %w (want unlimited or rupees with two decimals)", err))
	}
	l := &accounts.Ledger{Store: ledger, DefaultLimit: limit, Now: time.Now,
		// Credits tell account.credited, and a change that takes available
		// below the threshold account.low_balance (accounts.md, Events).
		Events: &webhooks.Publisher{Hooks: d.Webhooks(d.Require("WEBHOOKS_TABLE")), Jobs: d.Deliveries(d.Require("DELIVERIES_TABLE"))}}
	return staffLedger{
		Staff:   &accounts.Staff{Ledger: l, Refs: ledger.References()},
		entries: ledger.Entries,
		// The CSV reads the range as the caller's export does.
		export: (&accounts.Caller{Ledger: l, Reads: ledger}).Export,
	}
}

func main() { function.Main(wire) }
