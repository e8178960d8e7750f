package apigw

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
	"github.com/golang-jwt/jwt/v5"

	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/samtemplate"
)

// cognitoPool is the template's staff pool created in a real local
// Cognito (cognito-local), with the local staff, and the authorizer the
// template defines for it.
type cognitoPool struct {
	client   *cip.Client
	pool     string // the pool's id
	clientID string // the console's app client
	auth     localcognito.Authorizer
}

// newCognitoPool creates the template's pool, client and groups (with
// ConsoleMfa OFF, as the local stack runs) in the server at endpoint.
func newCognitoPool(t *testing.T, ctx context.Context, endpoint string) cognitoPool {
	t.Helper()
	_, tmpl := localcognito.LocalTemplate(t)
	client := localcognito.Client(endpoint)
	pools, err := localcognito.CreatePools(ctx, client, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if err := localcognito.CreateStaff(ctx, client, tmpl, pools); err != nil {
		t.Fatal(err)
	}
	auths, err := localcognito.Authorizers(tmpl, pools, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return cognitoPool{client: client, pool: pools.Names[tmpl.UserPools[0].LogicalID],
		clientID: pools.Names[tmpl.UserPoolClients[0].LogicalID], auth: auths["ConsoleAuthorizer"]}
}

// signIn signs account in to the app client clientID of p's server.
func (p cognitoPool) signIn(t *testing.T, ctx context.Context, clientID string, a localcognito.Account) localcognito.Tokens {
	t.Helper()
	tok, err := localcognito.SignIn(ctx, p.client, clientID, a.Email, a.Password)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// otherClient creates another app client of p's pool whose tokens last
// validity (seconds) and returns its id.
func (p cognitoPool) otherClient(t *testing.T, ctx context.Context, validity int32) string {
	t.Helper()
	out, err := p.client.CreateUserPoolClient(ctx, &cip.CreateUserPoolClientInput{
		UserPoolId: aws.String(p.pool), ClientName: aws.String("other"),
		ExplicitAuthFlows:   []types.ExplicitAuthFlowsType{types.ExplicitAuthFlowsTypeAllowUserPasswordAuth},
		AccessTokenValidity: aws.Int32(validity), IdTokenValidity: aws.Int32(validity),
		TokenValidityUnits: &types.TokenValidityUnitsType{AccessToken: types.TimeUnitsTypeSeconds, IdToken: types.TimeUnitsTypeSeconds},
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.UserPoolClient.ClientId)
}

// reencode returns token with its header and payload changed by edit,
// its signature kept.
func reencode(t *testing.T, token string, edit func(header, payload map[string]any)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	var header, payload map[string]any
	for i, v := range []*map[string]any{&header, &payload} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err == nil {
			err = json.Unmarshal(b, v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	edit(header, payload)
	for i, v := range []map[string]any{header, payload} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = base64.RawURLEncoding.EncodeToString(b)
	}
	return strings.Join(parts, ".")
}

// TestJWTAuthorizer runs the template's ConsoleAuthorizer against a real
// local Cognito (cognito-local): the pool's own id and access tokens
// reach the function with their claims as API Gateway passes them, and
// every other token is refused with API Gateway's 401 before the function
// runs.
func TestJWTAuthorizer(t *testing.T) {
	ctx := t.Context()
	root, err := samtemplate.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := localcognito.Start(ctx, root, "", testLog{t})
	localserver.Require(t, err) // skipped without cognito-local, but in CI
	t.Cleanup(srv.Stop)
	p := newCognitoPool(t, ctx, srv.Endpoint)
	other := newCognitoPool(t, ctx, srv.Endpoint) // a second pool of the same server, with the same keys
	auth, err := NewJWT(ctx, p.auth.IdentitySource, p.auth.Issuer, p.auth.Audience, p.auth.JWKS)
	if err != nil {
		t.Fatal(err)
	}
	fn := newFake()
	api := serve(t, []Route{{Method: "GET", Path: "/api/console/me", Target: fn, JWT: auth}, routeFor("GET /open", fn)}, Options{Log: testLog{t}})
	url := api.URL + "/api/console/me"
	get := func(t *testing.T, authorization string) (*http.Response, []byte) {
		t.Helper()
		h := http.Header{}
		if authorization != "" {
			h.Set("Authorization", authorization)
		}
		return do(t, "GET", url, nil, h)
	}

	admin, operator := localcognito.Staff[0], localcognito.Staff[1]
	adminTokens := p.signIn(t, ctx, p.clientID, admin)
	t.Run("the pool's id token reaches the function with its claims", func(t *testing.T) {
		resp, body := get(t, "Bearer "+adminTokens.ID)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d %s, want 200", resp.StatusCode, body)
		}
		ev := fn.event(t)
		if ev.RequestContext.Authorizer == nil || ev.RequestContext.Authorizer.JWT == nil {
			t.Fatalf("no requestContext.authorizer.jwt in %+v", ev.RequestContext)
		}
		c := ev.RequestContext.Authorizer.JWT.Claims
		for k, want := range map[string]string{"email": admin.Email, "cognito:groups": "[admin]", "token_use": "id",
			"aud": p.clientID, "iss": p.auth.Issuer, "email_verified": "true"} {
			if got := c[k]; got != want {
				t.Errorf("claim %s = %q, want %q", k, got, want)
			}
		}
		if exp := c["exp"]; len(exp) != 10 || strings.ContainsAny(exp, ".e") {
			t.Errorf("claim exp = %q, want seconds in decimal", exp)
		}
		if s := ev.RequestContext.Authorizer.JWT.Scopes; s != nil {
			t.Errorf("scopes = %v, want none (no route asks for scopes)", s)
		}
	})
	t.Run("the pool's access token is accepted by its client_id", func(t *testing.T) {
		tok := p.signIn(t, ctx, p.clientID, operator)
		if resp, body := get(t, tok.Access); resp.StatusCode != http.StatusOK { // without "Bearer " too
			t.Fatalf("status %d %s, want 200", resp.StatusCode, body)
		}
		c := fn.event(t).RequestContext.Authorizer.JWT.Claims
		if got, want := c["client_id"], p.clientID; got != want {
			t.Errorf("claim client_id = %q, want %q", got, want)
		}
		if got, want := c["cognito:groups"], "[operator]"; got != want {
			t.Errorf("claim cognito:groups = %q, want %q", got, want)
		}
	})
	t.Run("a route without the authorizer gets no claims", func(t *testing.T) {
		do(t, "GET", api.URL+"/open", nil, http.Header{"Authorization": {"Bearer " + adminTokens.ID}})
		if a := fn.event(t).RequestContext.Authorizer; a != nil {
			t.Errorf("authorizer = %+v, want none", a)
		}
	})

	expiring := p.signIn(t, ctx, p.otherClient(t, ctx, 1), admin)
	// Each refused token, with why: a part of the www-authenticate
	// header's error_description ("" for no token, which gets none).
	type refusal struct{ authorization, why string }
	refused := map[string]refusal{
		"no token":                                   {"", ""},
		"only the word Bearer":                       {"Bearer ", "malformed"},
		"not a JWT":                                  {"Bearer sdt_LOCALxDEVxTOKENxNEVERxVALIDxONxAWSx00000000", "malformed"},
		"unsigned (alg none)":                        {unsigned(t, adminTokens.ID), "signing method none is invalid"},
		"tampered (its groups changed)":              {reencode(t, p.signIn(t, ctx, p.clientID, operator).ID, func(_, c map[string]any) { c["cognito:groups"] = []string{"admin"} }), "verification error"},
		"tampered (its expiry moved)":                {reencode(t, adminTokens.ID, func(_, c map[string]any) { c["exp"] = time.Now().Add(24 * time.Hour).Unix() }), "verification error"},
		"signed with HS256 by the pool's public key": {hs256WithJWKS(t, adminTokens.ID, p.auth.JWKS), "signing method HS256 is invalid"},
		"without kid":                                {reencode(t, adminTokens.ID, func(h, _ map[string]any) { delete(h, "kid") }), "no kid"},
		"of another pool":                            {other.signIn(t, ctx, other.clientID, admin).ID, "invalid issuer"},
		"of another pool (access)":                   {other.signIn(t, ctx, other.clientID, admin).Access, "invalid issuer"},
		"of another client (audience)":               {p.signIn(t, ctx, p.otherClient(t, ctx, 3600), admin).ID, "valid audience"},
		"of another client (access)":                 {p.signIn(t, ctx, p.otherClient(t, ctx, 3600), admin).Access, "valid audience"},
	}
	// Tokens the server's own key signs (cognito-local ships it) with one
	// claim changed, each refused for that claim; unchanged, accepted.
	resign := func(edit func(c jwt.MapClaims)) string {
		return resigned(t, root, adminTokens.ID, edit)
	}
	t.Run("the pool's key, its claims unchanged, is accepted", func(t *testing.T) {
		if resp, body := get(t, "Bearer "+resign(func(jwt.MapClaims) {})); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d %s, want 200", resp.StatusCode, body)
		}
		fn.event(t)
	})
	hour := time.Now().Add(time.Hour).Unix()
	refused["the pool's key, not valid before an hour"] = refusal{resign(func(c jwt.MapClaims) { c["nbf"] = hour }), "not valid yet"}
	refused["the pool's key, issued in an hour"] = refusal{resign(func(c jwt.MapClaims) { c["iat"] = hour }), "used before issued"}
	refused["the pool's key, without exp"] = refusal{resign(func(c jwt.MapClaims) { delete(c, "exp") }), "exp claim is required"}
	refused["the pool's key, another audience"] = refusal{resign(func(c jwt.MapClaims) { c["aud"] = "another-client" }), "valid audience"}
	time.Sleep(2 * time.Second) // expiring's tokens last a second
	refused["expired"] = refusal{expiring.ID, "expired"}
	refused["expired (access)"] = refusal{expiring.Access, "expired"}
	for name, r := range refused {
		t.Run("refused: "+name, func(t *testing.T) {
			authorization := r.authorization
			if !strings.HasPrefix(authorization, "Bearer ") && authorization != "" {
				authorization = "Bearer " + authorization
			}
			resp, body := get(t, authorization)
			wantMessage(t, resp, body, http.StatusUnauthorized, "Unauthorized")
			fn.notInvoked(t)
			if got := resp.Header.Get("Www-Authenticate"); r.why == "" && got != "" || !strings.Contains(got, r.why) {
				t.Errorf("www-authenticate = %q, want it to say %q", got, r.why)
			}
		})
	}
}

// unsigned returns token with alg none and no signature.
func unsigned(t *testing.T, token string) string {
	t.Helper()
	tok := reencode(t, token, func(h, _ map[string]any) { h["alg"] = "none" })
	return tok[:strings.LastIndex(tok, ".")+1]
}

// resigned returns token's claims, changed by edit, signed with the key
// cognito-local signs every pool's tokens with (its
// lib/keys/cognitoLocal.private.json, kid CognitoLocal).
func resigned(t *testing.T, root, token string, edit func(c jwt.MapClaims)) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.Dir(filepath.Dir(localcognito.StartPath)), "keys", "cognitoLocal.private.json"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct{ PEM string }
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM([]byte(k.PEM))
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		t.Fatal(err)
	}
	edit(claims)
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "CognitoLocal"
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hs256WithJWKS returns token's claims signed with HS256 keyed by the
// pool's JWKS document: the algorithm-confusion attack on verifiers that
// take a token's alg at its word.
func hs256WithJWKS(t *testing.T, token, jwks string) string {
	t.Helper()
	resp, err := http.Get(jwks)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		t.Fatal(err)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	tok.Header["kid"] = "CognitoLocal"
	s, err := tok.SignedString([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestClaimStrings renders claims as API Gateway passes them.
func TestClaimStrings(t *testing.T) {
	var c jwt.MapClaims
	d := json.NewDecoder(strings.NewReader(`{"exp":1700000000,"big":12345678901234,"ok":true,"groups":["admin","operator"],"none":null,"obj":{"a":1},"s":"x y"}`))
	d.UseNumber()
	if err := d.Decode(&c); err != nil {
		t.Fatal(err)
	}
	got := claimStrings(c)
	want := map[string]string{"exp": "1700000000", "big": "12345678901234", "ok": "true", "groups": "[admin operator]", "obj": `{"a":1}`, "s": "x y"}
	if len(got) != len(want) {
		t.Errorf("claims %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("claim %s = %q, want %q", k, got[k], w)
		}
	}
}
