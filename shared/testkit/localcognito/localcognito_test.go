package localcognito

import (
	"context"
	"testing"

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
