// Command console-admin is the Lambda function behind the staff console's
// admin routes (console.md: callers and their tokens, the catalogue, staff
// accounts), which API Gateway's JWT authorizer (ConsoleAuthorizer) lets
// through only with a valid token of the staff pool, and which serve only a
// member of the admin group. A function apart from ConsoleFunction, so that
// the operators' routes hold no grant to write tokens, articles or accounts.
package main

import (
	"context"
	"net/http"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/callers"
	"stampduty/shared/catalogue"
	"stampduty/shared/function"
)

// wire serves the admin routes over the callers' workflows (the tokens
// table, the orders table to count a caller's orders, and the token
// hashing key to issue tokens), the catalogue's (the articles table with
// its change log, the counters for a new article's id, and the published
// catalogue), wired as stampctl wires them, and the staff's (the Cognito
// user pool, staffPool).
func wire(d function.Deps) http.Handler {
	arts := d.Articles(d.Require("ARTICLES_TABLE")).WithLog(d.Require("ARTICLE_LOG_TABLE"))
	published := d.Catalogue(d.Require("CATALOGUE_TABLE"))
	return (&handler{
		callers: &callers.Admin{Tokens: d.Tokens(d.Require("TOKENS_TABLE")), Orders: d.Orders(d.Require("ORDERS_TABLE")),
			Hasher: auth.HasherFromEnv(d.Env), Now: time.Now},
		catalogue: &catalogue.Admin{Articles: arts, IDs: d.IDs(d.Require("COUNTERS_TABLE"), articleIDBlock), Now: time.Now,
			Publish: func(ctx context.Context, now time.Time) error {
				_, err := published.Publish(ctx, arts, now)
				return err
			}},
		staff: staffPool(d.Env),
	}).routes()
}

// articleIDBlock is how many article ids an instance reserves at once
// (stampctl's block): articles are added one by one, rarely.
const articleIDBlock = 10

func main() { function.Main(wire) }
