package localcognito

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"stampduty/shared/testkit/samtemplate"
)

// TestStaffSignIn starts cognito-local, creates the template's pool,
// client and groups and the local staff, and signs each in: the tokens
// name the issuer Authorizers maps the template's to, the audience its
// client, and the account's group.
func TestStaffSignIn(t *testing.T) {
	ctx := context.Background()
	root, tmpl := LocalTemplate(t)
	srv, client, pools := startWithPools(t, root, tmpl, nil)
	if err := CreateStaff(ctx, client, tmpl, pools); err != nil {
		t.Fatal(err)
	}
	auths, err := Authorizers(tmpl, pools, srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	auth, ok := auths["ConsoleAuthorizer"]
	if !ok {
		t.Fatalf("no ConsoleAuthorizer in %v", auths)
	}
	clientID := pools.Names[tmpl.UserPoolClients[0].LogicalID]
	for _, a := range Staff {
		t.Run(a.Group, func(t *testing.T) {
			tok, err := SignIn(ctx, client, clientID, a.Email, a.Password)
			if err != nil {
				t.Fatal(err)
			}
			id, access := Claims(t, tok.ID), Claims(t, tok.Access)
			if got, want := id["iss"], auth.Issuer; got != want {
				t.Errorf("id token iss = %v, want %v", got, want)
			}
			if got, want := id["aud"], clientID; got != want {
				t.Errorf("id token aud = %v, want %v", got, want)
			}
			if got, want := access["client_id"], clientID; got != want {
				t.Errorf("access token client_id = %v, want %v", got, want)
			}
			if got, want := id["email"], a.Email; got != want {
				t.Errorf("id token email = %v, want %v", got, want)
			}
			if got, ok := id["cognito:groups"].([]any); !ok || len(got) != 1 || got[0] != a.Group {
				t.Errorf("id token cognito:groups = %v, want [%s]", id["cognito:groups"], a.Group)
			}
		})
	}
	t.Run("a wrong password is refused", func(t *testing.T) {
		if _, err := SignIn(ctx, client, clientID, Staff[0].Email, Staff[0].Password+"x"); err == nil {
			t.Error("signed in with a wrong password")
		}
	})
}

// TestCheckPassword holds a password to each rule of a policy.
func TestCheckPassword(t *testing.T) {
	policy := samtemplate.PasswordPolicy{MinimumLength: 12, RequireLowercase: true, RequireUppercase: true, RequireNumbers: true, RequireSymbols: true}
	for pw, ok := range map[string]bool{
		"Local-admin-password-1": true,
		"Short-1a":               false, // 8 characters
		"local-admin-password-1": false, // no upper case
		"LOCAL-ADMIN-PASSWORD-1": false, // no lower case
		"Local-admin-password-x": false, // no number
		"Localadminpassword1":    false, // no symbol
	} {
		if err := CheckPassword(policy, pw); (err == nil) != ok {
			t.Errorf("CheckPassword(%q) = %v, want ok %v", pw, err, ok)
		}
	}
}

// TestSignUp: the local Cognito refuses SignUp on the template's staff
// pool, which allows only administrators to create users, as Cognito
// does; on a pool that allows it, SignUp goes through to cognito-local:
// the front reads each pool's own setting.
func TestSignUp(t *testing.T) {
	tp := NewTestPool(t)
	t.Run("refused on the staff pool, as Cognito refuses it", func(t *testing.T) {
		WantSignUpRefused(t, tp.Endpoint, tp.PoolID, tp.ClientID)
	})
	t.Run("refused however cognito-local would read it", func(t *testing.T) {
		json := func(client string) string {
			return `{"ClientId":"` + client + `","clientid":"decoy","Username":"other@example.com","Password":"Self-signed-password-1"}`
		}
		for _, c := range []struct{ name, target, contentType, body string }{
			{"another service prefix", "Anything.SignUp", "application/x-amz-json-1.1", json(tp.ClientID)},
			{"a decoy key of another case", signUpTarget, "application/x-amz-json-1.1", json(tp.ClientID)},
			{"a form", signUpTarget, "application/x-www-form-urlencoded",
				"ClientId=" + tp.ClientID + "&Username=other%40example.com&Password=Self-signed-password-1"},
		} {
			req, err := http.NewRequestWithContext(t.Context(), "POST", tp.Endpoint+"/", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Amz-Target", c.target)
			req.Header.Set("Content-Type", c.contentType)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || string(b) != SignUpRefusal {
				t.Errorf("%s: %d %s, want 400 %s", c.name, resp.StatusCode, b, SignUpRefusal)
			}
		}
		users, err := tp.Client.ListUsers(t.Context(), &cip.ListUsersInput{UserPoolId: aws.String(tp.PoolID)})
		if err != nil || len(users.Users) != 0 {
			t.Errorf("the staff pool has %d users (%v), want none", len(users.Users), err)
		}
	})
	t.Run("allowed on a pool that allows it", func(t *testing.T) {
		ctx := t.Context()
		pool, err := tp.Client.CreateUserPool(ctx, &cip.CreateUserPoolInput{PoolName: aws.String("open"),
			UsernameAttributes:    []types.UsernameAttributeType{types.UsernameAttributeTypeEmail},
			AdminCreateUserConfig: &types.AdminCreateUserConfigType{AllowAdminCreateUserOnly: false}})
		if err != nil {
			t.Fatal(err)
		}
		client, err := tp.Client.CreateUserPoolClient(ctx, &cip.CreateUserPoolClientInput{UserPoolId: pool.UserPool.Id, ClientName: aws.String("open")})
		if err != nil {
			t.Fatal(err)
		}
		status, _, body := SignUp(t, tp.Endpoint, aws.ToString(client.UserPoolClient.ClientId), "self-signed@example.com", "Self-signed-password-1")
		if status != http.StatusOK || !strings.Contains(body, `"UserSub"`) {
			t.Errorf("SignUp: %d %s, want 200 with the new user", status, body)
		}
	})
}
