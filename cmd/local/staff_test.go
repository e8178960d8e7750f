package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localcognito"
)

// checkStaffSignIn: the stack prints each local staff account's email
// and password, and each signs in with them to the local Cognito's
// console client; GET /api/console/me through the stack's API answers
// their email and group from the real ConsoleFunction; and the tokens the
// JWT authorizer must refuse (none, tampered, expired, of another client,
// of another pool of the same server) are 401 before the function ever
// runs. It must run before anything else calls /api/console/me.
func checkStaffSignIn(t *testing.T, s *stack, out *functest.SyncBuffer) {
	ctx := context.Background()
	banner := out.String()
	if len(s.Cognito.Staff) != 2 {
		t.Fatalf("%d staff accounts, want an admin and an operator", len(s.Cognito.Staff))
	}
	client := localcognito.Client(s.Cognito.Endpoint)
	me := func(t *testing.T, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/console/me", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	admin := s.Cognito.Staff[0]
	good, err := localcognito.SignIn(ctx, client, s.Cognito.ClientID, admin.Email, admin.Password)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("RefusedBeforeTheFunctionRuns", func(t *testing.T) {
		// Another client of the staff pool, whose tokens last a second,
		// and a second pool of the same server (the same signing key).
		other, err := client.CreateUserPoolClient(ctx, &cip.CreateUserPoolClientInput{
			UserPoolId: aws.String(s.Cognito.PoolID), ClientName: aws.String("other"),
			ExplicitAuthFlows:   []types.ExplicitAuthFlowsType{types.ExplicitAuthFlowsTypeAllowUserPasswordAuth},
			AccessTokenValidity: aws.Int32(1), IdTokenValidity: aws.Int32(1),
			TokenValidityUnits: &types.TokenValidityUnitsType{AccessToken: types.TimeUnitsTypeSeconds, IdToken: types.TimeUnitsTypeSeconds},
		})
		if err != nil {
			t.Fatal(err)
		}
		short, err := localcognito.SignIn(ctx, client, aws.ToString(other.UserPoolClient.ClientId), admin.Email, admin.Password)
		if err != nil {
			t.Fatal(err)
		}
		pools, err := localcognito.CreatePools(ctx, client, s.tmpl)
		if err == nil {
			err = localcognito.CreateStaff(ctx, client, s.tmpl, pools)
		}
		if err != nil {
			t.Fatal(err)
		}
		foreign, err := localcognito.SignIn(ctx, client, pools.Names[s.tmpl.UserPoolClients[0].LogicalID], admin.Email, admin.Password)
		if err != nil {
			t.Fatal(err)
		}
		head, rest, _ := strings.Cut(good.ID, ".")
		body, sig, _ := strings.Cut(rest, ".")
		claims := localcognito.Claims(t, good.ID)
		claims["cognito:groups"] = []string{"admin", "operator"}
		forged, _ := json.Marshal(claims)
		time.Sleep(1100 * time.Millisecond) // short's tokens expire
		for name, token := range map[string]string{
			"no token":         "",
			"tampered":         head + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + sig,
			"unsigned":         base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"CognitoLocal"}`)) + "." + body + ".",
			"expired":          short.ID,
			"another audience": short.Access, // expired too, and of another client
			"another pool":     foreign.ID,
		} {
			if status, body := me(t, token); status != http.StatusUnauthorized || body != `{"message":"Unauthorized"}` {
				t.Errorf("%s: %d %s, want 401 {\"message\":\"Unauthorized\"}", name, status, body)
			}
		}
		if n := s.pools["ConsoleFunction"].Started(); n != 0 {
			t.Errorf("ConsoleFunction started %d instances for refused tokens, want none", n)
		}
	})

	for _, a := range s.Cognito.Staff {
		t.Run(a.Group, func(t *testing.T) {
			if !strings.Contains(banner, a.Email+"  password "+a.Password) {
				t.Errorf("the output does not show %s's email and password", a.Group)
			}
			tok, err := localcognito.SignIn(ctx, client, s.Cognito.ClientID, a.Email, a.Password)
			if err != nil {
				t.Fatal(err)
			}
			if iss := localcognito.Claims(t, tok.ID)["iss"]; iss != s.Cognito.Issuer {
				t.Errorf("id token of %s: iss %v, want %s", a.Email, iss, s.Cognito.Issuer)
			}
			status, body := me(t, tok.ID)
			if want := `{"data":{"email":"` + a.Email + `","groups":["` + a.Group + `"]},"meta":{}}`; status != http.StatusOK || body != want {
				t.Errorf("GET /api/console/me as %s: %d %s, want 200 %s", a.Email, status, body, want)
			}
		})
	}
	if n := s.pools["ConsoleFunction"].Started(); n == 0 {
		t.Error("ConsoleFunction never ran for the staff's own tokens")
	}
}
