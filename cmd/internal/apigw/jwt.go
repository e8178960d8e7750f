package apigw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// JWT is a JWT authorizer of an HTTP API, checking tokens as API Gateway
// does (its developer guide, "Control access to HTTP APIs with JWT
// authorizers"): the token is read from the identity source header, alone
// or after "Bearer "; its algorithm must be RSA's; its header's kid must
// name a key of the issuer's JWKS, whose signature it must bear; iss must
// be the authorizer's issuer; aud, or client_id when the token has no aud
// (Cognito's access tokens), must be one of its audiences; exp must be
// present and not passed, and nbf and iat, when present, not to come. Any
// other claim, token_use included, is the function's to check: API Gateway
// accepts a pool's id and access tokens alike.
type JWT struct {
	header   string // the identity source's header
	issuer   string
	audience []string
	keys     jwt.Keyfunc
}

// NewJWT returns the authorizer of the tokens issuer signs with the keys
// at jwksURL, for the given audiences, reading the token from the header
// the identity source names ("$request.header.Authorization"). It fetches
// the keys once now, failing when it cannot, and then every hour until
// ctx ends, as API Gateway caches them (for up to two hours); a key id it
// does not know is refused, not fetched.
func NewJWT(ctx context.Context, identitySource, issuer string, audience []string, jwksURL string) (*JWT, error) {
	header, ok := strings.CutPrefix(identitySource, "$request.header.")
	if !ok || header == "" {
		return nil, fmt.Errorf("identity source %q: only $request.header.NAME is served", identitySource)
	}
	store, err := jwkset.NewStorageFromHTTP(jwksURL, jwkset.HTTPClientStorageOptions{
		Ctx: ctx, RefreshInterval: time.Hour, HTTPTimeout: 5 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("the keys of %s at %s: %w", issuer, jwksURL, err)
	}
	keys, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: store})
	if err != nil {
		return nil, fmt.Errorf("the keys of %s: %w", issuer, err)
	}
	return &JWT{header: header, issuer: issuer, audience: audience, keys: keys.Keyfunc}, nil
}

// rsaMethods are the algorithms API Gateway accepts: RSA's only.
var rsaMethods = []string{"RS256", "RS384", "RS512"}

// errNoToken is the refusal of a request without the identity source.
var errNoToken = errors.New("no token in the identity source")

// verify checks the token of r at now and returns its claims as API
// Gateway passes them to the function, or why it refuses the token.
func (a *JWT) verify(r *http.Request, now time.Time) (map[string]string, error) {
	raw := strings.TrimSpace(r.Header.Get(a.header))
	if t, ok := strings.CutPrefix(raw, "Bearer "); ok {
		raw = strings.TrimSpace(t)
	}
	if raw == "" {
		return nil, errNoToken
	}
	parser := jwt.NewParser(jwt.WithValidMethods(rsaMethods), jwt.WithIssuer(a.issuer), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithJSONNumber(), jwt.WithTimeFunc(func() time.Time { return now }))
	claims := jwt.MapClaims{}
	keyOf := func(t *jwt.Token) (any, error) {
		if kid, _ := t.Header["kid"].(string); kid == "" {
			return nil, errors.New("the token's header has no kid")
		}
		return a.keys(t)
	}
	if _, err := parser.ParseWithClaims(raw, claims, keyOf); err != nil {
		return nil, err
	}
	aud, err := claims.GetAudience()
	if err != nil {
		return nil, err
	}
	if len(aud) == 0 {
		// API Gateway reads client_id only when the token has no aud.
		clientID, _ := claims["client_id"].(string)
		aud = jwt.ClaimStrings{clientID}
	}
	if !slices.ContainsFunc(aud, func(s string) bool { return slices.Contains(a.audience, s) }) {
		return nil, errors.New("the token does not have a valid audience")
	}
	return claimStrings(claims), nil
}

// claimStrings renders claims as API Gateway passes them in
// requestContext.authorizer.jwt.claims (payload 2.0), every value a
// string: a number in decimal as written (1700000000, not 1.7e+09), true
// or false, a list as its items between brackets separated by spaces
// (cognito:groups ["admin","operator"] is "[admin operator]"), an object
// as its JSON; a null claim is left out.
func claimStrings(claims jwt.MapClaims) map[string]string {
	out := make(map[string]string, len(claims))
	for _, k := range slices.Sorted(maps.Keys(claims)) {
		if v, ok := claimString(claims[k]); ok {
			out[k] = v
		}
	}
	return out
}

// claimString renders one claim's value, false for null.
func claimString(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return fmt.Sprint(v), true
	case []any:
		items := make([]string, 0, len(v))
		for _, item := range v {
			if s, ok := claimString(item); ok {
				items = append(items, s)
			}
		}
		return "[" + strings.Join(items, " ") + "]", true
	}
	b, err := json.Marshal(v)
	return string(b), err == nil
}

// refuse writes API Gateway's refusal of a request its JWT authorizer did
// not authorize: 401 {"message":"Unauthorized"}, with the
// www-authenticate header API Gateway adds to an invalid token's.
func refuse(w http.ResponseWriter, err error) int {
	if !errors.Is(err, errNoToken) {
		desc := strings.ReplaceAll(err.Error(), `"`, `'`)
		w.Header().Set("Www-Authenticate", fmt.Sprintf(`Bearer scope="" error="invalid_token" error_description=%q`, desc))
	}
	return writeMessage(w, http.StatusUnauthorized, "Unauthorized")
}
