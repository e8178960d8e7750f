package functest

import (
	"context"
	"strings"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
)

// CheckCallerTokensRefused checks that every route of the function refuses
// a caller's tokens: a test token and a live one of owner, both real
// (stored in the tokens table, so an authenticator would take them), each
// sent as `Authorization: Bearer` on a request without the authorizer's
// context, as one reaches a function that has not passed the route's
// AWS_IAM or JWT authorizer. Each is answered status in the error envelope
// and makes no DynamoDB call: nothing is read, nothing changed. params
// replaces the routes' path parameters ("{documentId}": an order's id);
// body gives each route the body it is sent ("" for none).
func (s *Stack) CheckCallerTokensRefused(t *testing.T, owner string, status int, params map[string]string, body func(samtemplate.Route) string) {
	t.Helper()
	tokens := s.Env.DB().Tokens(s.Env.Table("TokensTable"))
	hasher := localdb.Hasher()
	for _, mode := range []struct {
		name  string
		test  bool
		token func() (string, string, error)
	}{{"TestToken", true, hasher.NewTestToken}, {"LiveToken", false, hasher.NewToken}} {
		secret, hash, err := mode.token()
		if err != nil {
			t.Fatal(err)
		}
		if err := tokens.Create(context.Background(), auth.Token{Hash: hash, Owner: owner, CreatedAt: time.Now().UTC(), Test: mode.test}); err != nil {
			t.Fatal(err)
		}
		var replace []string
		for k, v := range params {
			replace = append(replace, k, v)
		}
		for _, r := range s.Function.Routes {
			if r.Path == samtemplate.DefaultRoute {
				continue
			}
			t.Run(mode.name+"/"+r.Method+r.Path, func(t *testing.T) {
				path := strings.NewReplacer(replace...).Replace(r.Path)
				b := body(r)
				headers := map[string]string{"authorization": "Bearer " + secret}
				if b != "" {
					headers["content-type"] = "application/json"
				}
				ev := Request(r.Method, path, "", headers, b)
				ev.RouteKey, ev.RequestContext.RouteKey = r.Key(), r.Key()
				s.Proxy.Take()
				resp := s.Invoke(ev)
				if got := resp.Status; got != status {
					t.Errorf("status %d, want %d: %s", got, status, resp.Body)
				}
				resp.Error(t)
				if calls := s.Proxy.Take(); len(calls) != 0 {
					t.Errorf("%d DynamoDB calls (%s) for a caller's token; want none", len(calls), s.Env.Operations(calls))
				}
			})
		}
	}
}

// CheckOrderRoutesRefuseCallerTokens is CheckCallerTokensRefused for a
// function serving the routes that work an order and its papers
// (fulfillment.Routes: the operators' API and the console): each route is
// sent what would move, cancel or upload to the caller's own test order (of
// localdb.DevOwner's test principal, stored here), and answered status.
func (s *Stack) CheckOrderRoutesRefuseCallerTokens(t *testing.T, status int) {
	t.Helper()
	o := AddOrders(t, s.Env, stampduty.TestOwnerOf(localdb.DevOwner), 1)[0]
	s.CheckCallerTokensRefused(t, localdb.DevOwner, status,
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
